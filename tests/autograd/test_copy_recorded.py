"""Copies taken under ``autograd.record()`` are in the graph, as MXNet records ``_copyto``
and ``Cast``: ``copy``, ``copyto`` (a context or an array), ``as_in_context`` and
``astype`` pass the gradient back to the source (cast back to its dtype); so do
``nd.array(x)`` and ``y[:] = x`` (MXNet's ``__setitem__`` of the whole array is
``x.copyto(y)``, after ``broadcast_to`` when the shapes differ)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx

COPIES = {
    "copy": lambda x: x.copy(),
    "copyto_context": lambda x: x.copyto(mx.cpu()),
    "copyto_other_cpu": lambda x: x.copyto(mx.cpu(1)),
    "as_in_context": lambda x: x.as_in_context(mx.cpu(1)),
    "astype_float64": lambda x: x.astype("float64"),
    "astype_float16": lambda x: x.astype("float16"),
    "nd_array": lambda x: mx.nd.array(x),
    "nd_array_float64": lambda x: mx.nd.array(x, dtype="float64"),
    "setitem_whole": lambda x: _assigned(x, slice(None)),
    "setitem_ellipsis": lambda x: _assigned(x, Ellipsis),
}


def _assigned(x, key):
    y = mx.nd.zeros(x.shape)
    y[key] = x
    return y


def test_whole_assignment_broadcasts_and_sums_the_gradient() -> None:
    # MXNet 1.9.1: b = zeros((2, 3)); b[:] = a; (b * 9).sum() -> a.grad == [18, 18, 18]
    a = mx.nd.array([1.0, 2.0, 3.0])
    a.attach_grad()
    with mx.autograd.record():
        b = mx.nd.zeros((2, 3))
        b[:] = a
        y = (b * 9).sum()
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [18, 18, 18])


def test_partial_assignment_from_a_recorded_array_is_refused() -> None:
    # MXNet refuses it too (_slice_assign reads the target): "Inplace operations ..."
    a = mx.nd.array([1.0, 2.0, 3.0])
    a.attach_grad()
    with mx.autograd.record():
        b = mx.nd.zeros(3)
        with pytest.raises(mx.base.MXNetError, match="Inplace operations"):
            b[1:] = a[:2]


@pytest.mark.parametrize("name", sorted(COPIES))
def test_gradient_flows_through_copy(name: str) -> None:
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = COPIES[name](x)
        loss = (y * y).sum()
    loss.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0, 6.0], rtol=1e-3)


def test_copyto_an_array_is_recorded() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        z = mx.nd.zeros((2,))
        x.copyto(z)
        loss = (z * 3).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 3.0])


def test_copy_into_an_array_in_the_graph_is_refused() -> None:
    """As MXNet ("Assigning to NDArrays that are already in a computational graph ..."):
    the target is a marked variable, and it is left unchanged."""
    x, v = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
    x.attach_grad()
    v.attach_grad()
    with mx.autograd.record():
        with pytest.raises(mx.base.MXNetError, match="copyto: in-place write"):
            x.copyto(v)
    np.testing.assert_allclose(v.asnumpy(), [0.0, 0.0])


def test_not_recording_leaves_copies_out_of_the_graph() -> None:
    x = mx.nd.array([1.0])
    x.attach_grad()
    y = x.astype("float64")
    with pytest.raises(mx.base.MXNetError, match="not computed under autograd.record"):
        y.backward()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-4, 4, width=32), min_size=1, max_size=6),
       st.sampled_from(["float32", "float64"]), st.booleans())
def test_astype_chain_gradient_is_the_cast_back_output_gradient(vals: list, dtype: str, twice: bool) -> None:
    x = mx.nd.array(vals)
    x.attach_grad()
    head = mx.nd.array(np.arange(1, len(vals) + 1), dtype=dtype)
    with mx.autograd.record():
        y = x.astype(dtype)
        if twice:
            y = y.astype("float32").astype(dtype)
    y.backward(head)
    np.testing.assert_allclose(x.grad.asnumpy(), np.arange(1, len(vals) + 1, dtype=np.float32))
