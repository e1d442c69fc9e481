"""Helpers of the Module tests (imported by name: ``from module_testlib import mlp``)."""
from __future__ import annotations

import numpy as np

import plexnet as mx


def mlp(num_hidden: int = 32, num_classes: int = 10):
    data = mx.sym.Variable("data")
    flat = mx.sym.Flatten(data=data, name="flat")
    fc1 = mx.sym.FullyConnected(data=flat, num_hidden=num_hidden, name="fc1")
    act = mx.sym.Activation(data=fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(data=act, num_hidden=num_classes, name="fc2")
    return mx.sym.SoftmaxOutput(data=fc2, name="softmax")


def synthetic(n: int = 600, seed: int = 0):
    rs = np.random.RandomState(seed)
    centers = rs.randn(10, 64).astype(np.float32) * 2
    y = rs.randint(0, 10, size=n)
    x = (centers[y] + rs.randn(n, 64).astype(np.float32)).reshape(n, 1, 8, 8)
    return x.astype(np.float32), y.astype(np.float32)
