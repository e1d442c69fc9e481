"""``plexnet demo --gluon``: the demo's LeNet written as MXNet 1.x Gluon code, hybridized,
trained with autograd + Trainer on the same UCI handwritten digits and split as
``plexnet demo`` (see ``examples/gluon_mnist.py`` for the stand-alone script).

Everything but ``load_split`` (the demo's stratified split) is MXNet 1.x Gluon code.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import plexnet as mx
from plexnet import autograd, gluon
from plexnet.gluon import nn

__all__ = ["lenet", "load_split", "evaluate", "run"]


def lenet() -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(20, kernel_size=3, padding=1, activation="tanh"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(50, kernel_size=3, padding=1, activation="tanh"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Flatten(),
                nn.Dense(500, activation="tanh"),
                nn.Dense(10))
    return net


def load_split(seed: int = 42, test_fraction: float = 0.2):  # noqa: ANN201
    from plexnet import datasets
    return datasets.load_digits(test_fraction=test_fraction, seed=seed)


def evaluate(net: nn.HybridSequential, x: np.ndarray, y: np.ndarray, batch_size: int, ctx) -> float:  # noqa: ANN001
    metric = mx.metric.Accuracy()
    for i in range(0, len(y), batch_size):
        data = mx.nd.array(x[i:i + batch_size], ctx=ctx)
        label = mx.nd.array(y[i:i + batch_size], ctx=ctx)
        metric.update([label], [net(data)])
    return float(metric.get()[1])


def run(epochs: int = 10, batch_size: int = 64, lr: float = 0.1, hybridize: bool = True, seed: int = 42,
        ctx=None, verbose: bool = True) -> dict:  # noqa: ANN001
    """Train and evaluate; returns the figures."""
    ctx = ctx or mx.cpu()
    split = load_split(seed)
    np.random.seed(seed)
    mx.random.seed(seed)
    net = lenet()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": 0.9, "wd": 1e-4})
    x_tr, y_tr = split.train_data, split.train_label
    n = len(y_tr)
    t0 = time.time()
    for epoch in range(epochs):
        perm = np.random.permutation(n)
        metric = mx.metric.Accuracy()
        cum_loss = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            data = mx.nd.array(x_tr[idx], ctx=ctx)
            label = mx.nd.array(y_tr[idx], ctx=ctx)
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(len(idx))
            metric.update([label], [out])
            cum_loss += float(loss.sum().asscalar())
        if verbose:
            print(f"epoch {epoch + 1}: loss {cum_loss / n:.4f}, train accuracy {metric.get()[1]:.4f}",
                  file=sys.stderr)
    mx.nd.waitall()
    seconds = time.time() - t0
    test_acc = evaluate(net, split.test_data, split.test_label, batch_size, ctx)
    return {"test_accuracy": test_acc, "train_seconds": seconds, "epochs": epochs, "batch_size": batch_size,
            "samples_per_sec": epochs * n / seconds, "hybridized": hybridize, "test_samples": len(split.test_label),
            "train_samples": n}
