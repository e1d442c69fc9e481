"""The fused optimizer update operators (``sgd_update``, ``adam_update``, ...): float64
closed forms over several steps, MXNet's in-place / ``out=`` semantics, engine ordering
of the mutated states, the multi-precision variants, errors, the symbolic path, and a
cross-check against Apache MXNet 1.9.1 (``PLEXNET_MXNET_PYTHON``, default
``/work/mxvenv/bin/python``; skipped when it is missing)."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import PlexnetError, ShapeError
from plexnet.operator import ParamError

from opcheck import run_forward

nd = mx.nd
MXNET_PY = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")

# ---------------------------------------------------------------------------------------------
# float64 closed forms, written from MXNet 1.9.1's kernels (independently of the kernels module)
# ---------------------------------------------------------------------------------------------
#: MXNet 1.9.1's parameter defaults (``lr`` and ftml's ``t`` are required)
DEFAULTS = {
    "sgd_update": dict(wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    "sgd_mom_update": dict(momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    "nag_mom_update": dict(momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    "adam_update": dict(beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    "rmsprop_update": dict(gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                           clip_weights=-1.0),
    "rmspropalex_update": dict(gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                               clip_gradient=-1.0, clip_weights=-1.0),
    "signsgd_update": dict(wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    "signum_update": dict(momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, wd_lh=0.0),
    "ftrl_update": dict(lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    "ftml_update": dict(beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_grad=-1.0),
}
DEFAULTS["mp_sgd_update"] = DEFAULTS["sgd_update"]
DEFAULTS["mp_sgd_mom_update"] = DEFAULTS["sgd_mom_update"]
DEFAULTS["mp_nag_mom_update"] = DEFAULTS["nag_mom_update"]

STATES = {"sgd_update": (), "sgd_mom_update": ("mom",), "nag_mom_update": ("mom",),
          "adam_update": ("mean", "var"), "rmsprop_update": ("n",), "rmspropalex_update": ("n", "g", "delta"),
          "signsgd_update": (), "signum_update": ("mom",), "ftrl_update": ("z", "n"),
          "ftml_update": ("d", "v", "z"), "mp_sgd_update": ("weight32",),
          "mp_sgd_mom_update": ("mom", "weight32"), "mp_nag_mom_update": ("mom", "weight32")}


def _clip(x, c):
    return np.clip(x, -c, c) if c >= 0 else x


def ref_step(op: str, w, g, s: list, p: dict, aliased: bool = True) -> tuple:
    """One update in float64: ``(new_weight, new_states)`` (pure, nothing is mutated).
    ``aliased``: the output is the weight (``out=weight``); only NAG depends on it."""
    p = {**DEFAULTS[op], **p}
    lr, wd, rg = p["lr"], p["wd"], p["rescale_grad"]
    c = p.get("clip_gradient", p.get("clip_grad"))
    sign = np.sign
    if op == "sgd_update":
        return (1 - lr * wd) * w - lr * _clip(rg * g, c), []
    if op == "sgd_mom_update":
        m = p["momentum"] * s[0] - lr * wd * w - lr * _clip(rg * g, c)
        return w + m, [m]
    if op == "nag_mom_update":  # MXNet 1.9.1 reads the weight again after writing the output
        t = _clip(rg * g, c) + wd * w
        m = p["momentum"] * s[0]
        w2 = w - m + (p["momentum"] + 1) * (m - lr * t)
        return w2, [m - lr * (_clip(rg * g, c) + wd * (w2 if aliased else w))]
    if op == "adam_update":
        t = _clip(rg * g + wd * w, c)
        m = p["beta1"] * s[0] + (1 - p["beta1"]) * t
        v = p["beta2"] * s[1] + (1 - p["beta2"]) * t * t
        return w - lr * m / (np.sqrt(v) + p["epsilon"]), [m, v]
    if op in ("rmsprop_update", "rmspropalex_update"):
        t = _clip(rg * g + wd * w, c)
        n = (1 - p["gamma1"]) * t * t + p["gamma1"] * s[0]
        if op == "rmsprop_update":
            w2, new = w - lr * t / np.sqrt(n + p["epsilon"]), [n]
        else:
            gm = (1 - p["gamma1"]) * t + p["gamma1"] * s[1]
            d = p["gamma2"] * s[2] - lr * t / np.sqrt(n - gm * gm + p["epsilon"])
            w2, new = w + d, [n, gm, d]
        return _clip(w2, p["clip_weights"]), new
    if op == "signsgd_update":
        return (1 - lr * wd) * w - lr * sign(g), []
    if op == "signum_update":
        m = p["momentum"] * s[0] - (1 - p["momentum"]) * (wd * w + _clip(rg * g, c))
        return (1 - lr * p["wd_lh"]) * w + lr * sign(m), [m]
    if op == "ftrl_update":
        z, n = s
        t = _clip(rg * g, c)
        z = z + t - (np.sqrt(n + t * t) - np.sqrt(n)) * w / lr
        n = n + t * t
        return (sign(z) * p["lamda1"] - z) / ((p["beta"] + np.sqrt(n)) / lr + wd) * (np.abs(z) > p["lamda1"]), [z, n]
    if op == "ftml_update":
        d, v, z = s
        b1, b2, k = p["beta1"], p["beta2"], p["t"]
        t = _clip(rg * g + wd * w, c)
        v = b2 * v + (1 - b2) * t * t
        d_t = (1 - b1 ** k) / lr * (np.sqrt(v / (1 - b2 ** k)) + p["epsilon"])
        z = b1 * z + (1 - b1) * t - (d_t - b1 * d) * w
        return -z / d_t, [d_t, v, z]
    if op.startswith("mp_"):
        w32 = s[-1]
        w2, new = ref_step(op[3:], w32, g, s[:-1], p, aliased=True)  # the master is updated in place
        return w2, new + [w2]
    raise KeyError(op)


def _init_states(op: str, w: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Zero states, except momenta (random) and the master copy (the weight)."""
    out = []
    for name in STATES[op]:
        if name == "weight32":
            out.append(w.astype(np.float64))
        elif name == "mom" or name == "mean":
            out.append(rng.normal(0, 0.1, w.shape))
        else:
            out.append(np.zeros(w.shape))
    return out


HYPER = {
    "plain": {},
    "wd_rescale": dict(wd=0.03, rescale_grad=0.5),
    "all": dict(wd=0.03, rescale_grad=0.5, clip_gradient=0.4),
}
OP_PARAMS = {
    "sgd_update": dict(lr=0.1),
    "sgd_mom_update": dict(lr=0.1, momentum=0.9),
    "nag_mom_update": dict(lr=0.1, momentum=0.8),
    "adam_update": dict(lr=0.01, beta1=0.8, beta2=0.99, epsilon=1e-6),
    "rmsprop_update": dict(lr=0.01, gamma1=0.9, clip_weights=0.95),
    "rmspropalex_update": dict(lr=0.01, gamma1=0.9, gamma2=0.8, clip_weights=0.95),
    "signsgd_update": dict(lr=0.05),
    "signum_update": dict(lr=0.05, momentum=0.9, wd_lh=0.01),
    "ftrl_update": dict(lr=0.1, lamda1=0.05, beta=0.5),
    "ftml_update": dict(lr=0.05, beta1=0.6, beta2=0.99),
    "mp_sgd_update": dict(lr=0.1),
    "mp_sgd_mom_update": dict(lr=0.1, momentum=0.9),
    "mp_nag_mom_update": dict(lr=0.1, momentum=0.8),
}
FP_OPS = [o for o in OP_PARAMS if not o.startswith("mp_")]
MP_OPS = [o for o in OP_PARAMS if o.startswith("mp_")]
STEPS = 4
SHAPE = (3, 5)


def _params(op: str, hyper: str, step: int) -> dict:
    p = {**OP_PARAMS[op], **HYPER[hyper]}
    if op == "ftml_update":
        p["t"] = step + 1
        if "clip_gradient" in p:
            p["clip_grad"] = p.pop("clip_gradient")
    return p


def _data(op: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, SHAPE)
    grads = [rng.normal(0, 1.5, SHAPE) for _ in range(STEPS)]
    return w, grads, _init_states(op, w, rng)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("hyper", list(HYPER))
@pytest.mark.parametrize("op", FP_OPS)
def test_float64_closed_form_over_steps(op, hyper):
    w0, grads, s0 = _data(op)
    w = nd.array(w0, dtype="float64")
    states = [nd.array(s, dtype="float64") for s in s0]
    rw, rs = w0.copy(), [s.copy() for s in s0]
    for k, g in enumerate(grads):
        p = _params(op, hyper, k)
        res = getattr(nd, op)(w, nd.array(g, dtype="float64"), *states, out=w, **p)
        assert res is w
        rw, rs = ref_step(op, rw, g, rs, p)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-12, atol=1e-12, err_msg=f"{op}: weight")
    for name, a, r in zip(STATES[op], states, rs):
        assert a.dtype == np.float64
        np.testing.assert_allclose(a.asnumpy(), r, rtol=1e-12, atol=1e-12, err_msg=f"{op}: state {name!r}")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", FP_OPS)
def test_float32_matches_closed_form(op):
    w0, grads, s0 = _data(op, seed=1)
    w = nd.array(w0, dtype="float32")
    states = [nd.array(s, dtype="float32") for s in s0]
    rw, rs = w0.astype(np.float32).astype(np.float64), [s.astype(np.float32).astype(np.float64) for s in s0]
    for k, g in enumerate(grads):
        g32 = g.astype(np.float32)
        p = _params(op, "all", k)
        getattr(nd, op)(w, nd.array(g32), *states, out=w, **p)
        rw, rs = ref_step(op, rw, g32.astype(np.float64), rs, p)
    assert w.dtype == np.float32
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-4, atol=1e-5, err_msg=op)


@pytest.mark.timeout(60)
def test_clip_gradient_zero_clips_to_zero_and_negative_turns_clipping_off():
    w, g = nd.array([1.0, 2.0, 3.0]), nd.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(nd.sgd_update(w, g, lr=0.1, clip_gradient=0).asnumpy(), [1, 2, 3])
    np.testing.assert_allclose(nd.sgd_update(w, g, lr=0.1, clip_gradient=-1).asnumpy(), [0.95, 2.1, 2.8],
                               rtol=1e-6)
    np.testing.assert_allclose(nd.sgd_update(w, g, lr=0.1, clip_gradient=0.6).asnumpy(), [0.95, 2.06, 2.94],
                               rtol=1e-6)
    # signsgd ignores rescale_grad and clip_gradient (MXNet's kernel)
    np.testing.assert_allclose(nd.signsgd_update(w, g, lr=0.1, rescale_grad=-1, clip_gradient=0).asnumpy(),
                               [0.9, 2.1, 2.9], rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# MXNet's in-place semantics and engine ordering
# ---------------------------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_out_weight_updates_in_place_and_returns_it():
    # the same sequence in MXNet 1.9.1 gives the values below
    w, g, mom = nd.array([1.0, 2.0, 3.0]), nd.array([0.5, -1.0, 2.0]), nd.zeros(3)
    r = nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9)
    assert r is not w
    np.testing.assert_allclose(r.asnumpy(), [0.95, 2.1, 2.8], rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy(), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(mom.asnumpy(), [-0.05, 0.1, -0.2], rtol=1e-6)
    r = nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, out=w)
    assert r is w
    np.testing.assert_allclose(w.asnumpy(), [0.905, 2.19, 2.62], rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), [-0.095, 0.19, -0.38], rtol=1e-6)
    np.testing.assert_array_equal(g.asnumpy(), [0.5, -1.0, 2.0])  # the gradient is only read


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", FP_OPS + MP_OPS)
def test_without_out_returns_new_array_and_still_updates_states(op):
    """MXNet: without ``out`` the weight is left alone, the result is a new array, and
    the states are updated anyway (they are mutable inputs)."""
    w0, grads, s0 = _data(op)
    dt = "float16" if op.startswith("mp_") else "float32"
    w = nd.array(w0, dtype=dt)
    s0 = [s.astype(np.float32) for s in s0]
    states = [nd.array(s, dtype="float32") for s in s0]
    before = w.asnumpy().copy()
    p = _params(op, "all", 0)
    r = getattr(nd, op)(w, nd.array(grads[0], dtype=dt), *states, **p)
    assert r is not w and r.dtype == np.dtype(dt) and r.shape == w.shape
    np.testing.assert_array_equal(w.asnumpy(), before)
    ref_w, ref_s = ref_step(op, w.asnumpy().astype(np.float64), grads[0].astype(dt).astype(np.float64),
                            [s.astype(np.float64) for s in s0], p, aliased=False)
    tol = dict(rtol=2e-3, atol=2e-3) if dt == "float16" else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r.asnumpy(), ref_w, **tol)
    for name, a, rs in zip(STATES[op], states, ref_s):
        np.testing.assert_allclose(a.asnumpy(), rs, rtol=1e-4, atol=1e-5, err_msg=f"{op}: state {name!r}")


@pytest.mark.timeout(120)
def test_engine_orders_state_reads_after_the_update():
    """The update waits for a slow gradient; ``mom`` read right after (no explicit wait)
    must already show the update: the states are write dependencies of the operation."""
    n = 700
    rng = np.random.default_rng(0)
    a = nd.array(rng.uniform(-1, 1, (n, n)))
    b = nd.array(rng.normal(0, n ** -0.5, (n, n)))   # keeps the products' entries O(1)
    w, mom = nd.zeros((n, n)), nd.zeros((n, n))
    want_g = a.asnumpy().astype(np.float64)
    for _ in range(3):
        want_g = want_g @ b.asnumpy().astype(np.float64)
    assert np.abs(want_g).mean() > 0.1
    for _ in range(3):  # several queued updates, each behind a chain of matrix products
        g = a
        for _ in range(3):
            g = nd.dot(g, b)
        nd.sgd_mom_update(w, g, mom, lr=1.0, momentum=0.5, out=w)
    m_copy = mom.copy()           # an operation reading mom, pushed at once
    m_now = mom.asnumpy()         # a synchronous read
    want_m = -want_g * (1 + 0.5 + 0.25)
    np.testing.assert_allclose(m_now, want_m, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m_copy.asnumpy(), want_m, rtol=1e-4, atol=1e-4)
    want_w = -want_g * (1 + 1.5 + 1.75)
    np.testing.assert_allclose(w.asnumpy(), want_w, rtol=1e-4, atol=1e-4)


@pytest.mark.timeout(60)
def test_state_written_by_a_later_operation_is_not_read_early():
    """A write to ``mom`` queued after the update must not overtake it (write-after-read
    and write-after-write on the state's variable)."""
    n = 500
    a = nd.array(np.random.default_rng(1).uniform(-1, 1, (n, n)))
    w, mom = nd.zeros((n, n)), nd.zeros((n, n))
    g = nd.dot(a, a) / n
    nd.sgd_mom_update(w, g, mom, lr=1.0, momentum=0.0, out=w)
    mom[:] = 7.0                  # must land after the update read and wrote mom
    np.testing.assert_allclose(mom.asnumpy(), 7.0)
    want = -(a.asnumpy().astype(np.float64) @ a.asnumpy().astype(np.float64)) / n
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("req", ["null", "write", "add", "inplace"])
def test_every_req_through_the_operator_contract(req):
    rng = np.random.default_rng(3)
    w, g, mom = rng.uniform(-1, 1, (4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    p = dict(lr=0.1, momentum=0.9, wd=0.01)
    want_w, (want_m,) = ref_step("sgd_mom_update", w, g, [mom], p)
    aux = [mom.copy()]
    out = [np.full((4, 3), 0.5)] if req == "add" else None
    res = run_forward("sgd_mom_update", [w, g], p, aux, req=req, out=out)
    np.testing.assert_allclose(aux[0], want_m, rtol=1e-12)  # the state is updated for every req
    if req == "null":
        return
    np.testing.assert_allclose(res[0], want_w + (0.5 if req == "add" else 0.0), rtol=1e-12)
    if req == "inplace":
        assert res[0] is res.inputs[0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", FP_OPS + MP_OPS)
def test_one_step_of_every_operator_through_the_operator_contract(op):
    """One update straight through the operator contract (no NDArray, no engine), output
    separate from the weight; also what ``PLEXNET_OPCHECK_CTX`` repeats on a device."""
    w0, grads, s0 = _data(op, seed=4)
    mp = op.startswith("mp_")
    dt, st = (np.float16, np.float32) if mp else (np.float64, np.float64)
    w, g = w0.astype(dt), grads[0].astype(dt)
    aux = [s.astype(st) for s in s0]
    p = _params(op, "all", 0)
    want_w, want_s = ref_step(op, w.astype(np.float64), g.astype(np.float64), [a.astype(np.float64) for a in aux],
                              p, aliased=False)
    res = run_forward(op, [w, g], p, aux)
    assert res[0].dtype == dt and all(a.dtype == st for a in aux)
    tol = dict(rtol=2e-3, atol=2e-3) if mp else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[0], want_w, err_msg=f"{op}: weight", **tol)
    for name, a, r in zip(STATES[op], aux, want_s):
        np.testing.assert_allclose(a, r, rtol=1e-5 if mp else 1e-12, atol=1e-6 if mp else 1e-12,
                                   err_msg=f"{op}: state {name!r}")


# ---------------------------------------------------------------------------------------------
# multi-precision
# ---------------------------------------------------------------------------------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", MP_OPS)
def test_mp_keeps_float32_master(op):
    """Updates far below float16's resolution at 1.0 accumulate in the float32 master;
    the float16 weight is the master rounded."""
    steps, lr = 50, 1e-4
    w = nd.ones((8,), dtype="float16")
    w32 = nd.ones((8,), dtype="float32")
    states = [nd.zeros((8,), dtype="float32") for n in STATES[op] if n != "weight32"] + [w32]
    g = nd.ones((8,), dtype="float16")
    p = {**OP_PARAMS[op], "lr": lr}
    rw, rs = np.ones(8), [np.zeros(8) for _ in states[:-1]] + [np.ones(8)]
    for _ in range(steps):
        r = getattr(nd, op)(w, g, *states, out=w, **p)
        assert r is w
        rw, rs = ref_step(op, rw, np.ones(8), rs, p)
    assert w.dtype == np.float16 and w32.dtype == np.float32
    assert all(s.dtype == np.float32 for s in states)
    np.testing.assert_allclose(w32.asnumpy(), rw, rtol=1e-5)
    assert w32.asnumpy()[0] < 1.0 - 10 * lr          # the master moved ...
    np.testing.assert_array_equal(w.asnumpy(), w32.asnumpy().astype(np.float16))  # ... w is it rounded
    fp16_only = nd.ones((8,), dtype="float16")       # float16 alone cannot move by lr * 1 at 1.0
    for _ in range(steps):
        nd.sgd_update(fp16_only, g, lr=lr, out=fp16_only)
    assert (fp16_only.asnumpy() == 1.0).all()


@pytest.mark.timeout(60)
def test_mp_with_float32_weight_and_shared_master():
    w = nd.array([1.0, 2.0, 3.0])
    r = nd.mp_sgd_update(w, nd.array([0.5, -1.0, 2.0]), w, lr=0.1, out=w)  # MXNet accepts this
    assert r is w
    np.testing.assert_allclose(w.asnumpy(), [0.95, 2.1, 2.8], rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_bad_parameters_name_operator_argument_and_value():
    w, g, mom = nd.ones(3), nd.ones(3), nd.zeros(3)
    with pytest.raises(ParamError, match=r"sgd_update: required argument 'lr' is missing"):
        nd.sgd_update(w, g)
    with pytest.raises(ParamError, match=r"sgd_mom_update: invalid value 'fast' for argument 'momentum'"):
        nd.sgd_mom_update(w, g, mom, lr=0.1, momentum="fast")
    with pytest.raises(ParamError, match=r"adam_update: unknown argument\(s\) 'beta3'"):
        nd.adam_update(w, g, mom, nd.zeros(3), lr=0.1, beta3=0.5)
    with pytest.raises(ParamError, match=r"ftml_update: required argument 't' is missing"):
        nd.ftml_update(w, g, nd.zeros(3), nd.zeros(3), nd.zeros(3), lr=0.1)
    with pytest.raises(ParamError, match=r"ftml_update: invalid value 1.5 for argument 't'"):
        nd.ftml_update(w, g, nd.zeros(3), nd.zeros(3), nd.zeros(3), lr=0.1, t=1.5)


@pytest.mark.timeout(60)
def test_bad_shapes_name_operator_and_shapes():
    w = nd.ones((2, 3))
    with pytest.raises(ShapeError, match=r"sgd_update: argument 'grad' has shape \(3, 2\).*weight=\(2, 3\)"):
        nd.sgd_update(w, nd.ones((3, 2)), lr=0.1)
    with pytest.raises(ShapeError, match=r"sgd_mom_update: auxiliary state 'mom' has shape \(6,\), "
                                         r"expected \(2, 3\)"):
        nd.sgd_mom_update(w, nd.ones((2, 3)), nd.zeros(6), lr=0.1)
    with pytest.raises(ShapeError, match=r"rmspropalex_update: auxiliary state 'delta' has shape \(2, 2\)"):
        nd.rmspropalex_update(w, nd.ones((2, 3)), nd.zeros((2, 3)), nd.zeros((2, 3)), nd.zeros((2, 2)), lr=0.1)
    with pytest.raises(ShapeError, match=r"out= array has shape \(3,\)"):
        nd.sgd_update(w, nd.ones((2, 3)), lr=0.1, out=nd.zeros(3))


@pytest.mark.timeout(60)
def test_bad_dtypes_and_missing_states():
    w = nd.ones(3)
    with pytest.raises(TypeError, match=r"sgd_update: argument 'grad' has dtype float64.*weight=float32"):
        nd.sgd_update(w, nd.ones(3, dtype="float64"), lr=0.1)
    with pytest.raises(TypeError, match=r"adam_update: auxiliary state 'var' has dtype float16, expected float32"):
        nd.adam_update(w, nd.ones(3), nd.zeros(3), nd.zeros(3, dtype="float16"), lr=0.1)
    with pytest.raises(TypeError, match=r"mp_sgd_mom_update: auxiliary state 'weight32' has dtype float16, "
                                        r"expected float32"):
        h = nd.ones(3, dtype="float16")
        nd.mp_sgd_mom_update(h, h, nd.zeros(3), nd.ones(3, dtype="float16"), lr=0.1)
    with pytest.raises(TypeError, match=r"mp_sgd_mom_update: auxiliary state 'mom' has dtype float16"):
        h = nd.ones(3, dtype="float16")
        nd.mp_sgd_mom_update(h, h, nd.zeros(3, dtype="float16"), nd.ones(3), lr=0.1)
    with pytest.raises(TypeError, match=r"sgd_update: weight and grad must be floating point, got int32"):
        nd.sgd_update(nd.ones(3, dtype="int32"), nd.ones(3, dtype="int32"), lr=0.1)
    with pytest.raises(PlexnetError, match=r"sgd_mom_update: missing array argument\(s\) 'mom'"):
        nd.sgd_mom_update(w, nd.ones(3), lr=0.1)
    with pytest.raises(PlexnetError, match=r"sgd_update: takes 2 array arguments"):
        nd.sgd_update(w, nd.ones(3), nd.ones(3), lr=0.1)


# ---------------------------------------------------------------------------------------------
# registration, docs and the symbolic path
# ---------------------------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_registered_in_nd_and_sym_with_mxnet_signature():
    for op, states in STATES.items():
        assert callable(getattr(nd, op)) and callable(getattr(mx.sym, op))
        prop = mx.plugins.registries().operators.create_property(op, {"lr": 0.1, "t": 1} if op == "ftml_update"
                                                                 else {"lr": 0.1})
        assert prop.list_arguments() == ["weight", "grad"]
        assert prop.list_auxiliary_states() == list(states)
        assert prop.list_outputs() == ["output"]
        assert "lr" in getattr(nd, op).__doc__
    assert "mom = momentum*mom" in nd.sgd_mom_update.__doc__


@pytest.mark.timeout(60)
def test_symbol_executor_updates_aux_states_and_json_round_trips():
    s = mx.sym.sgd_mom_update(mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("mom"), lr=0.1, momentum=0.9,
                              name="upd")
    assert s.list_arguments() == ["w", "g"] and s.list_auxiliary_states() == ["mom"]
    assert mx.sym.load_json(s.tojson()).tojson() == s.tojson()
    mp = mx.sym.mp_sgd_mom_update(lr=0.1, name="mp")
    assert mp.list_auxiliary_states() == ["mp_mom", "mp_weight32"]
    _, out_t, aux_t = mp.infer_type(mp_weight="float16")
    assert out_t == [np.float16] and aux_t == [np.float32, np.float32]
    exe = s.simple_bind(mx.cpu(), w=(3,), g=(3,))
    exe.arg_dict["w"][:] = np.array([1.0, 2.0, 3.0])
    exe.arg_dict["g"][:] = np.array([0.5, -1.0, 2.0])
    exe.forward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [0.95, 2.1, 2.8], rtol=1e-6)
    np.testing.assert_allclose(exe.aux_dict["mom"].asnumpy(), [-0.05, 0.1, -0.2], rtol=1e-6)
    exe.forward()
    np.testing.assert_allclose(exe.aux_dict["mom"].asnumpy(), [-0.095, 0.19, -0.38], rtol=1e-6)


@pytest.mark.timeout(60)
def test_optimizer_classes_and_operators_share_the_kernels():
    """``mx.optimizer.SGD`` and ``nd.sgd_mom_update`` give bit-identical results."""
    rng = np.random.default_rng(5)
    w0, grads = rng.uniform(-1, 1, (6,)).astype(np.float32), [rng.normal(size=6).astype(np.float32) for _ in range(3)]
    o = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)
    wa, st = nd.array(w0), None
    st = o.create_state(0, wa)
    wb, mom = nd.array(w0), nd.zeros(6)
    for g in grads:
        o.update(0, wa, nd.array(g), st)
        nd.sgd_mom_update(wb, nd.array(g), mom, lr=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5,
                          clip_gradient=0.3, out=wb)
    np.testing.assert_array_equal(wa.asnumpy(), wb.asnumpy())
    np.testing.assert_array_equal(st.asnumpy(), mom.asnumpy())


# ---------------------------------------------------------------------------------------------
# cross-check against Apache MXNet 1.9.1
# ---------------------------------------------------------------------------------------------
#: one driver, run by plexnet here and by MXNet in its venv (``mx`` is the library)
RUNNER = r'''
def run_cases(mx, spec, data):
    import numpy as np
    res = {}
    for case in spec:
        key, op = case["key"], getattr(mx.nd, case["op"])
        w = mx.nd.array(data[key + "/w"], dtype=data[key + "/w"].dtype)
        states = [mx.nd.array(data[key + "/s%d" % i], dtype=data[key + "/s%d" % i].dtype)
                  for i in range(case["nstates"])]
        for k in range(case["steps"]):
            g = data[key + "/g%d" % k]
            p = dict(case["params"][k])
            if case["out"]:
                op(w, mx.nd.array(g, dtype=g.dtype), *states, out=w, **p)
            else:
                r = op(w, mx.nd.array(g, dtype=g.dtype), *states, **p)
                res[key + "/r%d" % k] = r.asnumpy()
        res[key + "/w"] = w.asnumpy()
        for i, s in enumerate(states):
            res[key + "/s%d" % i] = s.asnumpy()
    return res
'''


def _mxnet_available() -> bool:
    return os.path.exists(MXNET_PY) and os.access(MXNET_PY, os.X_OK)


def _cross_cases():
    spec, data = [], {}
    for op in OP_PARAMS:
        for hyper in HYPER:
            for use_out in (True, False):
                if not use_out and hyper != "all":
                    continue
                key = f"{op}/{hyper}/{'out' if use_out else 'new'}"
                w0, grads, s0 = _data(op, seed=len(spec))
                dt = np.float16 if op.startswith("mp_") else np.float32
                data[key + "/w"] = w0.astype(dt)
                for i, (n, s) in enumerate(zip(STATES[op], s0)):
                    data[key + f"/s{i}"] = (s.astype(dt).astype(np.float32) if n == "weight32"
                                            else s.astype(np.float32))
                for k, g in enumerate(grads):
                    data[key + f"/g{k}"] = g.astype(dt)
                spec.append(dict(key=key, op=op, nstates=len(s0), steps=STEPS, out=use_out,
                                 params=[_params(op, hyper, k) for k in range(STEPS)]))
    return spec, data


@pytest.mark.timeout(300)
@pytest.mark.skipif(not _mxnet_available(), reason=f"no Apache MXNet venv at {MXNET_PY}")
def test_matches_mxnet_1_9_1(tmp_path):
    spec, data = _cross_cases()
    np.savez(tmp_path / "in.npz", **data)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    script = RUNNER + (
        "\nimport json, sys, numpy as np, mxnet as mx\n"
        "spec = json.load(open(sys.argv[1])); data = dict(np.load(sys.argv[2]))\n"
        "np.savez(sys.argv[3], **run_cases(mx, spec, data))\n")
    (tmp_path / "ref.py").write_text(script)
    proc = subprocess.run([MXNET_PY, str(tmp_path / "ref.py"), str(tmp_path / "spec.json"), str(tmp_path / "in.npz"),
                           str(tmp_path / "ref.npz")], capture_output=True, text=True, timeout=240)
    if proc.returncode != 0 and "No module named 'mxnet'" in proc.stderr:
        pytest.skip("the MXNet python has no mxnet module")
    assert proc.returncode == 0, proc.stderr[-3000:]
    want = dict(np.load(tmp_path / "ref.npz"))
    ns: dict = {}
    exec(RUNNER, ns)  # noqa: S102 - our own driver text
    got = ns["run_cases"](mx, spec, data)
    assert sorted(got) == sorted(want)
    bad = []
    for k in sorted(want):
        a, b = got[k], want[k]
        assert a.dtype == b.dtype, f"{k}: dtype {a.dtype} vs MXNet {b.dtype}"
        tol = dict(rtol=2e-3, atol=2e-3) if a.dtype == np.float16 else dict(rtol=2e-5, atol=2e-6)
        if not np.allclose(a.astype(np.float64), b.astype(np.float64), **tol):
            bad.append(f"{k}: max |diff| {np.abs(a.astype(np.float64) - b).max():.3g}")
    assert not bad, "differs from MXNet 1.9.1:\n" + "\n".join(bad)
