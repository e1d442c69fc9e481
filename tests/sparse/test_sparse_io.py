"""Sparse data in and out: LibSVMIter, NDArrayIter over csr, nd.save/load of sparse
arrays, KVStore row_sparse_pull. Expected values were printed by MXNet 1.9.1 on the same
files (fixtures/data.libsvm, label.libsvm, mxnet_sparse.params)."""
import os

import numpy as np
import pytest

import plexnet as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
DATA, LABEL = os.path.join(HERE, "data.libsvm"), os.path.join(HERE, "label.libsvm")
ROWS = np.array([[1.5, 0, 0, 2, 0, 0], [0, -1, 0, 0, 0, 0], [0, 0, 3.5, 0, 1, 2], [4, 0, 0, 0, 0, 0],
                 [0, 0, 0, 0, 0, 7]], "float32")
pytestmark = pytest.mark.timeout(120)


def test_libsvm_iter_batches_and_epochs_as_mxnet():
    it = mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), batch_size=2)
    assert [(d.name, d.shape) for d in it.provide_data] == [("data", (2, 6))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("softmax_label", (2,))]
    assert isinstance(it, mx.io.MXDataIter)
    batches = list(it)
    assert [b.data[0].stype for b in batches] == ["csr"] * 3
    assert [b.label[0].stype for b in batches] == ["default"] * 3
    np.testing.assert_array_equal(np.concatenate([b.data[0].asnumpy() for b in batches]), ROWS[[0, 1, 2, 3, 4, 0]])
    # MXNet 1.9.1: round_batch completes the last batch from the start; the next epoch starts after it
    assert [(b.label[0].asnumpy().tolist(), b.pad) for b in batches] == [([1, 0], 0), ([1, -1], 0), ([2, 1], 1)]
    epochs = []
    for _ in range(3):
        it.reset()
        epochs.append([(b.label[0].asnumpy().tolist(), b.pad) for b in it])
    assert epochs == [[([0, 1], 0), ([-1, 2], 0)], [([1, 0], 0), ([1, -1], 0), ([2, 1], 1)],
                      [([0, 1], 0), ([-1, 2], 0)]]


def test_libsvm_iter_label_file_gives_csr_labels():
    it = mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), label_libsvm=LABEL, label_shape=(2,), batch_size=2)
    assert it.provide_label[0].shape == (2, 2)
    got = [(b.label[0].stype, b.label[0].asnumpy().tolist(), b.pad) for b in it]
    assert got == [("csr", [[1, 2], [0, 1]], 0), ("csr", [[3, 0], [0, 4]], 0), ("csr", [[5, 5], [1, 2]], 1)]


def test_libsvm_iter_big_batch_index_and_errors(tmp_path):
    it = mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), batch_size=7)
    b = it.next()
    assert b.pad == 2 and b.index.tolist() == [0, 1, 2, 3, 4, 0, 1]
    with pytest.raises(ValueError, match="round_batch"):
        mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), batch_size=2, round_batch=False)
    with pytest.raises(ValueError, match=r"data.libsvm:1: column index 3 must be in \[0, 3\)"):
        mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(3,), batch_size=2)
    bad = tmp_path / "bad.libsvm"
    bad.write_text("1 2:1 1:3\n")
    with pytest.raises(ValueError, match="ascending"):
        mx.io.LibSVMIter(data_libsvm=str(bad), data_shape=(4,))
    parts = [[b.label[0].asnumpy().tolist() for b in mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,),
                                                                      batch_size=3, num_parts=2, part_index=k)]
             for k in (0, 1)]
    assert parts == [[[1, 0, 1]], [[1, -1, 2]]]  # rows [0, 2) and [2, 5) (plexnet.io.partition)


def test_libsvm_iter_reads_a_directory(tmp_path):
    (tmp_path / "a.libsvm").write_text("1 0:1\n")
    (tmp_path / "b.libsvm").write_text("2 1:2\n")
    b = mx.io.LibSVMIter(data_libsvm=str(tmp_path), data_shape=(2,), batch_size=2).next()
    np.testing.assert_array_equal(b.data[0].asnumpy(), [[1, 0], [0, 2]])
    np.testing.assert_array_equal(b.label[0].asnumpy(), [1, 2])


def test_ndarray_iter_over_csr():
    d = np.array([[0, 1, 0], [2, 0, 0], [0, 0, 3], [4, 5, 0], [0, 0, 0]], "float32")
    c = mx.nd.array(d).tostype("csr")
    it = mx.io.NDArrayIter(c, np.arange(5), batch_size=2, last_batch_handle="discard")
    assert it.provide_data[0].shape == (2, 3)
    batches = list(it)
    assert len(batches) == 2 and all(b.data[0].stype == "csr" for b in batches)
    np.testing.assert_array_equal(np.concatenate([b.data[0].asnumpy() for b in batches]), d[:4])
    np.testing.assert_array_equal(np.concatenate([b.label[0].asnumpy() for b in batches]), np.arange(4))
    for handle in ("pad", "roll_over"):
        with pytest.raises(NotImplementedError, match="only supports ``CSRNDArray`` with `last_batch_handle`"):
            mx.io.NDArrayIter(c, np.arange(5), batch_size=2, last_batch_handle=handle)
    np.random.seed(3)
    it = mx.io.NDArrayIter({"a": c}, {"l": mx.nd.array(np.arange(5))}, batch_size=2, shuffle=True,
                           last_batch_handle="discard")
    for b in it:  # shuffled rows stay paired with their labels
        lab = b.label[0].asnumpy().astype(int)
        np.testing.assert_array_equal(b.data[0].asnumpy(), d[lab])
    assert it.data[0][1].stype == "csr"


def test_load_mxnet_sparse_file_and_save_identical_bytes(tmp_path):
    fname = os.path.join(HERE, "mxnet_sparse.params")
    d = mx.nd.load(fname)
    want = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, -4, 0]], "float32")
    assert {k: v.stype for k, v in d.items()} == {"csr": "csr", "rsp": "row_sparse", "dense": "default",
                                                 "csr_empty": "csr", "rsp64": "row_sparse"}
    for k in ("csr", "rsp", "dense", "rsp64"):
        np.testing.assert_array_equal(d[k].asnumpy(), want)
    assert d["rsp64"].dtype == np.float64 and d["csr_empty"].shape == (2, 5)
    out = tmp_path / "x.params"
    mx.nd.save(str(out), d)
    mine, theirs = out.read_bytes(), open(fname, "rb").read()
    assert mine[:len(theirs)] == theirs  # plexnet appends only its checksum trailer


def test_kvstore_row_sparse_pull():
    kv = mx.kv.create("local")
    w = np.arange(12, dtype="float32").reshape(4, 3)
    kv.init("w", mx.nd.array(w).tostype("row_sparse"))
    out = mx.nd.sparse.zeros("row_sparse", (4, 3))
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([2, 0, 2]))
    assert out.stype == "row_sparse" and out.indices.asnumpy().tolist() == [0, 2]
    np.testing.assert_array_equal(out.data.asnumpy(), w[[0, 2]])
    with pytest.raises(TypeError, match="must be a RowSparseNDArray"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((4, 3)), row_ids=mx.nd.array([1]))
    with pytest.raises(ValueError, match=r"row_ids for key 'w' must be in \[0, 4\)"):
        kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([9]))
    # pull skips sparse outs unless ignore_sparse=False
    o2 = mx.nd.sparse.zeros("row_sparse", (4, 3))
    kv.pull("w", out=o2)
    assert o2.indices.shape == (0,)
    kv.pull("w", out=o2, ignore_sparse=False)
    np.testing.assert_array_equal(o2.asnumpy(), w)


def test_kvstore_lazy_update_with_row_sparse_push():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones((4, 3)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, wd=0.1))
    g = mx.nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), [1]), shape=(4, 3))
    kv.push("w", [g, g])
    d = mx.nd.zeros((4, 3))
    kv.pull("w", out=d)
    np.testing.assert_allclose(d.asnumpy(), [[1] * 3, [0.79] * 3, [1] * 3, [1] * 3], rtol=1e-6)
