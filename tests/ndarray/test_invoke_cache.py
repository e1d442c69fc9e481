"""nd's generic operator path caches what does not change per call (``ndarray/invoke.py``):
the property per operator and parameters, inference per input signature, the operator per
context. These tests check that the caches never change behaviour: errors on every call,
results per shape, parameters of different types, registry changes, stateful operators,
``out=``, recording, small calls on the calling thread."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, nd
from plexnet.base import ShapeError
from plexnet.ndarray import invoke as inv
from plexnet.operator import Operator, OperatorProperty, assign
from plexnet.plugins import get_manager

PLUGIN = "invoke-cache-test-plugin"


def _fc_ref(x, w, b):
    return x @ w.T + b


def test_same_parameters_different_shapes() -> None:
    rng = np.random.RandomState(0)
    for n in (2, 5, 2, 7):
        x, w, b = rng.rand(n, 4), rng.rand(3, 4), rng.rand(3)
        y = nd.FullyConnected(nd.array(x), nd.array(w), nd.array(b), num_hidden=3)
        np.testing.assert_allclose(y.asnumpy(), _fc_ref(x, w, b), rtol=1e-5)


def test_errors_raised_on_every_call() -> None:
    x, w, b = nd.ones((2, 4)), nd.ones((3, 4)), nd.ones((3,))
    nd.FullyConnected(x, w, b, num_hidden=3).wait_to_read()
    for _ in range(3):  # a cached plan must not skip the checks of another signature
        with pytest.raises(ShapeError, match="FullyConnected"):
            nd.FullyConnected(x, nd.ones((3, 5)), b, num_hidden=3)
    with pytest.raises(mx.operator.params.ParamError):
        nd.FullyConnected(x, w, b, num_hidden="three")
    with pytest.raises(mx.operator.params.ParamError):  # a failed parse is not cached either
        nd.FullyConnected(x, w, b, num_hidden="three")
    with pytest.raises(mx.base.PlexnetError, match="missing array argument"):
        nd.FullyConnected(x, num_hidden=3)
    with pytest.raises(Exception, match="dtype|float64"):  # MXNet: no silent promotion
        nd.FullyConnected(x, w.astype("float64"), b, num_hidden=3)


def test_parameter_types_are_part_of_the_key() -> None:
    x = nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert nd.sum(x, axis=1).shape == (3,)
    assert nd.sum(x, axis="1").shape == (3,)  # MXNet's string form
    assert nd.sum(x, axis=(0, 1)).shape == (1,)
    np.testing.assert_allclose(nd.sum(x, axis=[0, 1]).asnumpy(), [66.0])  # unhashable: uncached path
    y = nd.one_hot(nd.array([0, 2]), 3)
    z = nd.one_hot(nd.array([0, 2]), depth=3, dtype="int32")
    assert y.dtype == np.float32 and z.dtype == np.int32


def test_keyword_arrays_and_positional_parameters() -> None:
    rng = np.random.RandomState(1)
    x, w, b = rng.rand(2, 4), rng.rand(3, 4), rng.rand(3)
    ref = _fc_ref(x, w, b)
    X, W, B = nd.array(x), nd.array(w), nd.array(b)
    for _ in range(2):
        np.testing.assert_allclose(nd.FullyConnected(data=X, weight=W, bias=B, num_hidden=3).asnumpy(), ref, rtol=1e-5)
        np.testing.assert_allclose(nd.FullyConnected(X, bias=B, weight=W, num_hidden=3).asnumpy(), ref, rtol=1e-5)
        np.testing.assert_allclose(nd.FullyConnected(X, W, B, 3).asnumpy(), ref, rtol=1e-5)
        np.testing.assert_allclose(nd.FullyConnected(X, W, None, 3, True).asnumpy(), x @ w.T, rtol=1e-5)
        np.testing.assert_allclose(nd.clip(X, 0.2, 0.5).asnumpy(), np.clip(x, 0.2, 0.5), rtol=1e-6)


def test_out_and_recording() -> None:
    x = nd.array([[1.0, -2.0, 3.0]])
    o = nd.zeros((1, 3))
    for _ in range(2):
        r = nd.relu(x, out=o)
        assert r is o
        np.testing.assert_allclose(o.asnumpy(), [[1, 0, 3]])
    with pytest.raises(ShapeError, match="out="):
        nd.relu(x, out=nd.zeros((2, 3)))
    x.attach_grad()
    with autograd.record():
        y = nd.softmax(x, axis=-1)
        z = (y * nd.array([[1.0, 2.0, 3.0]])).sum()
    z.backward()
    s = np.exp([1.0, -2.0, 3.0]) / np.exp([1.0, -2.0, 3.0]).sum()
    g = s * (np.array([1, 2, 3]) - (s * [1, 2, 3]).sum())
    np.testing.assert_allclose(x.grad.asnumpy()[0], g, rtol=1e-5)


def test_stateful_operators_get_fresh_state() -> None:
    # RNN's property is not stateless: each call gets its own Operator (uncached path)
    x = nd.ones((3, 2, 4))
    params = nd.ones((1 * (4 * 5 + 5 * 5 + 2 * 5),)) * 0.1
    state = nd.zeros((1, 2, 5))
    a = nd.RNN(x, params, state, state_size=5, num_layers=1, mode="rnn_tanh")
    b = nd.RNN(x, params, state, state_size=5, num_layers=1, mode="rnn_tanh")
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy())
    plan = inv._plans.get(("RNN", 3, (), ("state_size", int, 5), ("num_layers", int, 1), ("mode", str, "rnn_tanh")))
    assert plan is None  # stateful: never given a shared plan


class _ScaleProp(OperatorProperty):
    """k * data"""


def _plugin(k: float):
    class _ScaleOp(Operator):
        def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
            assign(out_data[0], req[0], k * in_data[0])

    class Plugin:
        @mx.hookimpl
        def plexnet_register_operators(self, registry):  # type: ignore[no-untyped-def]
            registry.register_property("_invoke_cache_scale", _ScaleProp)
            registry.register_impl("_invoke_cache_scale", "*", lambda prop, ctx: _ScaleOp())
    return Plugin()


def test_registry_change_drops_cached_plans() -> None:
    mgr = get_manager()
    mgr.add_plugin(_plugin(2.0), PLUGIN)
    try:
        np.testing.assert_allclose(nd._invoke_cache_scale(nd.ones((2,))).asnumpy(), [2, 2])
        mgr.remove_plugin(PLUGIN)
        mgr.add_plugin(_plugin(3.0), PLUGIN)
        np.testing.assert_allclose(nd._invoke_cache_scale(nd.ones((2,))).asnumpy(), [3, 3])
    finally:
        mgr.remove_plugin(PLUGIN)
    with pytest.raises(Exception, match="_invoke_cache_scale"):
        nd._invoke_cache_scale(nd.ones((2,)))


def test_small_calls_run_on_the_calling_thread_large_ones_on_workers() -> None:
    seen = []

    class _Who(Operator):
        def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
            seen.append(threading.get_ident())
            assign(out_data[0], req[0], in_data[0])

    class Plugin:
        @mx.hookimpl
        def plexnet_register_operators(self, registry):  # type: ignore[no-untyped-def]
            registry.register_property("_invoke_cache_who", _ScaleProp)
            registry.register_impl("_invoke_cache_who", "*", lambda prop, ctx: _Who())

    mgr = get_manager()
    mgr.add_plugin(Plugin(), PLUGIN)
    try:
        small, big = nd.ones((4,)), nd.ones((inv.INLINE_MAX_BYTES // 4 + 1,))
        nd.waitall()  # inputs ready: the small call runs at once on this thread
        nd._invoke_cache_who(small).wait_to_read()
        nd._invoke_cache_who(big).wait_to_read()
    finally:
        mgr.remove_plugin(PLUGIN)
    me = threading.get_ident()
    if mx.engine.get().kind.lower().startswith("naive"):
        assert seen == [me, me]
    else:
        assert seen[0] == me and seen[1] != me


def test_inline_failure_is_reported_at_the_wait_and_poisons() -> None:
    class _Boom(Operator):
        def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
            raise ValueError("boom in forward")

    class Plugin:
        @mx.hookimpl
        def plexnet_register_operators(self, registry):  # type: ignore[no-untyped-def]
            registry.register_property("_invoke_cache_boom", _ScaleProp)
            registry.register_impl("_invoke_cache_boom", "*", lambda prop, ctx: _Boom())

    mgr = get_manager()
    mgr.add_plugin(Plugin(), PLUGIN)
    try:
        y = nd._invoke_cache_boom(nd.ones((2,)))  # small: runs inline, error kept for the wait
        z = y + 1
        with pytest.raises(Exception, match="boom in forward"):
            z.asnumpy()
    finally:
        mgr.remove_plugin(PLUGIN)
