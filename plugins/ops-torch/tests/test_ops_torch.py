"""The torch implementations against ops-basic's numpy ones (same inputs, every req),
the fallbacks where torch would differ from MXNet, and the registry wiring."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _compare import chosen, compare, impl  # noqa: E402

from plexnet.plugins import registries  # noqa: E402
from plexnet.testing import opcheck  # noqa: E402
from plexnet_ops_torch import _base  # noqa: E402
from plexnet_ops_torch.convolution import TorchConvolutionOp  # noqa: E402

F32, F64 = np.float32, np.float64
REQS = ("write", "add", "null")


def rand(shape, dtype=F32, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


# -- Convolution / Deconvolution ---------------------------------------------------------------
@pytest.fixture
def torch_for_every_width(monkeypatch):
    """Some test geometries have one input channel per group, which runs ops-basic by
    default: let torch take them so that its path is what these tests compare."""
    from plexnet_ops_torch import convolution as tconv
    monkeypatch.setattr(tconv, "TORCH_MIN_CHANNELS", 1)


CONV = [
    ((2, 3, 9, 9), dict(kernel=(3, 3), num_filter=4, pad=(1, 1))),
    ((2, 4, 9, 8), dict(kernel=(3, 2), num_filter=6, stride=(2, 1), dilate=(1, 2), pad=(1, 0), num_group=2)),
    ((3, 4, 7, 7), dict(kernel=(1, 1), num_filter=5, stride=(2, 2), no_bias=True)),
    ((2, 3, 11), dict(kernel=(3,), num_filter=4, stride=(2,), pad=(1,))),
    ((1, 2, 5, 6, 5), dict(kernel=(3, 3, 2), num_filter=3, pad=(1, 0, 1))),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", range(len(CONV)))
@pytest.mark.parametrize("req", REQS)
def test_convolution_matches_xp(case, dtype, req, torch_for_every_width):
    dshape, kw = CONV[case]
    args = opcheck.random_args("Convolution", kw, data=dshape, dtype=dtype)
    compare("Convolution", args, kw, req=req)


def test_single_channel_convolutions_run_xp(monkeypatch):
    from plexnet_ops_torch import convolution as tconv
    kw = dict(kernel=(3, 3), num_filter=4)
    prop = opcheck.make_prop("Convolution", kw)
    op = tconv.TorchConvolutionOp(prop)
    assert op.channels((2, 3, 6, 6)) == 3 and op.geometry((2, 3, 6, 6)) is not None  # ResNet's stem
    assert op.channels((2, 1, 6, 6)) == 1 and op.geometry((2, 1, 6, 6)) is None  # LeNet's first layer
    calls = []
    # the fallback: the next implementation in the registry (ops-numba's where installed)
    monkeypatch.setattr(type(op.xp_op), "forward", lambda self, *a: calls.append("xp"))
    x = np.zeros((2, 1, 6, 6), F32)
    op.forward(opcheck._opctx(True, []), [x, np.zeros((4, 1, 3, 3), F32), np.zeros(4, F32)],
               [tconv.NULL.__class__.write], [np.zeros((2, 4, 4, 4), F32)], [])
    assert calls == ["xp"]
    dprop = opcheck.make_prop("Deconvolution", dict(kernel=(3, 3), num_filter=2))
    assert tconv.TorchDeconvolutionOp(dprop).channels((1, 16, 5, 5)) == 2  # num_filter


def test_convolution_gradient_numerical(torch_for_every_width, monkeypatch):
    from plexnet_ops_torch import convolution as tconv
    monkeypatch.setattr(tconv.ConvolutionOp, "backward", None)  # fails loudly if ops-basic ran
    kw = dict(kernel=(3, 3), num_filter=2, stride=(2, 2), pad=(1, 1))
    args = opcheck.random_args("Convolution", kw, data=(1, 2, 4, 4))
    assert chosen("Convolution", kw) is TorchConvolutionOp
    opcheck.check_gradient("Convolution", args, kw)


DECONV = [
    ((2, 3, 5, 5), dict(kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1), adj=(1, 1), no_bias=False)),
    ((2, 4, 4, 4), dict(kernel=(4, 4), num_filter=2, stride=(2, 2), num_group=2, target_shape=(8, 8))),
    ((1, 2, 6), dict(kernel=(3,), num_filter=3, dilate=(2,))),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", range(len(DECONV)))
def test_deconvolution_matches_xp(case, dtype, torch_for_every_width):
    dshape, kw = DECONV[case]
    args = opcheck.random_args("Deconvolution", kw, data=dshape, dtype=dtype)
    for req in ("write", "add"):
        compare("Deconvolution", args, kw, req=req)


# -- BatchNorm ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("kw", [dict(fix_gamma=False, momentum=0.9, eps=1e-5), dict(fix_gamma=True),
                                dict(fix_gamma=False, use_global_stats=True), dict(output_mean_var=True)])
@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (6, 4)])
def test_batchnorm_matches_xp(shape, kw, dtype):
    args = opcheck.random_args("BatchNorm", kw, data=shape, dtype=dtype)
    c = shape[1]
    aux = {"moving_mean": rand((c,), dtype, 3), "moving_var": rand((c,), dtype, 4, 0.5, 2.0)}
    for req in ("write", "add"):
        for train in (True, False):
            compare("BatchNorm", args, kw, req=req, is_train=train, aux=aux)


def test_batchnorm_moving_stats_use_biased_variance():
    x = rand((8, 2, 3, 3), F64, 5)
    kw = dict(fix_gamma=False, momentum=0.75)
    args = {"data": x, "gamma": np.ones(2), "beta": np.zeros(2)}
    aux = {"moving_mean": np.zeros(2), "moving_var": np.ones(2)}
    with impl("BatchNorm", "torch"):
        outs = opcheck.run_forward("BatchNorm", args, kw, aux, is_train=True)
        np.testing.assert_array_equal(outs.aux[0], 0)      # forward: unchanged (MXNet's CPU operator)
        opcheck.run_backward("BatchNorm", args, kw, aux=aux, is_train=True)
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(aux["moving_mean"], 0.25 * mean, rtol=1e-10)
    np.testing.assert_allclose(aux["moving_var"], 0.75 + 0.25 * var, rtol=1e-10)


def test_batchnorm_other_axis_falls_back():
    kw = dict(axis=-1, fix_gamma=False)
    args = opcheck.random_args("BatchNorm", kw, data=(3, 4, 5), dtype=F64)
    compare("BatchNorm", args, kw)


# -- Activation -----------------------------------------------------------------------------------
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
@pytest.mark.parametrize("req", ("write", "add", "inplace", "null"))
@pytest.mark.parametrize("dtype", [F32, F64])
def test_activation_matches_xp(act, req, dtype, monkeypatch):
    from plexnet_ops_torch.activation import TorchActivationOp
    # sigmoid and tanh are implemented but not chosen by default: test them too
    monkeypatch.setattr(TorchActivationOp, "types", ("relu", "sigmoid", "tanh"))
    if req == "inplace" and act == "softsign":
        pytest.skip("softsign reads its input in backward: no in-place forward")
    kw = dict(act_type=act)
    args = {"data": rand((3, 4, 5), dtype, 7, -3, 3)}
    compare("Activation", args, kw, req=req)


# -- Pooling --------------------------------------------------------------------------------------
POOL = [
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),
    ((2, 3, 7, 7), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),
    ((2, 3, 7, 7), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((2, 3, 7, 7), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False)),
    ((2, 3, 8, 8), dict(kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full")),
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="sum")),
    ((2, 3, 5, 6), dict(kernel=(1, 1), global_pool=True, pool_type="avg")),
    ((2, 3, 5, 6), dict(kernel=(1, 1), global_pool=True, pool_type="max")),
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pool_type="max")),
    ((1, 2, 4, 6, 6), dict(kernel=(2, 3, 3), stride=(2, 1, 2), pad=(0, 1, 1), pool_type="avg")),
    ((2, 2, 6, 6), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),     # falls back
    ((2, 2, 7, 7), dict(kernel=(3, 3), stride=(3, 3), pad=(1, 1), pool_type="max",      # torch drops a
                        pooling_convention="full")),                                    # window: falls back
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", range(len(POOL)))
def test_pooling_matches_xp(case, dtype):
    dshape, kw = POOL[case]
    args = {"data": rand(dshape, dtype, case)}
    for req in ("write", "add"):
        compare("Pooling", args, kw, req=req)


def test_maxpool_ties_route_to_first_maximum():
    x = np.zeros((1, 1, 4, 4), F32)  # every window all ties (as after a ReLU)
    kw = dict(kernel=(2, 2), stride=(2, 2), pool_type="max")
    with impl("Pooling", "torch"):
        g = opcheck.run_backward("Pooling", {"data": x}, kw, [np.ones((1, 1, 2, 2), F32)])
    want = np.zeros((4, 4), F32)
    want[::2, ::2] = 1
    np.testing.assert_array_equal(g[0][0, 0], want)


# -- dtypes, registry ---------------------------------------------------------------------------
def test_float16_runs_xp():
    kw = dict(kernel=(3, 3), num_filter=2)
    args = {k: v.astype(np.float16) for k, v in opcheck.random_args("Convolution", kw, data=(1, 2, 5, 5)).items()}
    with impl("Convolution", "torch"):
        out = opcheck.run_forward("Convolution", args, kw)
    with impl("Convolution", "xp"):
        ref = opcheck.run_forward("Convolution", args, kw)
    np.testing.assert_array_equal(out[0], ref[0])


@pytest.mark.parametrize("name", ["Convolution", "Deconvolution", "BatchNorm", "Activation", "Pooling"])
def test_torch_is_the_default_cpu_implementation(name):
    reg = registries().operators
    assert reg.select_impl(name, "cpu").impl_name == "torch"
    names = {r.impl_name for r in reg.implementations(name)}
    assert {"torch", "xp"} <= names


def test_probe_reports_why_torch_is_missing(monkeypatch):
    monkeypatch.setattr(_base, "_checked", True)
    monkeypatch.setattr(_base, "torch", None)
    monkeypatch.setattr(_base, "_reason", "torch cannot be imported (ImportError: test)")
    assert not _base.available()
    assert "torch" in _base.available.reason()
    reg = registries().operators
    reg.force_impl("Convolution", "cpu", None)  # drops the registry's cached choice
    try:
        # the registry skips the unavailable implementation
        assert reg.select_impl("Convolution", "cpu").impl_name in ("xp", "numba")
    finally:
        monkeypatch.undo()
        reg.force_impl("Convolution", "cpu", None)
    assert reg.select_impl("Convolution", "cpu").impl_name == "torch"


def test_executor_step_uses_torch_and_matches_xp(torch_for_every_width):
    import plexnet as mx
    data = mx.sym.Variable("data")
    h = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="c")
    h = mx.sym.BatchNorm(h, fix_gamma=False, name="bn")
    h = mx.sym.Activation(h, act_type="relu")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=3, name="fc")
    net = mx.sym.SoftmaxOutput(h, name="softmax")
    x = rand((4, 2, 6, 6), F32, 9)
    res = {}
    for which in ("xp", "torch"):
        reg = registries().operators
        for op in ("Convolution", "BatchNorm", "Activation", "Pooling"):
            reg.force_impl(op, "cpu", which)
        try:
            exe = net.simple_bind(mx.cpu(), data=x.shape, grad_req="write")
            for i, (n, a) in enumerate(sorted(exe.arg_dict.items())):
                if n not in ("data", "softmax_label"):
                    a[:] = rand(a.shape, F32, 20 + i, -0.5, 0.5)
            exe.arg_dict["data"][:] = x
            exe.arg_dict["softmax_label"][:] = np.array([0, 1, 2, 1], F32)
            exe.forward(is_train=True)
            exe.backward()
            res[which] = {n: g.asnumpy() for n, g in exe.grad_dict.items() if g is not None}
            res[which]["out"] = exe.outputs[0].asnumpy()
        finally:
            for op in ("Convolution", "BatchNorm", "Activation", "Pooling"):
                reg.force_impl(op, "cpu", None)
    for k in res["xp"]:
        np.testing.assert_allclose(res["torch"][k], res["xp"][k], rtol=1e-3, atol=1e-5, err_msg=k)



def test_small_calls_run_ops_basic(monkeypatch):
    """Below MIN_ELEMENTS a call takes the numpy (ops-basic) path, above it torch's."""
    import numpy as np
    from plexnet_ops_torch import _base
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 1000)
    small = [np.zeros((10, 10), np.float32)]
    big = [np.zeros((10, 10), np.float32), np.zeros((40, 40), np.float32)]
    assert not _base.ok_arrays(small)
    assert _base.ok_arrays(big)
    assert not _base.ok_arrays([np.zeros((40, 40), np.float32), np.zeros((40, 40), np.float64)])
