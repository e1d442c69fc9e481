"""Handwritten digits with Gluon: a hybridized LeNet trained with autograd + Trainer,
written the way MXNet 1.x's Gluon tutorials trained MNIST.

The data are the same UCI handwritten digits as ``plexnet demo`` (1,797 8x8 images
that scikit-learn ships, no download; the same stratified 80/20 split), and the network
is the demo's LeNet (3x3 conv 20 - tanh - maxpool - 3x3 conv 50 - tanh - maxpool -
dense 500 - tanh - dense 10) with the demo's optimizer settings (SGD, lr 0.1,
momentum 0.9, wd 1e-4, 10 epochs, batch 64), so it reaches the demo's accuracy (about
98 % on the held-out digits).

    python examples/gluon_mnist.py [--epochs N] [--no-hybridize] [--json]

Everything but ``load_split`` (the demo's stratified split, from ``plexnet.datasets``)
is MXNet 1.x Gluon code: with ``import mxnet as mx`` and another source of the arrays it
runs unchanged under Apache MXNet 1.9.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import plexnet as mx
from plexnet import autograd, gluon
from plexnet.gluon import nn


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
            "samples_per_sec": epochs * n / seconds, "hybridized": hybridize, "test_samples": len(split.test_label)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--no-hybridize", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)
    r = run(a.epochs, a.batch_size, a.lr, not a.no_hybridize)
    if a.json:
        print(json.dumps(r))
    else:
        print(f"test accuracy {100 * r['test_accuracy']:.2f} % ({r['test_samples']} held-out digits), "
              f"{r['train_seconds']:.1f} s, {r['samples_per_sec']:.0f} samples/s, "
              f"{'hybridized' if r['hybridized'] else 'imperative'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
