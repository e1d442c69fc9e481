"""Behaviours of MXNet 1.9.1's ``mx.nd`` found missing by running MXNet's own
test_ndarray.py against plexnet (values checked with MXNet 1.9.1)."""
import warnings

import numpy as np
import pytest

import plexnet as mx


def test_bool_of_empty_array_is_false():
    assert not bool(mx.nd.array([]))
    assert not bool(mx.nd.zeros((1,)))
    assert bool(mx.nd.ones((1,)))
    with pytest.raises(ValueError):
        bool(mx.nd.ones((2, 3)))


def test_index_with_tuple_of_ndarrays():
    a = mx.nd.array([[0, 1], [2, 3]])
    assert a[[1, 1, 0], [0, 1, 0]].asnumpy().tolist() == [2, 3, 0]
    assert a[mx.nd.array([1, 1, 0]), mx.nd.array([0, 1, 0])].asnumpy().tolist() == [2, 3, 0]
    a[mx.nd.array([0, 1]), mx.nd.array([1, 0])] = 9
    assert a.asnumpy().tolist() == [[0, 9], [9, 3]]


def test_load_frombuffer_roundtrip_and_truncation(tmp_path):
    data = {"a": mx.nd.arange(6).reshape((2, 3)), "b": mx.nd.ones((4,), dtype="int32")}
    fname = str(tmp_path / "d.params")
    mx.nd.save(fname, data)
    buf = open(fname, "rb").read()
    back = mx.nd.load_frombuffer(buf)
    assert sorted(back) == ["a", "b"]
    assert back["a"].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back["b"].dtype == np.int32
    mx.nd.save(fname, [mx.nd.ones((2,))])
    assert len(mx.nd.load_frombuffer(open(fname, "rb").read())) == 1
    with pytest.raises(mx.base.MXNetError):
        mx.nd.load_frombuffer(buf[:-10])


def test_nd_internal_namespace():
    x = mx.nd.ones((2, 3))
    assert mx.nd._internal._plus_scalar(x, scalar=2).asnumpy().tolist() == [[3.0] * 3] * 2
    with pytest.raises(AttributeError):
        mx.nd._internal._no_such_operator


def test_moveaxis_bounds():
    x = mx.nd.zeros((2, 2, 3))
    assert mx.nd.moveaxis(x, 0, 2).shape == (2, 3, 2)
    assert mx.nd.moveaxis(x, 2, 0).shape == (3, 2, 2)
    with pytest.raises(ValueError):
        mx.nd.moveaxis(x, 0, 3)


def test_topk_mask_on_inner_axis():
    a = np.random.RandomState(0).permutation(4 * 5 * 3).reshape(4, 5, 3).astype(np.float32)
    m = mx.nd.topk(mx.nd.array(a), axis=1, ret_typ="mask", k=2).asnumpy()
    ref = np.zeros_like(a)
    idx = np.argsort(-a, axis=1)[:, :2, :]
    np.put_along_axis(ref, idx, 1, axis=1)
    assert m.shape == a.shape and (m == ref).all()


def test_broadcast_like_empty_axes_rejected():
    lhs, rhs = mx.nd.ones((1, 2)), mx.nd.ones((3, 2))
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,), rhs_axes=(0,)).shape == (3, 2)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=()).wait_to_read()


def test_assign_value_of_the_indexed_size_whatever_its_shape():
    # MXNet's test_assign_float_value_to_ndarray (issue 8668) and scalar-index assignment
    a = np.array([47.844944], dtype=np.float32)
    b = mx.nd.zeros(1, dtype=np.float32)
    b[0] = a
    assert b.asnumpy().tolist() == a.tolist()
    x = mx.nd.zeros((2, 3, 4), dtype="int32")
    x[1, 2, 3] = [-7]
    assert x.asnumpy()[1, 2, 3] == -7
    with pytest.raises((ValueError, TypeError)):  # a size mismatch is still refused
        x[1, 2, 3] = [1, 2]


def test_one_element_value_into_one_element_is_silent_on_every_numpy():
    # numpy 1.25-2.3 warn on arr[i] = [v] (DeprecationWarning), 2.4 refuses it: plexnet reshapes first
    x = mx.nd.zeros((2, 3), dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[1, 2] = np.array([1.5], dtype=np.float32)
        x[0, 0] = [[2]]
        x[0, 1] = (3,)
        x[1] = [4]  # a row from one element: numpy's broadcast
    assert x.asnumpy().tolist() == [[2, 3, 0], [4, 4, 4]]
    with pytest.raises((ValueError, TypeError)):
        x[0, 0] = [[1, 2]]


def test_internal_slice_and_crop_assign():
    # values from MXNet 1.9.1 (test_ndarray.test_ndarray_crop uses the _crop_assign names)
    x = mx.nd.ones((2, 3, 4))
    r = mx.nd._internal._crop_assign(x, mx.nd.zeros((2, 1, 3)), begin=(0, 0, 0), end=(2, 1, 3))
    assert r.asnumpy()[:, 0].tolist() == [[0, 0, 0, 1]] * 2
    assert (x.asnumpy() == 1).all()  # without out= the input is unchanged
    r = mx.nd._internal._slice_assign_scalar(x, scalar=5, begin=(0, 0, 0), end=(2, 1, 3), step=(1, 1, 1))
    assert r.asnumpy()[:, 0].tolist() == [[5, 5, 5, 1]] * 2
    r = mx.nd._internal._slice_assign(x, mx.nd.zeros((1, 3, 2)), begin=(0, None, None), end=(2, None, None),
                                      step=(2, 1, 2))
    assert r.asnumpy()[0].tolist() == [[0, 1, 0, 1]] * 3 and (r.asnumpy()[1] == 1).all()
    mx.nd._internal._crop_assign_scalar(x, scalar=7, begin=(1, 1, 1), end=(2, 2, 2), out=x)
    assert x.asnumpy()[1, 1, 1] == 7 and x.asnumpy().sum() == 24 + 6


def test_assign_one_element_ndarray_to_a_scalar_position():
    # x[i, j, k] has shape (1,) in MXNet 1.x; assigning such an array back must work
    g = mx.nd.zeros((2, 3, 4))
    g[1, 2, 3] = mx.nd.ones((1,))
    g[0, 1] = mx.nd.ones((1, 4)) * 2
    assert g.asnumpy().sum() == 9.0 and g.asnumpy()[1, 2, 3] == 1.0
