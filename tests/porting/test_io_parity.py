"""MXNet 1.9.1 io behaviours found by running MXNet's own tests (test_loss.py)."""
import numpy as np
import pytest

import plexnet as mx


def test_ndarrayiter_counts_examples_of_the_first_data_array():
    # MXNet's test_loss.test_sample_weight_loss iterates 10 examples with 20-entry labels
    it = mx.io.NDArrayIter(mx.nd.arange(10).reshape((10, 1)),
                           {"label": mx.nd.arange(20), "w": mx.nd.arange(20)}, batch_size=4)
    got = [(b.data[0].asnumpy().ravel().tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it]
    assert got[0] == ([0, 1, 2, 3], [0, 1, 2, 3], 0)
    assert got[1] == ([4, 5, 6, 7], [4, 5, 6, 7], 0)
    assert got[2][0] == [8, 9, 0, 1] and got[2][2] == 2
    assert it.num_data == 10


def test_ndarrayiter_shorter_label_is_refused():
    with pytest.raises(ValueError, match="at least as many examples"):
        mx.io.NDArrayIter(np.zeros((5, 2)), np.zeros(4), 2)


def test_csviter_getdata_is_one_ndarray(tmp_path):
    # MXNet's C++ iterators (MXDataIter): getdata()/getlabel() return one NDArray and next()
    # wraps each in a list (test_io.test_CSVIter); NDArrayIter keeps lists
    (tmp_path / "d.csv").write_text("1,2,3\n4,5,6\n7,8,9\n")
    (tmp_path / "l.csv").write_text("0\n1\n2\n")
    it = mx.io.CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(3,), label_csv=str(tmp_path / "l.csv"),
                       batch_size=2)
    assert it.iter_next()
    assert isinstance(it.getdata(), mx.nd.NDArray) and isinstance(it.getlabel(), mx.nd.NDArray)
    assert it.getdata().asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    assert it.getlabel().asnumpy().tolist() == [0, 1]
    it.reset()
    batch = it.next()
    assert isinstance(batch.data, list) and len(batch.data) == 1 and len(batch.label) == 1
    assert batch.data[0].asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]] and batch.pad == 0


def test_mnistiter_getdata_is_one_ndarray(tmp_path):
    import struct
    imgs, labels = tmp_path / "img", tmp_path / "lbl"
    imgs.write_bytes(struct.pack(">IIII", 2051, 4, 2, 2) + bytes(range(16)))
    labels.write_bytes(struct.pack(">II", 2049, 4) + bytes([3, 1, 4, 1]))
    it = mx.io.MNISTIter(image=str(imgs), label=str(labels), batch_size=2, shuffle=False, flat=True)
    assert it.iter_next()
    assert isinstance(it.getdata(), mx.nd.NDArray) and it.getdata().shape == (2, 4)
    assert it.getlabel().asnumpy().tolist() == [3, 1]
    it.reset()
    assert [b.label[0].asnumpy().tolist() for b in it] == [[3, 1], [4, 1]]
