"""Symbolic execution, kvstores and Module on gpu contexts, against the same computation
on the CPU."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

from _gpu_suite import TOL, device_of, needs_two, num_gpus

pytestmark = pytest.mark.timeout(60)


def mlp():
    d = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(d, num_hidden=16, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.FullyConnected(h, num_hidden=4, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def cnn():
    d = mx.sym.Variable("data")
    h = mx.sym.Convolution(d, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    h = mx.sym.BatchNorm(h, fix_gamma=False, name="bn")
    h = mx.sym.Activation(h, act_type="relu", name="relu")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    h = mx.sym.Convolution(h, kernel=(3, 3), num_filter=3, name="conv2")
    h = mx.sym.Pooling(h, kernel=(2, 2), pool_type="avg", global_pool=True, name="gpool")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def _run(net, ctx, shape, steps=2):
    """simple_bind on ``ctx``, deterministic inputs, ``steps`` forward/backward passes (the
    aux states move); returns outputs, gradients and auxiliary states as numpy."""
    exe = net.simple_bind(ctx, data=shape)
    rng = np.random.RandomState(0)
    for k, v in exe.arg_dict.items():
        if k == "softmax_label":
            v[:] = rng.randint(0, 3, size=v.shape).astype("f4")
        else:
            v[:] = (rng.randn(*v.shape) * 0.3).astype("f4")
    for k, v in exe.aux_dict.items():
        v[:] = np.ones(v.shape, "f4") if "var" in k else np.zeros(v.shape, "f4")
    for _ in range(steps):
        exe.forward(is_train=True)
        exe.backward()
    outs = [o.asnumpy() for o in exe.outputs]
    grads = {k: g.asnumpy() for k, g in exe.grad_dict.items() if g is not None}
    aux = {k: a.asnumpy() for k, a in exe.aux_dict.items()}
    exe.forward(is_train=False)
    infer = [o.asnumpy() for o in exe.outputs]
    if ctx.device_type == "gpu":
        assert all(device_of(o) == ctx.device_id for o in exe.outputs)
        assert all(device_of(g) == ctx.device_id for g in exe.grad_dict.values() if g is not None)
    return outs, grads, aux, infer


def _compare(a, b):
    for x, y in zip(a[0], b[0]):
        np.testing.assert_allclose(x, y, **TOL)
    assert a[1].keys() == b[1].keys()
    for k in a[1]:
        np.testing.assert_allclose(a[1][k], b[1][k], err_msg=f"gradient {k}", **TOL)
    for k in a[2]:
        np.testing.assert_allclose(a[2][k], b[2][k], err_msg=f"aux {k}", **TOL)
    for x, y in zip(a[3], b[3]):
        np.testing.assert_allclose(x, y, **TOL)


@pytest.mark.parametrize("dev", [0, pytest.param(1, marks=needs_two)])
def test_mlp_forward_backward_matches_cpu(dev):
    net = mlp()
    _compare(_run(net, mx.cpu(), (8, 10)), _run(net, mx.gpu(dev), (8, 10)))


@pytest.mark.parametrize("dev", [0, pytest.param(1, marks=needs_two)])
def test_cnn_forward_backward_matches_cpu(dev):
    net = cnn()
    _compare(_run(net, mx.cpu(), (4, 2, 8, 8)), _run(net, mx.gpu(dev), (4, 2, 8, 8)))


def _gpu_ctx_lists():
    lists = [pytest.param([0, 0], id="gpu0+gpu0")]
    lists.append(pytest.param([0, 1], id="gpu0+gpu1", marks=needs_two))
    return lists


@pytest.mark.parametrize("kv_type", ["device", "local_allreduce_device", "local"])
@pytest.mark.parametrize("devs", _gpu_ctx_lists())
def test_kvstore_push_pull_across_gpus_matches_cpu(kv_type, devs):
    shapes = {3: (4, 5), 7: (257, 3)}
    rng = np.random.RandomState(1)
    host = {k: [rng.randn(*s).astype("f4") for _ in devs] for k, s in shapes.items()}
    init = {k: rng.randn(*s).astype("f4") for k, s in shapes.items()}

    def run(ctxs, kvt):
        kv = mx.kv.create(kvt)
        for k, s in shapes.items():
            kv.init(k, mx.nd.array(init[k]))
        results = {}
        for k in shapes:
            kv.push(k, [mx.nd.array(h, ctx=c) for h, c in zip(host[k], ctxs)])
            outs = [mx.nd.zeros(shapes[k], ctx=c) for c in ctxs]
            kv.pull(k, out=outs)
            results[k] = outs
        return results

    gpu = run([mx.gpu(d) for d in devs], kv_type)
    cpu = run([mx.cpu(i) for i in range(len(devs))], "local")
    for k in shapes:
        expect = sum(host[k])
        for d, o, c in zip(devs, gpu[k], cpu[k]):
            assert o.context == mx.gpu(d) and device_of(o) == d
            np.testing.assert_allclose(o.asnumpy(), c.asnumpy(), **TOL)
            np.testing.assert_allclose(o.asnumpy(), expect, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kv_type", ["device", "local_allreduce_device"])
@pytest.mark.parametrize("devs", _gpu_ctx_lists())
def test_kvstore_with_optimizer_on_gpus_matches_cpu(kv_type, devs):
    rng = np.random.RandomState(2)
    w0 = rng.randn(6, 4).astype("f4")
    grads = [[rng.randn(6, 4).astype("f4") for _ in devs] for _ in range(3)]

    def run(ctxs, kvt):
        kv = mx.kv.create(kvt)
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, wd=1e-3))
        kv.init("w", mx.nd.array(w0))
        outs = [mx.nd.zeros((6, 4), ctx=c) for c in ctxs]
        for step in grads:
            kv.push("w", [mx.nd.array(g, ctx=c) for g, c in zip(step, ctxs)])
            kv.pull("w", out=outs)
        return [o.asnumpy() for o in outs]

    gpu = run([mx.gpu(d) for d in devs], kv_type)
    cpu = run([mx.cpu(i) for i in range(len(devs))], "local")
    for g, c in zip(gpu, cpu):
        np.testing.assert_allclose(g, c, **TOL)


def _fit(ctx, kvstore="local"):
    rng = np.random.RandomState(3)
    X = rng.randn(64, 10).astype("f4")
    y = rng.randint(0, 4, 64).astype("f4")
    it = mx.io.NDArrayIter(X, y, batch_size=16)
    mod = mx.mod.Module(mlp(), context=ctx)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    args, aux = mod.get_params()
    prng = np.random.RandomState(4)   # the same initial weights on every context
    start = {k: mx.nd.array((prng.randn(*args[k].shape) * 0.2).astype("f4")) for k in sorted(args)}
    mod.set_params(start, aux, force_init=True)
    metric = mx.metric.create("ce")
    mod.fit(it, num_epoch=2, optimizer="sgd", kvstore=kvstore, eval_metric=metric, force_init=False,
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    args, _aux = mod.get_params()
    return {k: v.asnumpy() for k, v in args.items()}, metric.get()[1]


@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_module_fit_on_gpu0_matches_cpu():
    cpu_params, cpu_loss = _fit(mx.cpu())
    gpu_params, gpu_loss = _fit(mx.gpu(0))
    assert np.isfinite(gpu_loss)
    np.testing.assert_allclose(gpu_loss, cpu_loss, rtol=TOL["rtol"] * 10)
    for k in cpu_params:
        np.testing.assert_allclose(gpu_params[k], cpu_params[k], err_msg=k, **TOL)


@needs_two
@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_module_fit_data_parallel_on_two_gpus_matches_cpu():
    cpu_params, _ = _fit([mx.cpu(0), mx.cpu(1)], kvstore="local")
    gpu_params, _ = _fit([mx.gpu(0), mx.gpu(1)], kvstore="device")
    for k in cpu_params:
        np.testing.assert_allclose(gpu_params[k], cpu_params[k], err_msg=k, **TOL)


def test_num_gpus_matches_the_backend():
    from plexnet.backends import get_backend
    assert num_gpus() == get_backend("gpu").num_devices() >= 1
