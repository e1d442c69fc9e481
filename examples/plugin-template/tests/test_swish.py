"""The example plugin, once pip-installed, shows up in plexnet.nd and plexnet.sym."""
import numpy as np
import pytest

import plexnet as mx


def test_plugin_is_listed():
    report = {r["name"]: r for r in mx.plugins.get_manager().report()}
    assert report["swish"]["status"] == "ok"
    assert set(report["swish"]["registered"]["operators"]) >= {"swish", "HardSwish"}


def test_nd_swish_values():
    x = np.linspace(-4, 4, 9).astype("f4")
    y = mx.nd.swish(mx.nd.array(x), beta=2.0).asnumpy()
    np.testing.assert_allclose(y, x / (1 + np.exp(-2 * x)), rtol=1e-5)


def test_nd_hardswish_values():
    x = np.linspace(-4, 4, 9).astype("f4")
    y = mx.nd.HardSwish(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(y, x * np.clip(x + 3, 0, 6) / 6, rtol=1e-6)


def test_bad_argument_names_operator_and_argument():
    with pytest.raises(mx.operator.ParamError, match=r"swish.*'gamma'"):
        mx.nd.swish(mx.nd.ones((2,)), gamma=1.0)


@pytest.mark.timeout(60)
def test_sym_swish_gradient():
    sym = pytest.importorskip("plexnet.symbol")
    x = np.random.RandomState(0).randn(3, 4)
    data = sym.Variable("data")
    net = sym.swish(data, beta=1.5)
    exe = net.simple_bind(mx.cpu(), data=x.shape, type_dict={"data": np.float64})
    exe.arg_dict["data"][:] = x
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones(x.shape, dtype=np.float64)])
    s = 1 / (1 + np.exp(-1.5 * x))
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), s + 1.5 * x * s * (1 - s), rtol=1e-6)
