"""Gluon misuse answered as MXNet 1.9.1 answers it (found by a differential run)."""
from __future__ import annotations

import pytest

import plexnet as mx

gluon, nd = mx.gluon, mx.nd


def test_set_data_before_initialize_is_an_assertion_error() -> None:
    p = gluon.Parameter("w", shape=(2, 3))
    with pytest.raises(AssertionError, match="has not been initialized"):
        p.set_data(nd.ones((2, 3)))


def test_trainer_keeps_a_parameter_listed_twice_once() -> None:
    d = gluon.nn.Dense(3, in_units=4)
    d.initialize()
    ps = list(d.collect_params().values())
    tr = gluon.Trainer(ps + ps, "sgd", {"learning_rate": 0.1})
    assert len(tr._params) == 2
    with mx.autograd.record():
        y = d(nd.ones((1, 4))).sum()
    y.backward()
    w0 = d.weight.data().asnumpy().copy()
    tr.step(1)
    assert abs((w0 - d.weight.data().asnumpy()) - 0.1).max() < 1e-6   # updated once, not twice
