import numpy as np
import pytest

from opcheck import REQS, check_forward, check_gradient, check_req, make_prop, run_backward, run_forward

REFS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)),
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
}
SHAPES = [(7,), (3, 4), (2, 3, 2, 2)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("act", sorted(REFS))
def test_forward(act, shape, rng):
    x = rng.uniform(-3, 3, shape).astype("float32")
    check_forward("Activation", [x], dict(act_type=act), REFS[act](x.astype("f8")), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("act", sorted(REFS))
def test_gradient(act, shape, rng):
    x = rng.uniform(-3, 3, shape)
    x[np.abs(x) < 1e-3] = 0.5  # keep relu away from its kink
    check_gradient("Activation", [x], dict(act_type=act))


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("act", sorted(REFS))
def test_req(act, req, rng):
    check_req("Activation", [rng.uniform(-2, 2, (3, 5))], dict(act_type=act), req=req)


def test_extreme_values_are_finite():
    x = np.array([-1000.0, -50, 0, 50, 1000], dtype="float32")
    for act in REFS:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            out = run_forward("Activation", [x], dict(act_type=act))[0]
        assert np.all(np.isfinite(out)), act


def test_contract():
    relu = make_prop("Activation", dict(act_type="relu"))
    assert relu.declare_backward_dependency([0], [1], [2]) == [0, 2]
    assert relu.forward_inplace_option([1], [2]) == [(1, 2)]
    assert relu.backward_inplace_option([0], [1], [2], [3]) == [(0, 3)]
    ss = make_prop("Activation", dict(act_type="softsign"))
    assert ss.declare_backward_dependency([0], [1], [2]) == [0, 1]
    assert ss.forward_inplace_option([1], [2]) == []


def test_relu_grad_at_zero_is_zero():
    g = run_backward("Activation", [np.array([-1.0, 0.0, 2.0])], dict(act_type="relu"))
    np.testing.assert_array_equal(g[0], [0, 0, 1])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_softrelu_is_mxnets_formula(dtype):
    """``x > 20 ? x : log1p(exp(x))`` (MXNet's threshold), float16 through float32 (its
    exp(20) overflows float16), NaN and infinities kept; in place too."""
    x = np.array([-1000, -20, -1, 0, 1, 10, 19.5, 20, 20.5, 1000, np.inf, -np.inf, np.nan], dtype=dtype)
    x64 = x.astype("f8")
    want = np.where(x64 > 20, x64, np.log1p(np.exp(np.minimum(x64, 20)))).astype(dtype)
    got = run_forward("Activation", [x], dict(act_type="softrelu"))[0]
    np.testing.assert_allclose(got, want, rtol={"float16": 1e-3, "float32": 1e-6, "float64": 1e-14}[dtype])
    from plexnet_ops_basic.nn.activation import act_forward
    y = x.copy()
    act_forward(np, "softrelu", y, y)   # out is the input
    np.testing.assert_array_equal(y, got)
