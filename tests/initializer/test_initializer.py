"""Initializers: MXNet's name-based dispatch, distributions, reproducibility, config."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import plexnet as mx
from plexnet.initializer import InitDesc

pytestmark = pytest.mark.timeout(60)


def _fill(init, name, shape, attrs=None):
    arr = mx.nd.zeros(shape)
    init(InitDesc(name, attrs), arr)
    return arr.asnumpy()


@pytest.mark.parametrize("name,expected", [
    ("fc1_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0), ("bn_moving_mean", 0.0),
    ("bn_moving_var", 1.0), ("bn_moving_inv_var", 0.0), ("x_moving_avg", 0.0), ("q_min", 0.0), ("q_max", 1.0),
])
def test_name_dispatch(name, expected):
    arr = mx.nd.full((3, 2), 7.0)
    mx.init.Xavier()(InitDesc(name), arr)
    np.testing.assert_array_equal(arr.asnumpy(), np.full((3, 2), expected, np.float32))
    arr2 = mx.nd.full((3, 2), 7.0)
    mx.init.Uniform()(name, arr2)  # a plain name works too
    np.testing.assert_array_equal(arr2.asnumpy(), arr.asnumpy())


def test_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="'foo'.*mx.sym.Variable"):
        mx.init.Xavier()(InitDesc("foo"), mx.nd.zeros((2, 2)))


def test_init_attribute_overrides_rule():
    out = _fill(mx.init.Xavier(), "w", (2, 3), {"__init__": mx.init.Constant(3).dumps()})
    np.testing.assert_array_equal(out, np.full((2, 3), 3, np.float32))
    out = _fill(mx.init.Uniform(), "bn_moving_var", (4,), {"__init__": '["zero", {}]'})
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))


def test_constant_zero_one():
    np.testing.assert_array_equal(_fill(mx.init.Zero(), "a_weight", (2, 2)), np.zeros((2, 2)))
    np.testing.assert_array_equal(_fill(mx.init.One(), "a_weight", (2, 2)), np.ones((2, 2)))
    np.testing.assert_array_equal(_fill(mx.init.Constant(0.5), "a_weight", (2, 2)), np.full((2, 2), 0.5))
    np.testing.assert_array_equal(_fill(mx.init.Constant([1, 2]), "a_weight", (3, 2)), [[1, 2]] * 3)


def test_uniform_and_normal_statistics():
    mx.random.seed(0)
    u = _fill(mx.init.Uniform(0.2), "w_weight", (200, 100))
    assert u.min() >= -0.2 and u.max() <= 0.2
    assert abs(u.mean()) < 0.01 and abs(u.std() - 0.2 / np.sqrt(3)) < 0.005
    n = _fill(mx.init.Normal(0.5), "w_weight", (200, 100))
    assert abs(n.mean()) < 0.02 and abs(n.std() - 0.5) < 0.02


@pytest.mark.parametrize("factor_type,fan", [("avg", (32 * 9 + 16 * 9) / 2), ("in", 32 * 9), ("out", 16 * 9)])
def test_xavier_scale(factor_type, fan):
    mx.random.seed(3)
    shape = (16, 32, 3, 3)
    scale = np.sqrt(2.0 / fan)
    u = _fill(mx.init.Xavier("uniform", factor_type, 2), "c_weight", shape)
    assert np.abs(u).max() <= scale + 1e-7
    assert np.abs(u).max() > 0.9 * scale
    g = _fill(mx.init.Xavier("gaussian", factor_type, 2), "c_weight", (64, 32, 3, 3))
    fan_g = {"avg": (32 * 9 + 64 * 9) / 2, "in": 32 * 9, "out": 64 * 9}[factor_type]
    assert abs(g.std() - np.sqrt(2.0 / fan_g)) / np.sqrt(2.0 / fan_g) < 0.05


def test_xavier_errors():
    with pytest.raises(ValueError, match="vector"):
        mx.init.Xavier()(InitDesc("v_weight"), mx.nd.zeros((5,)))
    with pytest.raises(ValueError, match="factor"):
        mx.init.Xavier(factor_type="bad")(InitDesc("v_weight"), mx.nd.zeros((5, 5)))
    with pytest.raises(ValueError, match="random type"):
        mx.init.Xavier(rnd_type="bad")(InitDesc("v_weight"), mx.nd.zeros((5, 5)))


def test_msraprelu():
    init = mx.init.MSRAPrelu(factor_type="in", slope=0.0)
    assert init.magnitude == 2.0 and init.rnd_type == "gaussian"
    assert json.loads(init.dumps()) == ["msraprelu", {"factor_type": "in", "slope": 0.0}]
    mx.random.seed(5)
    w = _fill(init, "c_weight", (128, 64))
    assert abs(w.std() - np.sqrt(2.0 / 64)) < 0.01


def test_seed_makes_draws_reproducible():
    for init in (mx.init.Uniform(), mx.init.Normal(), mx.init.Xavier(), mx.init.Orthogonal()):
        mx.random.seed(42)
        a = _fill(init, "x_weight", (8, 6))
        b = _fill(init, "x_weight", (8, 6))
        mx.random.seed(42)
        c = _fill(init, "x_weight", (8, 6))
        assert not np.array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_orthogonal():
    mx.random.seed(1)
    w = _fill(mx.init.Orthogonal(scale=1.0), "o_weight", (6, 10))
    np.testing.assert_allclose(w @ w.T, np.eye(6), atol=1e-5)


def test_bilinear_matches_mxnet():
    # mx.init.Bilinear() on (1, 1, 4, 4) and (1, 1, 3, 3) with MXNet 1.9.1
    mx4 = [0.0625, 0.1875, 0.1875, 0.0625, 0.1875, 0.5625, 0.5625, 0.1875, 0.1875, 0.5625, 0.5625, 0.1875,
           0.0625, 0.1875, 0.1875, 0.0625]
    mx3 = [0.0625, 0.1875, 0.1875, 0.1875, 0.5625, 0.5625, 0.1875, 0.5625, 0.5625]
    np.testing.assert_allclose(_fill(mx.init.Bilinear(), "up_weight", (1, 1, 4, 4)).ravel(), mx4)
    np.testing.assert_allclose(_fill(mx.init.Bilinear(), "up_weight", (1, 1, 3, 3)).ravel(), mx3)
    a = mx.nd.zeros((1, 1, 4, 4))
    mx.init.Uniform()("upsampling0_weight", a)  # legacy name rule
    np.testing.assert_allclose(a.asnumpy().ravel(), mx4)


def test_lstm_bias():
    out = _fill(mx.init.LSTMBias(forget_bias=2.0), "l_weight", (8,))
    np.testing.assert_array_equal(out, [0, 0, 2, 2, 0, 0, 0, 0])


def test_mixed_and_load(tmp_path):
    mixed = mx.init.Mixed(["fc.*", ".*"], [mx.init.Constant(2), mx.init.Zero()])
    a, b = mx.nd.zeros((2,)), mx.nd.ones((2,))
    mixed("fc_weight", a)
    mixed("conv_weight", b)
    np.testing.assert_array_equal(a.asnumpy(), [2, 2])
    np.testing.assert_array_equal(b.asnumpy(), [0, 0])
    with pytest.raises(ValueError, match="did not match"):
        mx.init.Mixed(["fc.*"], [mx.init.Zero()])("conv_weight", b)

    fname = str(tmp_path / "p.params")
    mx.nd.save(fname, {"arg:fc_weight": mx.nd.array([[1, 2], [3, 4]])})
    load = mx.init.Load(fname, default_init=mx.init.One())
    w, o = mx.nd.zeros((2, 2)), mx.nd.zeros((3,))
    load("fc_weight", w)
    load("other_weight", o)
    np.testing.assert_array_equal(w.asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(o.asnumpy(), [1, 1, 1])
    with pytest.raises(ValueError, match="Shape mismatch"):
        load("fc_weight", mx.nd.zeros((3, 3)))
    with pytest.raises(ValueError, match="no default"):
        mx.init.Load({"a": mx.nd.zeros((1,))})("b", mx.nd.zeros((1,)))


def test_create_dumps_roundtrip_and_eq():
    for init in (mx.init.Xavier(factor_type="in", magnitude=2), mx.init.Uniform(0.3), mx.init.Normal(0.2),
                 mx.init.Constant(1.5), mx.init.Zero(), mx.init.MSRAPrelu(slope=0.1)):
        again = mx.init.create(init.dumps())
        assert again == init and type(again) is type(init)
    assert isinstance(mx.init.create("zeros"), mx.init.Zero)
    assert isinstance(mx.init.create("XAVIER"), mx.init.Xavier)
    x = mx.init.Xavier()
    assert mx.init.create(x) is x
    with pytest.raises(ValueError, match="not registered"):
        mx.init.create("nope")
    assert mx.init.Uniform(0.1) != mx.init.Uniform(0.2)


def test_custom_registered_initializer():
    @mx.init.register
    class Twos(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 2
    out = _fill(mx.init.Xavier(), "w", (2,), {"__init__": Twos().dumps()})
    np.testing.assert_array_equal(out, [2, 2])


def test_verbose_logs(caplog):
    init = mx.init.Constant(1.0).set_verbosity(True)
    with caplog.at_level(logging.INFO):
        _fill(init, "x_weight", (4,))
    assert "Initialized x_weight as weight: 1.0" in caplog.text


def test_numpy_array_target():
    a = np.zeros((3, 3), np.float32)
    mx.init.Uniform(1.0)("n_weight", a)
    assert np.abs(a).max() <= 1.0 and np.abs(a).sum() > 0
