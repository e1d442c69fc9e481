"""NDArrayIter against what Apache MXNet 1.9.1 returned (fixtures/iters_expected.json)."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet.io import DataDesc, NDArrayIter


def _descs(ds):
    return [[d.name, list(d.shape), np.dtype(d.dtype).name, d.layout] for d in ds]


def _check(got, exp):
    assert len(got) == len(exp)
    for g_ep, e_ep in zip(got, exp):
        assert len(g_ep) == len(e_ep), (g_ep, e_ep)
        for g, e in zip(g_ep, e_ep):
            assert g["pad"] == e["pad"]
            assert g["index"] == e["index"]
            assert len(g["data"]) == len(e["data"])
            for a, b in zip(g["data"], e["data"]):
                np.testing.assert_array_equal(a, np.asarray(b, dtype=a.dtype))
            for a, b in zip(g["label"], e["label"]):
                np.testing.assert_array_equal(a, np.asarray(b, dtype=a.dtype))


@pytest.mark.parametrize("handle", ["pad", "discard", "roll_over"])
@pytest.mark.parametrize("n,bs", [(10, 3), (10, 4), (10, 5), (3, 5)])
def test_last_batch_handle_matches_mxnet(iters_expected, collect, handle, n, bs):
    key = f"{handle}/{n}/{bs}"
    if key not in iters_expected["ndarray"]:
        with pytest.raises(ValueError, match="roll_over"):
            NDArrayIter(np.zeros((n, 2)), np.zeros(n), bs, last_batch_handle=handle)
        return
    exp = iters_expected["ndarray"][key]
    data = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    it = NDArrayIter(data, np.arange(n, dtype=np.float32), bs, last_batch_handle=handle)
    assert _descs(it.provide_data) == exp["provide_data"]
    assert _descs(it.provide_label) == exp["provide_label"]
    _check(collect(it, 3), exp["epochs"])


def test_literal_semantics():
    """The MXNet results, spelled out (n=10, batch 3)."""
    d = np.arange(10, dtype=np.float32)

    def firsts(h, epochs=3):
        it = NDArrayIter(d, None, 3, last_batch_handle=h)
        out = []
        for _ in range(epochs):
            out.append([(b.data[0].asnumpy().astype(int).tolist(), b.pad) for b in it])
            it.reset()
        return out

    assert firsts("pad", 1) == [[([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 7, 8], 0), ([9, 0, 1], 2)]]
    assert firsts("discard", 1) == [[([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 7, 8], 0)]]
    assert firsts("roll_over") == [
        [([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 7, 8], 0)],
        [([9, 0, 1], 1), ([2, 3, 4], 0), ([5, 6, 7], 0)],   # pad=1: MXNet's (odd) count
        [([8, 9, 0], 2), ([1, 2, 3], 0), ([4, 5, 6], 0), ([7, 8, 9], 0)],
    ]


def test_shuffle_follows_numpy_global_rng_like_mxnet(iters_expected, collect):
    np.random.seed(42)
    data = np.arange(10, dtype=np.float32).reshape(10, 1)
    it = NDArrayIter(data, data[:, 0], 4, shuffle=True, last_batch_handle="roll_over")
    _check(collect(it, 3), iters_expected["ndarray"]["shuffle_seed42/roll_over/10/4"]["epochs"])


def test_shuffle_keeps_data_and_label_together():
    n = 50
    data = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    it = NDArrayIter(data, data[:, 0] * 2, 7, shuffle=True, last_batch_handle="discard")
    seen = []
    for b in it:
        x, y = b.data[0].asnumpy(), b.label[0].asnumpy()
        np.testing.assert_array_equal(x[:, 0] * 2, y)
        seen += x[:, 0].tolist()
    assert len(set(seen)) == len(seen) == 49


@pytest.mark.parametrize("key", ["dict", "list"])
def test_named_inputs_match_mxnet(iters_expected, collect, key):
    exp = iters_expected["ndarray"][key]
    if key == "dict":
        it = NDArrayIter({"b": np.zeros((5, 2), np.float32), "a": np.ones((5, 3), np.int32)},
                         {"lab": np.arange(5)}, 2)
    else:
        it = NDArrayIter([np.zeros((5, 2)), np.ones((5, 3))], None, 2)
    assert _descs(it.provide_data) == exp["provide_data"]
    assert _descs(it.provide_label) == exp["provide_label"]
    _check(collect(it, 1), exp["epochs"])


def test_ndarray_input_keeps_dtype_and_outputs_ndarrays():
    x = mx.nd.array(np.arange(12).reshape(6, 2), dtype=np.int32)
    it = NDArrayIter(x, batch_size=4)
    assert it.provide_data == [DataDesc("data", (4, 2))]
    assert it.provide_data[0].dtype == np.int32
    b = next(iter(it))
    assert isinstance(b.data[0], mx.nd.NDArray)
    assert b.data[0].dtype == np.int32 and b.data[0].context == mx.cpu()
    assert b.label == []


def test_layout_batch_axis_not_first():
    x = np.arange(2 * 5, dtype=np.float32).reshape(2, 5)  # layout "TN": batch on axis 1
    it = NDArrayIter(x, batch_size=2, layout="TN", last_batch_handle="pad")
    assert it.provide_data[0].shape == (2, 2)
    got = [b.data[0].asnumpy() for b in it]
    np.testing.assert_array_equal(got[0], x[:, 0:2])
    np.testing.assert_array_equal(got[2], x[:, [4, 0]])


def test_errors_are_clear():
    with pytest.raises(ValueError, match="at least as many examples"):
        NDArrayIter(np.zeros((5, 2)), np.zeros(4), 2)
    with pytest.raises(ValueError, match="last_batch_handle"):
        NDArrayIter(np.zeros((5, 2)), batch_size=2, last_batch_handle="wrap")
    with pytest.raises(ValueError, match="batch_size"):
        NDArrayIter(np.zeros((5, 2)), batch_size=0)
    with pytest.raises(ValueError):
        NDArrayIter(None, batch_size=1)


def test_hard_reset_drops_rolled_over_examples():
    it = NDArrayIter(np.arange(10, dtype=np.float32), batch_size=3, last_batch_handle="roll_over")
    list(it)
    it.hard_reset()
    assert next(it).data[0].asnumpy().tolist() == [0, 1, 2]


def test_getters_iter_next_protocol():
    it = NDArrayIter(np.arange(5, dtype=np.float32), np.arange(5), 2)
    assert it.iter_next()
    assert it.getdata()[0].asnumpy().tolist() == [0, 1]
    assert it.getlabel()[0].asnumpy().tolist() == [0, 1]
    assert it.getpad() == 0 and it.getindex() is None
