"""Activation's numba kernels against ops-basic's numpy operator: relu forward and the
relu / tanh / sigmoid gradients bit-equal, every req, in place (``y`` is ``x``, ``dx`` is
``dy``), NaN and infinities, float64, and the cases left to ops-basic."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _numba_harness import prop, record_kernel_calls
from plexnet.engine.runctx import run_context
from plexnet.operator import OpContext, OpReqType
import plexnet
from plexnet_ops_basic.nn.activation import ActivationOp
from plexnet_ops_numba import _base
from plexnet_ops_numba.activation import NumbaActivationOp

# NaN / inf inputs: numpy warns in the ops-basic operator called directly (no engine here)
pytestmark = [pytest.mark.timeout(180), pytest.mark.filterwarnings("ignore::RuntimeWarning")]
W, A, I, N_ = OpReqType.write, OpReqType.add, OpReqType.inplace, OpReqType.null
ACTS = ["relu", "tanh", "sigmoid", "softrelu", "softsign"]


@pytest.fixture(autouse=True)
def small_arrays(monkeypatch):
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 0)


@pytest.fixture
def kernel_calls(monkeypatch):
    """Names of the numba kernels that run."""
    K = _base.kernels("_actkern")
    return record_kernel_calls(monkeypatch, "_actkern", [n for n in dir(K) if n.startswith(("relu", "tanh", "sigmoid"))])


def _ctx():
    return OpContext(True, run_context(plexnet.cpu(), "test"), [])


def ops(act):
    pr = prop("Activation", {"act_type": act})
    return ActivationOp(pr.param), NumbaActivationOp(pr)


def data(shape, seed=0, dtype=np.float32, specials=True):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    if specials and x.size >= 8:
        f = x.reshape(-1)
        f[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30]
        dy.reshape(-1)[6:8] = [np.nan, np.inf]
    return x, dy


def run(op, act, x, dy, fwd_req=W, bwd_req=W, inplace_fwd=False, inplace_bwd=False, start=None):
    xin = x.copy()
    y = xin if inplace_fwd else (np.zeros_like(x) if start is None else start.copy())
    op.forward(_ctx(), [xin], [fwd_req], [y], [])
    dyc = dy.copy()
    dx = dyc if inplace_bwd else (np.full_like(x, 0.5) if start is None else start.copy())
    op.backward(_ctx(), [dyc], [x.copy()], [y], [bwd_req], [dx], [])
    return y, dx


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (257,), (2, 1, 1)])
def test_write_equals_ops_basic(act, dtype, shape):
    x, dy = data(shape, dtype=dtype)
    a, b = ops(act)
    for u, v, name in zip(run(a, act, x, dy), run(b, act, x, dy), ("y", "dx")):
        np.testing.assert_array_equal(v, u, err_msg=f"{act} {name}")


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("inplace_fwd,inplace_bwd", [(True, False), (False, True), (True, True)])
def test_in_place_equals_ops_basic(act, inplace_fwd, inplace_bwd):
    if inplace_fwd and act == "softsign":
        pytest.skip("softsign needs its input: no forward in-place option")
    x, dy = data((3, 4, 5))
    a, b = ops(act)
    ra = run(a, act, x, dy, inplace_fwd=inplace_fwd, inplace_bwd=inplace_bwd)
    rb = run(b, act, x, dy, inplace_fwd=inplace_fwd, inplace_bwd=inplace_bwd)
    for u, v, name in zip(ra, rb, ("y", "dx")):
        np.testing.assert_array_equal(v, u, err_msg=f"{act} {name}")


@pytest.mark.parametrize("act", ["relu", "tanh", "sigmoid"])
@pytest.mark.parametrize("fwd_req,bwd_req", [(A, A), (W, A), (N_, N_), (I, I), (W, N_)])
def test_every_req(act, fwd_req, bwd_req):
    x, dy = data((5, 7))
    start = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    a, b = ops(act)
    for u, v, name in zip(run(a, act, x, dy, fwd_req, bwd_req, start=start),
                          run(b, act, x, dy, fwd_req, bwd_req, start=start), ("y", "dx")):
        np.testing.assert_array_equal(v, u, err_msg=f"{act} {name}")


def test_kernels_run_where_they_apply(kernel_calls):
    x, dy = data((4, 8))
    run(ops("relu")[1], "relu", x, dy)
    run(ops("relu")[1], "relu", x, dy, inplace_fwd=True, inplace_bwd=True)
    run(ops("tanh")[1], "tanh", x, dy)
    run(ops("sigmoid")[1], "sigmoid", x, dy, bwd_req=A)
    assert kernel_calls == ["relu", "relu_grad", "relu_inplace", "relu_grad_inplace", "tanh_grad", "sigmoid_grad"]


def test_cases_left_to_ops_basic(kernel_calls, monkeypatch):
    x, dy = data((4, 8))
    run(ops("softrelu")[1], "softrelu", x, dy)                       # no kernel for the type
    run(ops("relu")[1], "relu", x, dy, fwd_req=A, bwd_req=N_)         # add to the output
    run(ops("relu")[1], "relu", x.astype(np.float16), dy.astype(np.float16), bwd_req=N_)
    op = ops("relu")[1]
    y = np.zeros((4, 8), np.float32)
    op.forward(_ctx(), [x[:, ::2].copy().T], [W], [y[:, ::2].T], [])  # not contiguous
    buf = np.zeros(40, np.float32)                                    # overlapping, not the same
    op.forward(_ctx(), [buf[:32]], [W], [buf[8:40]], [])
    assert kernel_calls == []
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 1 << 16)               # small arrays
    run(ops("tanh")[1], "tanh", x, dy)
    assert kernel_calls == []


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["relu", "tanh", "sigmoid"]), st.integers(1, 300), st.integers(0, 2 ** 31 - 1),
       st.booleans(), st.booleans())
def test_property_bit_equal(act, n, seed, inplace_fwd, inplace_bwd):
    x, dy = data((n,), seed=seed)
    a, b = ops(act)
    ra = run(a, act, x, dy, inplace_fwd=inplace_fwd, inplace_bwd=inplace_bwd)
    rb = run(b, act, x, dy, inplace_fwd=inplace_fwd, inplace_bwd=inplace_bwd)
    for u, v in zip(ra, rb):
        np.testing.assert_array_equal(v, u)
