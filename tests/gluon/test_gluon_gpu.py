"""Gluon on a GPU context (a real GPU, or the CuPy simulator: PLEXNET_CUDA_SIMULATE=2):
hybridized training equals CPU training; two devices through the 'device' kvstore."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon, nd
from plexnet.gluon import nn


def _gpus() -> int:
    try:
        return mx.num_gpus()
    except Exception:  # noqa: BLE001 - no GPU backend installed
        return 0


pytestmark = pytest.mark.skipif(_gpus() == 0, reason="needs a GPU backend (or PLEXNET_CUDA_SIMULATE)")


def _train(ctx) -> np.ndarray:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, activation="relu"), nn.BatchNorm(), nn.MaxPool2D(), nn.Flatten(), nn.Dense(10))
    net.initialize(mx.init.One(), ctx=ctx)
    x = nd.array(np.random.RandomState(0).rand(2, 1, 8, 8), ctx=ctx)
    y = nd.array([1, 3], ctx=ctx)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    loss_fn.hybridize()
    net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(2):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(2)
    return net[4].weight.data().asnumpy()


def test_hybridized_training_on_gpu_equals_cpu() -> None:
    np.testing.assert_allclose(_train(mx.gpu(0)), _train(mx.cpu()), rtol=2e-3, atol=2e-4)


@pytest.mark.skipif(_gpus() < 2, reason="needs two GPUs")
def test_two_gpus_device_kvstore() -> None:
    ctxs = [mx.gpu(0), mx.gpu(1)]
    net = nn.Dense(3, in_units=4)
    net.initialize(mx.init.One(), ctx=ctxs)
    net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore="device")
    with autograd.record():
        losses = [net(a).sum() for a in gluon.utils.split_and_load(nd.ones((4, 4)), ctxs)]
    autograd.backward(losses)
    tr.step(4)
    for d in net.weight.list_data():
        np.testing.assert_allclose(d.asnumpy(), 0.9, rtol=1e-6)
