"""The same operator cases on ``cpu`` (ops-basic), on ``gpu`` with the ``xp``
implementation forced (ops-basic on CuPy) and on ``gpu`` with ``cudnn`` forced; outputs,
gradients and auxiliary states compared; the cuDNN path checked to have really run (or,
for what cuDNN cannot express, to have handed over to xp); finite-difference gradient
checks of the cuDNN path. Skips, with the reason, without a GPU or cuDNN.
"""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

plexnet_ops_cudnn = pytest.importorskip("plexnet_ops_cudnn", reason="plexnet-ops-cudnn is not installed")

from plexnet_ops_cudnn import _fe  # noqa: E402

from _harness import CUDNN_OK, CUDNN_REASON, GPU_OK, GPU_REASON, assert_close, run  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not GPU_OK, reason=f"no usable GPU: {GPU_REASON}"),
    pytest.mark.skipif(GPU_OK and not CUDNN_OK, reason=f"cuDNN is not usable: {CUDNN_REASON}"),
]

CPU, GPU = mx.cpu(), mx.gpu(0)


@pytest.fixture(autouse=True)
def strict_fp32(monkeypatch):
    """Full FP32 convolutions (no TF32) so results compare tightly with the CPU."""
    monkeypatch.setenv("PLEXNET_CUDNN_ALLOW_TF32", "0")


def _rand(rng, shape, dtype=np.float32, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


def _counter(kind: str, phase: str, path: str) -> int:
    return plexnet_ops_cudnn.stats().get(f"{kind}.{phase}.{path}", 0)


def three_way(name, kwargs, inputs, *, kind=None, expect="cudnn", aux=None, is_train=True, backward=True,
              rtol=1e-4, atol=1e-4, fwd_req="write", bwd_req="write", out_grads=None, n_outputs=1):
    """Run on cpu, gpu/xp, gpu/cudnn; compare; check which path the cuDNN run took."""
    kind = kind or name
    kw = dict(aux=aux, is_train=is_train, backward=backward, fwd_req=fwd_req, bwd_req=bwd_req,
              out_grads=out_grads)
    ref = run(name, kwargs, inputs, CPU, None, **kw)
    gx = run(name, kwargs, inputs, GPU, "xp", **kw)
    before = (_counter(kind, "forward", "cudnn"), _counter(kind, "backward", "cudnn"))
    gc = run(name, kwargs, inputs, GPU, "cudnn", **kw)
    after = (_counter(kind, "forward", "cudnn"), _counter(kind, "backward", "cudnn"))
    for label, r in (("gpu/xp", gx), ("gpu/cudnn", gc)):
        for i in range(n_outputs):
            assert_close(r["out"][i], ref["out"][i], rtol, atol, f"{name} {kwargs} {label} output {i}")
        for i, a in enumerate(ref["aux"]):
            assert_close(r["aux"][i], a, rtol, atol, f"{name} {kwargs} {label} aux {i}")
        if backward:
            for i, g in enumerate(ref["grad"]):
                assert_close(r["grad"][i], g, rtol, atol, f"{name} {kwargs} {label} grad {i}")
    # results first (a fallback must be right too), then which path ran
    why = plexnet_ops_cudnn.fallback_reasons()
    if expect == "cudnn":
        assert after[0] > before[0], f"{name} {kwargs}: forward did not run cuDNN; fallbacks: {why}"
        if backward:
            assert after[1] > before[1], f"{name} {kwargs}: backward did not run cuDNN; fallbacks: {why}"
    else:
        assert after == before, f"{name} {kwargs}: expected the xp path, cuDNN ran"
    return ref, gx, gc


# -- Convolution -------------------------------------------------------------------------------------------
CONV_CASES = [
    (dict(kernel=(3, 3), num_filter=4, pad=(1, 1)), (2, 3, 9, 9)),
    (dict(kernel=(3, 3), num_filter=5, stride=(2, 2), dilate=(2, 2), no_bias=True), (2, 3, 11, 10)),
    (dict(kernel=(3, 3), num_filter=6, num_group=2, pad=(1, 1)), (2, 4, 7, 7)),
    (dict(kernel=(3, 3), num_filter=4, num_group=4, pad=(1, 1)), (2, 4, 8, 8)),  # depthwise
    (dict(kernel=(1, 1), num_filter=8, stride=(2, 2)), (3, 4, 6, 6)),
    (dict(kernel=(3,), num_filter=4, stride=(2,), pad=(1,)), (2, 3, 11)),  # 1-D
    (dict(kernel=(3, 3, 3), num_filter=3, pad=(1, 1, 1)), (1, 2, 5, 6, 6)),  # 3-D
]


@pytest.mark.parametrize("kwargs,dshape", CONV_CASES)
def test_convolution_three_ways(kwargs, dshape):
    rng = np.random.default_rng(0)
    c = dshape[1]
    k = kwargs["num_filter"]
    wshape = (k, c // kwargs.get("num_group", 1)) + tuple(kwargs["kernel"])
    inputs = [_rand(rng, dshape), _rand(rng, wshape, low=-0.5, high=0.5)]
    if not kwargs.get("no_bias"):
        inputs.append(_rand(rng, (k,)))
    three_way("Convolution", kwargs, inputs, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("req", ["add", "null"])
def test_convolution_req(req):
    rng = np.random.default_rng(1)
    inputs = [_rand(rng, (2, 3, 6, 6)), _rand(rng, (4, 3, 3, 3)), _rand(rng, (4,))]
    three_way("Convolution", dict(kernel=(3, 3), num_filter=4), inputs, fwd_req="add" if req == "add" else "write",
              bwd_req=req, rtol=1e-4, atol=2e-4)


def test_convolution_fp16_against_fp32():
    rng = np.random.default_rng(2)
    x, w, b = _rand(rng, (2, 8, 8, 8)), _rand(rng, (8, 8, 3, 3), low=-0.3, high=0.3), _rand(rng, (8,))
    kw = dict(kernel=(3, 3), num_filter=8, pad=(1, 1))
    ref = run("Convolution", kw, [x, w, b], CPU)
    got = run("Convolution", kw, [x.astype(np.float16), w.astype(np.float16), b.astype(np.float16)], GPU, "cudnn")
    assert_close(got["out"][0], ref["out"][0], 2e-2, 2e-2, "fp16 conv output")
    assert_close(got["grad"][1], ref["grad"][1], 5e-2, 5e-1, "fp16 conv weight grad")


def test_convolution_tf32_allowed_is_close(monkeypatch):
    monkeypatch.setenv("PLEXNET_CUDNN_ALLOW_TF32", "1")
    rng = np.random.default_rng(3)
    inputs = [_rand(rng, (4, 16, 12, 12)), _rand(rng, (32, 16, 3, 3), low=-0.2, high=0.2), _rand(rng, (32,))]
    ref = run("Convolution", dict(kernel=(3, 3), num_filter=32, pad=(1, 1)), inputs, CPU)
    got = run("Convolution", dict(kernel=(3, 3), num_filter=32, pad=(1, 1)), inputs, GPU, "cudnn")
    scale = float(np.abs(ref["out"][0]).max())
    assert_close(got["out"][0], ref["out"][0], 1e-2, 1e-2 * scale, "tf32 conv output")


# -- Pooling -------------------------------------------------------------------------------------------------
POOL_CASES = [
    (dict(kernel=(2, 2), stride=(2, 2), pool_type="avg"), (2, 3, 8, 8), "cudnn"),
    (dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg"), (2, 3, 7, 7), "cudnn"),
    (dict(global_pool=True, pool_type="avg", kernel=(1, 1)), (2, 4, 5, 6), "cudnn"),
    (dict(kernel=(2, 2), stride=(2, 2), pool_type="sum"), (2, 3, 6, 6), "cudnn"),
    (dict(kernel=(3,), stride=(2,), pool_type="avg"), (2, 3, 9), "cudnn"),
    (dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (2, 3, 8, 8), "xp"),
    (dict(kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full"), (2, 3, 7, 7), "xp"),
]


@pytest.mark.parametrize("kwargs,dshape,path", POOL_CASES)
def test_pooling_three_ways(kwargs, dshape, path):
    rng = np.random.default_rng(4)
    three_way("Pooling", kwargs, [_rand(rng, dshape)], expect=path, rtol=1e-5, atol=1e-5)


# -- BatchNorm -----------------------------------------------------------------------------------------------
BN_CASES = [
    (dict(fix_gamma=False), (4, 3, 5, 5), True),
    (dict(fix_gamma=True), (4, 3, 5, 5), True),
    (dict(fix_gamma=False, eps=1e-5, momentum=0.8), (8, 5), True),
    (dict(fix_gamma=False), (2, 4, 3, 3, 3), True),
    (dict(fix_gamma=False, use_global_stats=True), (4, 3, 5, 5), True),
    (dict(fix_gamma=False), (4, 3, 5, 5), False),  # inference
]


@pytest.mark.parametrize("kwargs,dshape,train", BN_CASES)
def test_batchnorm_three_ways(kwargs, dshape, train):
    rng = np.random.default_rng(5)
    c = dshape[1]
    inputs = [_rand(rng, dshape, low=-2, high=3), _rand(rng, (c,), low=0.5, high=1.5), _rand(rng, (c,))]
    aux = [_rand(rng, (c,), low=-0.1, high=0.1), _rand(rng, (c,), low=0.5, high=1.5)]
    three_way("BatchNorm", dict(kwargs, output_mean_var=True), inputs, aux=aux, is_train=train,
              backward=train, n_outputs=3, rtol=2e-4, atol=2e-4,
              out_grads=[_rand(rng, dshape), np.zeros(c, np.float32), np.zeros(c, np.float32)])


# -- Activation ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("shape", [(4, 7), (2, 3, 5, 5), (1000,)])
def test_activation_three_ways(act, shape):
    rng = np.random.default_rng(6)
    x = _rand(rng, shape, low=-3, high=3)
    three_way("Activation", dict(act_type=act), [x], out_grads=[_rand(rng, shape)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_activation_in_place_and_add(act):
    rng = np.random.default_rng(7)
    x = _rand(rng, (3, 4, 5), low=-3, high=3)
    three_way("Activation", dict(act_type=act), [x], fwd_req="inplace", backward=False, rtol=1e-5, atol=1e-6)
    three_way("Activation", dict(act_type=act), [x], fwd_req="add", bwd_req="add",
              out_grads=[_rand(rng, x.shape)], rtol=1e-5, atol=1e-6)
    three_way("Activation", dict(act_type=act), [x], bwd_req="inplace",
              out_grads=[_rand(rng, x.shape)], rtol=1e-5, atol=1e-6)


def test_activation_other_types_run_xp():
    rng = np.random.default_rng(8)
    three_way("Activation", dict(act_type="softrelu"), [_rand(rng, (4, 5))], expect="xp", rtol=1e-5, atol=1e-6)


# -- softmax ------------------------------------------------------------------------------------------------------
SM_CASES = [
    ("softmax", dict(), (8, 10)),
    ("softmax", dict(axis=1), (2, 3, 4, 5)),
    ("softmax", dict(axis=0), (6, 4)),
    ("SoftmaxActivation", dict(), (4, 3, 2, 2)),
    ("SoftmaxActivation", dict(mode="channel"), (2, 5, 3, 3)),
]


@pytest.mark.parametrize("name,kwargs,shape", SM_CASES)
def test_softmax_three_ways(name, kwargs, shape):
    rng = np.random.default_rng(9)
    x = _rand(rng, shape, low=-4, high=4)
    three_way(name, kwargs, [x], out_grads=[_rand(rng, shape)], rtol=1e-5, atol=1e-6)
    three_way(name, kwargs, [x], fwd_req="inplace", backward=False, rtol=1e-5, atol=1e-6)


def test_softmax_temperature_runs_xp():
    rng = np.random.default_rng(10)
    three_way("softmax", dict(temperature=2.0), [_rand(rng, (4, 6))], expect="xp", kind="softmax",
              rtol=1e-5, atol=1e-6)


# -- finite-difference gradient checks of the cuDNN path ----------------------------------------------------
def _numeric_grad(name, kwargs, inputs, wrt, proj, aux=None, eps=1e-2):
    """d sum(out0 * proj) / d inputs[wrt], central differences, float64 accumulation."""
    x = inputs[wrt].astype(np.float64)
    g = np.zeros_like(x)
    flat = x.reshape(-1)
    for j in range(flat.size):
        vals = []
        for d in (eps, -eps):
            xs = flat.copy()
            xs[j] += d
            ins = list(inputs)
            ins[wrt] = xs.reshape(x.shape).astype(inputs[wrt].dtype)
            out = run(name, kwargs, ins, GPU, "cudnn", aux=None if aux is None else [a.copy() for a in aux],
                      backward=False)["out"][0]
            vals.append(float((out.astype(np.float64) * proj).sum()))
        g.reshape(-1)[j] = (vals[0] - vals[1]) / (2 * eps)
    return g


GRAD_CASES = [
    ("Convolution", dict(kernel=(3, 3), num_filter=3, stride=(2, 2), pad=(1, 1), num_group=1),
     [(1, 2, 5, 5), (3, 2, 3, 3), (3,)], None),
    ("Convolution", dict(kernel=(3, 3), num_filter=4, num_group=2, no_bias=True), [(1, 4, 5, 5), (4, 2, 3, 3)], None),
    ("Pooling", dict(kernel=(2, 2), stride=(1, 1), pool_type="avg"), [(1, 2, 4, 4)], None),
    ("BatchNorm", dict(fix_gamma=False), [(3, 2, 3, 3), (2,), (2,)], "bn"),
    ("Activation", dict(act_type="sigmoid"), [(3, 7)], None),
    ("Activation", dict(act_type="tanh"), [(3, 7)], None),
    ("softmax", dict(), [(3, 6)], None),
]


@pytest.mark.parametrize("name,kwargs,shapes,extra", GRAD_CASES)
def test_gradient_check_on_gpu(name, kwargs, shapes, extra):
    rng = np.random.default_rng(11)
    inputs = [_rand(rng, s) for s in shapes]
    aux = None
    if extra == "bn":
        inputs[1] = _rand(rng, shapes[1], low=0.5, high=1.5)
        aux = [np.zeros(shapes[1], np.float32), np.ones(shapes[1], np.float32)]
    out = run(name, kwargs, inputs, GPU, "cudnn", aux=aux, backward=False)["out"][0]
    proj = rng.uniform(-1, 1, out.shape)
    res = run(name, kwargs, inputs, GPU, "cudnn", aux=aux, out_grads=[proj.astype(np.float32)]
              + ([np.zeros(shapes[1], np.float32)] * 2 if extra == "bn" else []))
    for wrt in range(len(inputs)):
        num = _numeric_grad(name, kwargs, inputs, wrt, proj, aux=aux)
        scale = max(1.0, float(np.abs(num).max()))
        assert_close(res["grad"][wrt], num, 2e-2, 5e-3 * scale, f"{name} {kwargs}: d/d input {wrt}")


# -- through the executor -------------------------------------------------------------------------------------
def test_small_net_through_simple_bind_matches_cpu():
    try:
        from plexnet.executor import Executor  # noqa: F401
    except ImportError as e:
        pytest.skip(f"executor not available: {e}")
    d = mx.sym.Variable("data")
    h = mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, pad=(1, 1), name="c1")
    h = mx.sym.BatchNorm(h, fix_gamma=False, name="bn1")
    h = mx.sym.Activation(h, act_type="relu")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    h = mx.sym.Flatten(h)
    h = mx.sym.FullyConnected(h, num_hidden=5, name="fc")
    net = mx.sym.softmax(h)
    rng = np.random.default_rng(12)
    shape = (4, 3, 8, 8)
    results = {}
    before = plexnet_ops_cudnn.stats().get("Convolution.forward.cudnn", 0)
    for ctx in (CPU, GPU):
        exe = net.simple_bind(ctx=ctx, data=shape, grad_req="write")
        r = np.random.default_rng(13)
        for n, arr in sorted(exe.arg_dict.items()):
            arr[:] = r.uniform(-0.5, 0.5, arr.shape).astype(np.float32)
        for n, arr in sorted(exe.aux_dict.items()):
            arr[:] = 1.0 if "var" in n else 0.0
        exe.arg_dict["data"][:] = rng.uniform(-1, 1, shape).astype(np.float32) if ctx == CPU else results["x"]
        results.setdefault("x", exe.arg_dict["data"].asnumpy())
        exe.forward(is_train=True)
        og = np.linspace(-1, 1, exe.outputs[0].size).reshape(exe.outputs[0].shape).astype(np.float32)
        exe.backward([mx.nd.array(og, ctx=ctx)])
        results[str(ctx)] = ({k: v.asnumpy() for k, v in exe.grad_dict.items() if v is not None},
                                    exe.outputs[0].asnumpy())
    assert plexnet_ops_cudnn.stats().get("Convolution.forward.cudnn", 0) > before
    (gc, oc), (gg, og_) = results[str(CPU)], results[str(GPU)]
    assert_close(og_, oc, 1e-4, 1e-5, "net output")
    for k in gc:
        assert_close(gg[k], gc[k], 1e-3, 1e-4, f"grad {k}")


def test_graph_cache_reuses_built_plans():
    rng = np.random.default_rng(14)
    inputs = [_rand(rng, (2, 3, 6, 6)), _rand(rng, (4, 3, 3, 3)), _rand(rng, (4,))]
    run("Convolution", dict(kernel=(3, 3), num_filter=4), inputs, GPU, "cudnn")
    built = plexnet_ops_cudnn.stats().get("cache.built", 0)
    run("Convolution", dict(kernel=(3, 3), num_filter=4), inputs, GPU, "cudnn")
    assert plexnet_ops_cudnn.stats().get("cache.built", 0) == built
    assert plexnet_ops_cudnn.stats().get("cache.hit", 0) > 0
    assert len(_fe.CACHE) > 0
