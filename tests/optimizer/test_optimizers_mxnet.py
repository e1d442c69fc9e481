"""Every optimizer of ``mx.optimizer`` replays MXNet 1.9.1's trajectories (5 updates, each
option set recorded by ``tests/fixtures/make_mxnet_optimizer_fixtures.py``)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import plexnet as mx

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_optimizers.json")
with open(_FIX) as _f:
    CASES = json.load(_f)["cases"]


def _flat(s):
    if s is None:
        return None
    if isinstance(s, (list, tuple)):
        return [_flat(x) for x in s]
    return s.asnumpy().astype("float64").ravel()


def _compare_states(got, want, name):
    if want is None:
        assert got is None, name
        return
    if want and isinstance(want[0], list) or (want and want[0] is None):
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            _compare_states(g, w, name)
        return
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=f"{name} state")


@pytest.mark.parametrize("case", CASES, ids=[f"{c['optimizer']}-{json.dumps(c['options'])}" for c in CASES])
def test_trajectory_matches_mxnet(case):
    name, opts = case["optimizer"], case["options"]
    if "error" in case:  # MXNet 1.9.1 fails here (DCASGD with momentum); plexnet runs it
        opt = mx.optimizer.create(name, **opts)
        w = mx.nd.ones((3, 4))
        st = opt.create_state_multi_precision(0, w)
        opt.update_multi_precision(0, w, mx.nd.ones((3, 4)), st)
        assert np.isfinite(w.asnumpy()).all()
        return
    opt = mx.optimizer.create(name, **opts)
    w = mx.nd.array(np.array(case["w0"], dtype="float32").reshape(3, 4))
    state = opt.create_state_multi_precision(0, w)
    for step, (g, want) in enumerate(zip(case["grads"], case["trajectory"])):
        g = mx.nd.array(np.array(g, dtype="float32").reshape(3, 4))
        if name == "sgld":  # compare the deterministic part, as recorded
            mx.random.seed(7)
            opt.update_multi_precision(0, w, g, state)
            mx.random.seed(7)
            noise = mx.nd.random.normal(0, np.sqrt(opt._get_lr(0)), shape=w.shape).asnumpy()
            w[:] = w.asnumpy() - noise
        else:
            opt.update_multi_precision(0, w, g, state)
        np.testing.assert_allclose(w.asnumpy().ravel(), want, rtol=2e-5, atol=2e-6,
                                   err_msg=f"{name} {opts} step {step + 1}")
    _compare_states(_flat(state), case["state"], name)


def test_registered_names_and_classes():
    for name in ("signum", "ftml", "ftrl", "lars", "lbsgd", "lamb", "dcasgd", "sgld", "ccsgd", "adamax", "nadam",
                 "adadelta", "test", "sgd", "nag", "adam", "adagrad", "rmsprop"):
        assert name in mx.optimizer.list_optimizers(), name
    assert isinstance(mx.optimizer.create("ccsgd"), mx.optimizer.SGD)
    assert mx.optimizer.Ftrl().lr == 0.1 and mx.optimizer.Adamax().lr == 0.002
    np.testing.assert_array_equal(mx.optimizer.NDabs(mx.nd.array([-1.0, 2.0])).asnumpy(), [1, 2])
    cfg = mx.optimizer.LAMB(learning_rate=0.01, lower_bound=0.1).get_config()
    again = mx.optimizer.from_config(cfg)
    assert isinstance(again, mx.optimizer.LAMB) and again.lower_bound == 0.1


def test_dcasgd_momentum_matches_its_formula():
    rng = np.random.RandomState(0)
    w0, g1, g2 = rng.rand(4), rng.rand(4), rng.rand(4)
    opt = mx.optimizer.DCASGD(learning_rate=0.1, momentum=0.9, lamda=0.2, wd=0.01)
    w = mx.nd.array(w0)
    st = opt.create_state(0, w)
    ref_w, prev, mom = w0.copy(), w0.copy(), np.zeros(4)
    for g in (g1, g2):
        opt.update(0, w, mx.nd.array(g), st)
        step = -0.1 * (g + 0.01 * ref_w + 0.2 * g * g * (ref_w - prev))
        mom = 0.9 * mom + step
        prev = ref_w.copy()
        ref_w = ref_w + mom
    np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-5)


def test_sgld_noise_has_the_right_scale():
    mx.random.seed(3)
    opt = mx.optimizer.SGLD(learning_rate=0.04)
    w = mx.nd.zeros((20000,))
    opt.update(0, w, mx.nd.zeros((20000,)), None)
    assert abs(w.asnumpy().std() - 0.2) < 0.01 and abs(w.asnumpy().mean()) < 0.01


def test_multi_precision_float16():
    opt = mx.optimizer.create("adamax", multi_precision=True)
    w = mx.nd.ones((3,), dtype="float16")
    st = opt.create_state_multi_precision(0, w)
    opt.update_multi_precision(0, w, mx.nd.ones((3,), dtype="float16"), st)
    assert w.dtype == np.float16 and st[0].dtype == np.float32
    np.testing.assert_allclose(w.asnumpy(), 1 - 0.002, rtol=1e-3)


def test_multi_precision_lamb_keeps_its_master_weights_updated():
    """MXNet 1.9.1's multi-precision LAMB never writes its float32 master weights (each
    step restarts from the first copy); plexnet updates them like every other
    multi-precision optimizer: the float16 weight is the master weight rounded, and it
    agrees with float32 LAMB on the same steps."""
    import plexnet as mx
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (3, 4)).astype("f4")
    gs = [rng.uniform(-1, 1, (3, 4)).astype("f2").astype("f4") for _ in range(5)]
    w0 = w0.astype("f2").astype("f4")
    mp = mx.optimizer.create("lamb", learning_rate=0.1, multi_precision=True)
    w16 = mx.nd.array(w0, dtype="float16")
    st = mp.create_state_multi_precision(0, w16)
    ref = mx.optimizer.create("lamb", learning_rate=0.1)
    w32 = mx.nd.array(w0)
    st32 = ref.create_state(0, w32)
    masters = []
    for g in gs:
        mp.update_multi_precision(0, w16, mx.nd.array(g, dtype="float16"), st)
        ref.update(0, w32, mx.nd.array(g), st32)
        masters.append(st[0].asnumpy().copy())
        np.testing.assert_array_equal(w16.asnumpy(), masters[-1].astype("f2"))
    assert not np.allclose(masters[0], masters[-1])
    np.testing.assert_allclose(masters[-1], w32.asnumpy(), rtol=1e-5, atol=1e-5)
