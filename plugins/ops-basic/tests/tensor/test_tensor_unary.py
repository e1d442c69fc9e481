"""Unary elementwise SimpleOps: forward vs float64 numpy, gradients vs central
differences, every req value, several shapes and dtypes."""
from __future__ import annotations

import numpy as np
import pytest
from tensorref import ALL_REQS, away_from, erf, gamma, gammaln, rand

from opcheck import check_forward, check_gradient, check_req, run_backward, run_forward

# name: (reference, (low, high), kinks to stay away from, has a useful gradient)
UNARY = {
    "abs": (np.abs, (-2, 2), [0], True),
    "sign": (np.sign, (-2, 2), [0], True),
    "negative": (np.negative, (-2, 2), [], True),
    "reciprocal": (lambda x: 1 / x, (0.5, 2), [], True),
    "square": (np.square, (-2, 2), [], True),
    "sqrt": (np.sqrt, (0.2, 3), [], True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.2, 3), [], True),
    "cbrt": (np.cbrt, (0.2, 3), [], True),
    "rcbrt": (lambda x: 1 / np.cbrt(x), (0.2, 3), [], True),
    "exp": (np.exp, (-2, 2), [], True),
    "expm1": (np.expm1, (-2, 2), [], True),
    "log": (np.log, (0.2, 3), [], True),
    "log1p": (np.log1p, (-0.5, 2), [], True),
    "log2": (np.log2, (0.2, 3), [], True),
    "log10": (np.log10, (0.2, 3), [], True),
    "sin": (np.sin, (-3, 3), [], True),
    "cos": (np.cos, (-3, 3), [], True),
    "tan": (np.tan, (-1.2, 1.2), [], True),
    "arcsin": (np.arcsin, (-0.9, 0.9), [], True),
    "arccos": (np.arccos, (-0.9, 0.9), [], True),
    "arctan": (np.arctan, (-3, 3), [], True),
    "sinh": (np.sinh, (-2, 2), [], True),
    "cosh": (np.cosh, (-2, 2), [], True),
    "tanh": (np.tanh, (-2, 2), [], True),
    "arcsinh": (np.arcsinh, (-3, 3), [], True),
    "arccosh": (np.arccosh, (1.2, 4), [], True),
    "arctanh": (np.arctanh, (-0.9, 0.9), [], True),
    "degrees": (np.degrees, (-3, 3), [], True),
    "radians": (np.radians, (-100, 100), [], True),
    "floor": (np.floor, (-3, 3), [-2, -1, 0, 1, 2], True),
    "ceil": (np.ceil, (-3, 3), [-2, -1, 0, 1, 2], True),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), (-3, 3), [-2.5, -1.5, -.5, .5, 1.5, 2.5], True),
    "rint": (lambda x: np.ceil(x - 0.5), (-3, 3), [-2.5, -1.5, -.5, .5, 1.5, 2.5], True),
    "trunc": (np.trunc, (-3, 3), [-2, -1, 0, 1, 2], True),
    "fix": (np.trunc, (-3, 3), [-2, -1, 0, 1, 2], True),
    "relu": (lambda x: np.maximum(x, 0), (-2, 2), [0], True),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-4, 4), [], True),
    "softsign": (lambda x: x / (1 + np.abs(x)), (-3, 3), [0], True),
    "erf": (erf, (-2, 2), [], True),
    "gamma": (gamma, (0.3, 4), [], True),
    "gammaln": (gammaln, (0.3, 4), [], True),
    "_copy": (lambda x: x, (-2, 2), [], True),
    "identity": (lambda x: x, (-2, 2), [], True),
    "BlockGrad": (lambda x: x, (-2, 2), [], False),
    "stop_gradient": (lambda x: x, (-2, 2), [], False),
    "make_loss": (lambda x: x, (-2, 2), [], False),
    "zeros_like": (np.zeros_like, (-2, 2), [], True),
    "ones_like": (np.ones_like, (-2, 2), [], True),
}

SHAPES = [(5,), (2, 3), (2, 1, 3, 2)]


def _data(name: str, shape: tuple, seed: int = 0) -> np.ndarray:
    ref, (lo, hi), kinks, _ = UNARY[name]
    return away_from(rand(shape, lo, hi, seed), kinks)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", SHAPES)
def test_forward(name: str, shape: tuple) -> None:
    x = _data(name, shape)
    check_forward(name, [x], {}, UNARY[name][0](x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_forward_float32(name: str) -> None:
    x = _data(name, (3, 4)).astype(np.float32)
    outs = run_forward(name, [x])
    assert outs[0].dtype == np.float32
    np.testing.assert_allclose(outs[0], UNARY[name][0](x.astype(np.float64)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(n for n in UNARY if UNARY[n][3]))
@pytest.mark.parametrize("shape", [(4,), (2, 3)])
def test_gradient(name: str, shape: tuple) -> None:
    check_gradient(name, [_data(name, shape, seed=1)], {}, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_req(name: str) -> None:
    done = check_req(name, [_data(name, (2, 3), seed=2)], {}, req=ALL_REQS)
    assert "forward:inplace" in done and "backward:inplace" in done


@pytest.mark.parametrize("name", ["BlockGrad", "stop_gradient"])
def test_block_grad_is_zero(name: str) -> None:
    x = rand((2, 3))
    g = run_backward(name, [x], {}, out_grads=[np.full((2, 3), 3.0)])
    np.testing.assert_array_equal(g[0], 0)


def test_make_loss_gradient_is_one() -> None:
    x = rand((2, 3))
    g = run_backward("make_loss", [x], {}, out_grads=[np.full((2, 3), 3.0)])
    np.testing.assert_array_equal(g[0], 1)


def test_mxnet_rounding_halves() -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    np.testing.assert_array_equal(run_forward("round", [x])[0], [-3, -2, -1, 1, 2, 3])
    np.testing.assert_array_equal(run_forward("rint", [x])[0], [-3, -2, -1, 0, 1, 2])
    np.testing.assert_array_equal(run_forward("fix", [x])[0], [-2, -1, 0, 0, 1, 2])


def test_sigmoid_is_stable_for_large_inputs() -> None:
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=np.float32)
    with np.errstate(all="raise"):
        y = run_forward("sigmoid", [x])[0]
    np.testing.assert_allclose(y, [0, 0, 0.5, 1, 1], atol=1e-7)


def test_integer_input_keeps_dtype() -> None:
    x = np.array([-3, 0, 4, 9], dtype=np.int32)
    y = run_forward("sqrt", [np.abs(x)])[0]
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, [1, 0, 2, 3])
    np.testing.assert_array_equal(run_forward("relu", [x])[0], [0, 0, 4, 9])
    np.testing.assert_array_equal(run_forward("abs", [x])[0], [3, 0, 4, 9])


def test_missing_special_functions_are_a_clear_error(monkeypatch) -> None:
    """gamma/gammaln need scipy.special (numpy) or cupyx.scipy.special (CuPy): without it
    the error names the operator, the array module and the missing function."""
    from plexnet_ops_basic import DeviceUnsupported
    from plexnet_ops_basic.tensor import _common
    monkeypatch.setattr(_common, "_special_cache", {})
    monkeypatch.setattr(_common, "_special_module", lambda xp: (None, "scipy.special", "scipy is not installed"))
    for name in ("gamma", "gammaln"):
        with pytest.raises(DeviceUnsupported, match=rf"^{name}: not available for numpy \(CPU\) arrays: "
                                                    rf"it needs scipy\.special\.{name} \(scipy is not installed\)"):
            run_forward(name, [rand((3,), 0.5, 2)])
    assert issubclass(DeviceUnsupported, NotImplementedError) and DeviceUnsupported.device_unsupported


def test_the_cuda_simulator_never_gets_cupyx_special_functions() -> None:
    """The CuPy simulator's arrays must not reach a real ``cupyx`` (installed or not)."""
    from plexnet_ops_basic import DeviceUnsupported
    from plexnet_ops_basic.tensor._common import need_special, special

    class FakeSimulator:
        __name__ = "cupy"
        __plexnet_simulator__ = "SIMULATED"

    sim = FakeSimulator()
    assert special(sim, "erf") is None
    with pytest.raises(DeviceUnsupported, match=r"^gammaln: not available for cupy \(GPU\) arrays: it needs "
                                                r"cupyx\.scipy\.special\.digamma \(plexnet's CuPy simulator has no cupyx\)"):
        need_special("gammaln", sim, "digamma")
