"""Pooling: the numba kernels give ops-basic's results (bit-equal: same arithmetic order)
on fixed and random geometries, every req, ties, NaN; the cases they leave run ops-basic."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _numba_harness import assert_same, prop, run_pair
from plexnet.base import ShapeError
from plexnet_ops_basic.nn.pooling import PoolingOp
from plexnet_ops_numba import _base, pooling
from plexnet_ops_numba.pooling import NumbaPoolingOp

pytestmark = pytest.mark.timeout(120)


def pair(kw):
    pr = prop("Pooling", kw)
    return [PoolingOp(pr.param), NumbaPoolingOp(pr)]


def ties(rng, shape):
    """Few distinct values: many windows hold their maximum twice or more."""
    return rng.integers(-2, 3, shape).astype(np.float64)


CASES = [
    (dict(kernel=(2, 2), stride=(2, 2)), (2, 3, 8, 8)),                                  # LeNet's, unrolled
    (dict(kernel=(2, 2), stride=(2, 2), pool_type="avg"), (2, 3, 6, 4)),
    (dict(kernel=(2, 2), stride=(2, 2), pool_type="sum"), (2, 3, 6, 4)),
    (dict(kernel=(3, 3), stride=(3, 3)), (2, 2, 9, 6)),                                  # other tiling
    (dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)), (2, 3, 9, 8)),                      # overlap + pad
    (dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"), (1, 2, 8, 8)),
    (dict(kernel=(2, 2), stride=(3, 3)), (1, 2, 8, 7)),                                  # gaps
    (dict(kernel=(3,), stride=(2,), pad=(1,)), (2, 3, 9)),                               # 1-D
    (dict(kernel=(3,), stride=(2,), pooling_convention="same"), (2, 3, 9)),
    (dict(kernel=(2, 3, 2), stride=(1, 2, 2), pad=(1, 1, 0)), (2, 2, 5, 6, 7)),         # 3-D
    (dict(kernel=(2, 2, 2), stride=(2, 2, 2)), (1, 2, 4, 4, 6)),
    (dict(kernel=(3, 3), pad=(2, 2)), (1, 1, 4, 4)),                                     # pad > kernel / 2
    # 1-D / 2-D sums on the flat phase planes (_phaseplanes)
    (dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"), (2, 3, 9, 8)),
    (dict(kernel=(3, 3), pad=(1, 1), pool_type="avg", count_include_pad=False), (2, 2, 7, 6)),
    (dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full", pool_type="sum"), (1, 2, 8, 9)),
    (dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="avg"), (2, 3, 9)),
]


@pytest.mark.parametrize("kw,shape", CASES)
@pytest.mark.parametrize("req", ["write", "add", "null", "inplace"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_ops_basic(kw, shape, req, dtype):
    assert_same(run_pair("Pooling", kw, [shape], pair(kw), dtype=dtype, req=req, values=ties), what=str(kw))


@pytest.mark.parametrize("pool_type", ["avg", "sum"])
@pytest.mark.parametrize("req", ["write", "add"])
def test_generic_sum_kernels(monkeypatch, pool_type, req):
    """avg / sum through the generic kernels (routed to ops-basic by default)."""
    monkeypatch.setattr(pooling, "GENERIC_SUMS", True)
    for kw, shape in CASES:
        kw = dict(kw, pool_type=pool_type)
        for cip in (None, False):
            k2 = dict(kw, count_include_pad=cip)
            assert_same(run_pair("Pooling", k2, [shape], pair(k2), req=req), what=str(k2))


geoms = st.integers(1, 3).flatmap(lambda nd: st.tuples(
    st.just(nd),
    st.lists(st.integers(1, 4), min_size=nd, max_size=nd),      # kernel
    st.lists(st.integers(1, 3), min_size=nd, max_size=nd),      # stride
    st.lists(st.integers(0, 2), min_size=nd, max_size=nd),      # pad
    st.lists(st.integers(1, 9), min_size=nd, max_size=nd),      # input size
))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(geom=geoms, conv=st.sampled_from(["valid", "full"]), pool_type=st.sampled_from(["max", "avg", "sum"]),
       cip=st.sampled_from([None, False]), req=st.sampled_from(["write", "add"]),
       dtype=st.sampled_from([np.float32, np.float64]), n=st.integers(1, 2), c=st.integers(1, 3))
def test_random_geometry(geom, conv, pool_type, cip, req, dtype, n, c):
    nd, k, s, p, sp = geom
    kw = dict(kernel=tuple(k), stride=tuple(s), pad=tuple(p), pooling_convention=conv, pool_type=pool_type,
              count_include_pad=cip)
    shape = (n, c) + tuple(sp)
    try:
        prop("Pooling", kw).infer_shape([shape])
    except ShapeError:
        assume(False)
    old = pooling.GENERIC_SUMS
    pooling.GENERIC_SUMS = True
    try:
        assert_same(run_pair("Pooling", kw, [shape], pair(kw), dtype=dtype, req=req,
                             values=ties if pool_type == "max" else None), what=str(kw))
    finally:
        pooling.GENERIC_SUMS = old


@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), stride=(2, 2)), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
                                dict(kernel=(3, 3), stride=(3, 3))])
def test_max_backward_routes_ties_to_first_maximum(kw):
    x = np.zeros((1, 1, 6, 6), np.float32)     # every window is all ties
    op = NumbaPoolingOp(prop("Pooling", kw))
    y = np.empty(prop("Pooling", kw).infer_shape([x.shape])[1][0], np.float32)
    from _numba_harness import ctx
    from plexnet.operator import OpReqType
    op.forward(ctx(), [x], [OpReqType.write], [y], [])
    dx = np.full(x.shape, np.nan, np.float32)
    op.backward(ctx(), [np.ones_like(y)], [x], [y], [OpReqType.write], [dx], [])
    # each window's gradient goes to one position only: the total equals the window count
    assert dx.sum() == y.size
    assert_same(run_pair("Pooling", kw, [x.shape], pair(kw), values=lambda r, s: np.zeros(s)))


@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), stride=(2, 2)), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
                                dict(kernel=(2, 2), stride=(2, 2), pool_type="avg")])
@pytest.mark.filterwarnings("ignore:invalid value")
def test_nan_and_inf_as_ops_basic(kw):
    def vals(rng, s):
        a = rng.integers(-2, 3, s).astype(np.float64)
        a.reshape(-1)[::7] = np.nan
        a.reshape(-1)[3::11] = -np.inf
        a.reshape(-1)[5::13] = np.inf
        return a
    assert_same(run_pair("Pooling", kw, [(2, 2, 8, 8)], pair(kw), values=vals))
    assert_same(run_pair("Pooling", kw, [(2, 2, 8, 8)], pair(kw), values=vals, req="add"))


def _spy(monkeypatch):
    calls = []
    orig_f, orig_b = PoolingOp.forward, PoolingOp.backward
    monkeypatch.setattr(PoolingOp, "forward", lambda self, *a: calls.append("f") or orig_f(self, *a))
    monkeypatch.setattr(PoolingOp, "backward", lambda self, *a: calls.append("b") or orig_b(self, *a))
    return calls


@pytest.mark.parametrize("kw,shape,dtype", [
    (dict(kernel=(2, 2), pool_type="lp", p_value=2), (1, 2, 6, 6), np.float32),
    (dict(kernel=(1, 1), global_pool=True), (1, 2, 6, 6), np.float32),
    (dict(kernel=(6, 6)), (1, 2, 6, 6), np.float32),                  # one window over everything
    (dict(kernel=(3, 3, 3), pool_type="avg"), (1, 2, 6, 6, 6), np.float32),  # 3-D sums: ops-basic
    (dict(kernel=(2, 2)), (1, 2, 6, 6), np.float16),
])
def test_uncovered_cases_run_ops_basic(monkeypatch, kw, shape, dtype):
    calls = _spy(monkeypatch)
    pr = prop("Pooling", kw)
    res = run_pair("Pooling", kw, [shape], [NumbaPoolingOp(pr), NumbaPoolingOp(pr)], dtype=dtype)
    assert calls.count("f") >= 2 and calls.count("b") >= 2
    assert_same(res)


def test_non_contiguous_runs_ops_basic(monkeypatch):
    calls = _spy(monkeypatch)
    kw = dict(kernel=(2, 2), stride=(2, 2))
    op = NumbaPoolingOp(prop("Pooling", kw))
    from _numba_harness import ctx
    from plexnet.operator import OpReqType
    x = np.random.default_rng(0).standard_normal((1, 2, 8, 16)).astype(np.float32)[..., ::2]
    y = np.empty((1, 2, 4, 4), np.float32)
    op.forward(ctx(), [x], [OpReqType.write], [y], [])
    assert calls == ["f"]
    np.testing.assert_array_equal(y, x.reshape(1, 2, 4, 2, 4, 2).max(axis=(3, 5)))


def test_registered_and_chosen():
    import plexnet as mx
    from _numba_harness import default_impl, numba_record
    reg = mx.plugins.registries().operators
    numba_record("Pooling")
    pr = prop("Pooling", dict(kernel=(2, 2)))
    reg.force_impl("Pooling", "cpu", "numba")
    try:
        assert type(pr.create_operator(mx.cpu())) is NumbaPoolingOp
    finally:
        reg.force_impl("Pooling", "cpu", None)
    # above ops-basic's (priority 0); ops-torch's (10), when installed, above it
    assert default_impl("Pooling") in ("numba", "torch")
    assert reg.select_impl("Pooling", "cpu").impl_name == default_impl("Pooling")


def test_probe_off_runs_ops_basic():
    import plexnet as mx
    from _numba_harness import default_impl
    reg = mx.plugins.registries().operators
    _base._DISABLED = True
    try:
        assert not _base.available()
        assert "PLEXNET_NUMBA_DISABLE" in _base.available.reason()
        reg.force_impl("Pooling", "cpu", None)   # clears the registry's selection caches
        assert reg.select_impl("Pooling", "cpu").impl_name != "numba"
        if default_impl("Pooling") == "xp":        # no ops-torch
            assert type(prop("Pooling", dict(kernel=(2, 3))).create_operator(mx.cpu())) is PoolingOp
    finally:
        _base._DISABLED = False
        reg.force_impl("Pooling", "cpu", None)
    assert reg.select_impl("Pooling", "cpu").impl_name == default_impl("Pooling")


def test_kernels_that_fail_to_load_fall_back(monkeypatch):
    """A kernel module that cannot be imported (numba broken): ops-basic runs, the probe
    then says no, with the reason."""
    monkeypatch.setattr(_base, "_kernels", {"_poolkern": None})
    monkeypatch.setattr(_base, "_reason", "numba kernels cannot be loaded (test)")
    calls = _spy(monkeypatch)
    kw = dict(kernel=(2, 2), stride=(2, 2))
    assert_same(run_pair("Pooling", kw, [(1, 2, 4, 4)], pair(kw)))
    assert calls.count("f") == 4   # both operators of the pair ran ops-basic
    assert not _base.available() and "test" in _base.available.reason()
    monkeypatch.undo()
    import plexnet as mx
    mx.plugins.registries().operators.force_impl("Pooling", "cpu", None)   # selections made meanwhile


def test_force_impl_env_picks_ops_basic():
    import subprocess
    import sys
    code = ("import plexnet as mx; from plexnet.operator import *; "
            "reg = mx.plugins.registries().operators; "
            "p = reg.create_property('Pooling', {'kernel': (2, 2)}); "
            "print(type(p.create_operator(mx.cpu())).__module__)")
    # ops-torch, when installed, blocked: its implementation would outrank numba's
    env = dict(__import__("os").environ, PLEXNET_FORCE_IMPL="Pooling:cpu=xp", PLEXNET_PLUGINS_BLOCK="ops_torch")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "plexnet_ops_basic.nn.pooling", out.stderr
    env.pop("PLEXNET_FORCE_IMPL")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "plexnet_ops_numba.pooling", out.stderr


def test_small_calls_skip_numba(monkeypatch):
    # below MIN_ELEMENTS a call runs ops-basic's code, so a small model never imports numba
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 1 << 16)
    small = np.zeros((2, 3, 8, 8), np.float32)
    big = np.zeros((4, 16, 32, 32), np.float32)
    assert not _base.ok_arrays([small, None]) and _base.ok_arrays([big])
    calls = []
    monkeypatch.setattr(PoolingOp, "forward", lambda self, *a: calls.append("xp"))
    op = NumbaPoolingOp(prop("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max")))
    from plexnet.operator import OpReqType
    op.forward(None, [small], [OpReqType.write], [np.zeros((2, 3, 4, 4), np.float32)], [])
    assert calls == ["xp"]
