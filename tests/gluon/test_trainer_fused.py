"""Trainer.step runs the updates of all parameters as one engine operation for the
built-in optimizers (optimizer.Updater batching), with the values of one operation per
parameter; other optimizers keep one operation per parameter."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon, nd
from plexnet import engine as _engine
from plexnet.optimizer import Optimizer, Updater
from plexnet.optimizer import kernels


def _net(seed: int = 0):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(5, activation="relu"), gluon.nn.Dense(3))
    mx.random.seed(seed)
    net.initialize(mx.init.Xavier())
    return net


def _count_pushes(monkeypatch) -> list:
    eng = _engine.get()
    names: list = []
    orig = eng.push_sync

    def counting(fn, ctx, const_vars=(), mutate_vars=(), prop=0, priority=0, name=None):
        names.append(name)
        return orig(fn, ctx, const_vars, mutate_vars, prop, priority, name)
    monkeypatch.setattr(eng, "push_sync", counting)
    return names


def _train(opt: str, params: dict, steps: int = 3, wd_mult: float | None = None) -> list:
    net = _net()
    if wd_mult is not None:
        net[0].weight.wd_mult = wd_mult
        net[1].bias.lr_mult = 0.5
    tr = gluon.Trainer(net.collect_params(), opt, dict(params))
    x = nd.array(np.random.RandomState(1).rand(4, 6).astype("f4"))
    for _ in range(steps):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        tr.step(4)
    return [p.data().asnumpy() for p in net.collect_params().values()]


def _reference(opt: str, params: dict, steps: int = 3, wd_mult: float | None = None) -> list:
    """The same training, the optimizer applied one parameter at a time."""
    net = _net()
    if wd_mult is not None:
        net[0].weight.wd_mult = wd_mult
        net[1].bias.lr_mult = 0.5
    plist = list(net.collect_params().values())
    o = mx.optimizer.create(opt, param_dict=dict(enumerate(plist)), **params)
    upd = Updater(o)
    x = nd.array(np.random.RandomState(1).rand(4, 6).astype("f4"))
    for _ in range(steps):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        o.rescale_grad = 1.0 / 4
        for i, p in enumerate(plist):
            upd(i, p.grad(), p.data())  # one index per call: never batched
    return [p.data().asnumpy() for p in plist]


@pytest.mark.parametrize("opt,params", [
    ("sgd", {"learning_rate": 0.1}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3, "clip_gradient": 0.5}),
    ("nag", {"learning_rate": 0.05, "momentum": 0.9}),
    ("adam", {"learning_rate": 0.01, "wd": 1e-4}),
    ("rmsprop", {"learning_rate": 0.01, "centered": True}),
    ("adagrad", {"learning_rate": 0.1}),
])
def test_fused_step_equals_per_parameter_updates(opt, params):
    got = _train(opt, params, wd_mult=0.0)
    want = _reference(opt, params, wd_mult=0.0)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_one_engine_operation_per_step(monkeypatch):
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    x = nd.ones((2, 6))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    nd.waitall()
    names = _count_pushes(monkeypatch)
    tr.step(2)
    nd.waitall()
    assert names.count("sgd_update") == 1, names


def test_user_subclass_is_not_batched(monkeypatch):
    """An ``update`` written with NDArray operations must see the earlier weights updated:
    it keeps one operation per parameter. (Adam: MXNet 1.9.1's SGD, NAG, LARS and LAMB never
    call a subclass's ``update`` from the Updater, tests/porting/test_examples_symbolic.py.)"""
    seen = []

    class Mine(mx.optimizer.Adam):
        def update(self, index, weight, grad, state):
            seen.append(float(weight.sum().asscalar()))
            super().update(index, weight, grad, state)

    net = _net()
    tr = gluon.Trainer(net.collect_params(), Mine(learning_rate=0.1))
    with autograd.record():
        loss = net(nd.ones((2, 6))).sum()
    loss.backward()
    names = _count_pushes(monkeypatch)
    tr.step(2)
    nd.waitall()
    assert names.count("mine_update") == 4, names
    assert len(seen) == 4


def test_batch_pushes_what_it_collected_when_an_update_raises():
    class Mults:
        lr_mult = 1.0
        wd_mult = 1.0

    # index 1's entry has no multipliers: its update raises inside the batch
    opt = mx.optimizer.SGD(learning_rate=1.0, param_dict={0: Mults(), 1: object()})
    upd = Updater(opt)
    w = [nd.ones((2,)), nd.ones((2,))]
    with pytest.raises(AttributeError):
        upd([0, 1], [nd.ones((2,)), nd.ones((2,))], w)
    np.testing.assert_array_equal(w[0].asnumpy(), [0.0, 0.0])  # the first update ran
    np.testing.assert_array_equal(w[1].asnumpy(), [1.0, 1.0])
    # no batch is left current: a later single update runs at once
    opt.param_dict = {0: Mults(), 1: Mults()}
    upd(1, nd.ones((2,)), w[1])
    np.testing.assert_array_equal(w[1].asnumpy(), [0.0, 0.0])


def test_raw_numpy_arrays_are_not_batched():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    upd = Updater(opt)
    w = [np.ones(3, "f4"), np.ones(2, "f4")]
    upd([0, 1], [np.ones(3, "f4"), np.ones(2, "f4")], w)
    np.testing.assert_array_equal(w[0], np.full(3, 0.5, "f4"))
    np.testing.assert_array_equal(w[1], np.full(2, 0.5, "f4"))


def test_pure_launch_registry_holds_the_builtins_only():
    from plexnet.optimizer.optimizer import PURE_LAUNCH_UPDATES
    assert mx.optimizer.SGD.update in PURE_LAUNCH_UPDATES
    assert mx.optimizer.Adam.update in PURE_LAUNCH_UPDATES
    assert Optimizer.update not in PURE_LAUNCH_UPDATES
    assert kernels.sgd is not None


def test_hybridized_input_copy_waits_for_parameter_writes(monkeypatch):
    """The input copy of a hybridized call is ordered after pending writes to the
    block's parameters (an optimizer update), so that the update and the copy do not
    become ready together (which would wake a second engine worker)."""
    net = _net()
    net.hybridize()
    x = nd.ones((2, 6))
    net(x)
    nd.waitall()
    names = []
    eng = _engine.get()
    orig = eng.push_sync

    def spy(fn, ctx, const_vars=(), mutate_vars=(), prop=0, priority=0, name=None):
        names.append((name, tuple(const_vars)))
        return orig(fn, ctx, const_vars, mutate_vars, prop, priority, name)
    monkeypatch.setattr(eng, "push_sync", spy)
    y = net(x)
    nd.waitall()
    copies = [c for n, c in names if n == "_CachedOp_copy" and x._chunk.var in c]
    assert len(copies) == 1
    pvars = {p.data()._chunk.var for p in net.collect_params().values()}
    assert pvars <= set(copies[0])
    monkeypatch.undo()
    net.hybridize(active=False)
    np.testing.assert_allclose(y.asnumpy(), net(x).asnumpy(), rtol=1e-6)
