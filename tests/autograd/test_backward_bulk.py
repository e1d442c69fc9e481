"""Bulked backward (core/tape/bulk.py): a backward walk pushes consecutive nodes' gradient
computations as one engine operation; values, failures and memory as with one push per node."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, engine
from plexnet.engine import EngineOpError

nd = mx.nd


def _mlp_grads(seed: int = 0) -> tuple[list[np.ndarray], float]:
    rng = np.random.RandomState(seed)
    x = nd.array(rng.rand(8, 5).astype("f4"))
    ws = [nd.array(rng.uniform(-1, 1, s).astype("f4")) for s in ((6, 5), (6,), (3, 6), (3,))]
    for w in ws:
        w.attach_grad()
    with autograd.record():
        h = nd.Activation(nd.FullyConnected(x, ws[0], ws[1], num_hidden=6), act_type="tanh")
        h = (h * 2 + 1).reshape((8, 6))
        y = nd.FullyConnected(h, ws[2], ws[3], num_hidden=3)
        loss = (nd.log_softmax(y) * -1).sum() + (y[:, 0] ** 2).mean()
    loss.backward()
    return [w.grad.asnumpy() for w in ws], float(loss.asnumpy().reshape(-1)[0])


@pytest.mark.parametrize("max_nodes", ["1", "2", "15", "0"])
def test_bulked_gradients_equal_one_push_per_node(monkeypatch: pytest.MonkeyPatch, max_nodes: str) -> None:
    monkeypatch.setenv("PLEXNET_EXEC_BULK_EXEC_TRAIN", "0")
    ref, ref_loss = _mlp_grads()
    monkeypatch.setenv("PLEXNET_EXEC_BULK_EXEC_TRAIN", "1")
    monkeypatch.setenv("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", max_nodes)
    got, loss = _mlp_grads()
    assert loss == ref_loss
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


def test_backward_is_one_engine_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    eng = engine.get()
    if eng.kind == "NaiveEngine":
        pytest.skip("the NaiveEngine pushes one operation per node (debugging)")
    x = nd.ones((4, 3))
    w = nd.ones((2, 3))
    w.attach_grad()
    with autograd.record():
        loss = nd.sum(nd.relu(nd.dot(x, w.T) * 3 - 1))
    names: list[Any] = []
    real = eng.push_sync

    def counting(fn: Any, ctx: Any, c: Any = (), m: Any = (), prop: Any = None, pri: int = 0,
                 name: Any = None) -> None:
        names.append(name)
        if prop is None:
            real(fn, ctx, c, m, name=name)
        else:
            real(fn, ctx, c, m, prop, pri, name)
    monkeypatch.setattr(eng, "push_sync", counting)
    loss.backward()
    monkeypatch.undo()
    assert len(names) == 1 and names[0].startswith("backward:"), names
    np.testing.assert_allclose(w.grad.asnumpy(), np.full((2, 3), 12.0))


def test_failure_in_a_bulked_node_names_it_and_poisons_its_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    from plexnet_ops_basic.nn.activation import ActivationOp

    def broken(self: Any, *args: Any) -> None:
        raise ZeroDivisionError("injected in backward")
    x = nd.array(np.arange(6, dtype="f4").reshape(2, 3))
    x.attach_grad()
    with autograd.record():
        y = nd.Activation(x * 2, act_type="sigmoid") + 1
    monkeypatch.setattr(ActivationOp, "backward", broken)
    try:   # whichever implementation the registry picked (ops-numba's runs small arrays where
        from plexnet_ops_numba.activation import NumbaActivationOp   # its test suite's conftest is loaded)
        monkeypatch.setattr(NumbaActivationOp, "backward", broken)
    except ImportError:
        pass
    y.backward()                                    # asynchronous: no error yet
    with pytest.raises(EngineOpError, match="injected in backward") as ei:
        x.grad.asnumpy()
    assert "Activation" in str(ei.value)
    monkeypatch.undo()
    with autograd.record():                        # a later backward writes the gradient again
        y = nd.Activation(x * 2, act_type="sigmoid") + 1
    y.backward()
    s = 1 / (1 + np.exp(-2 * np.arange(6, dtype="f4").reshape(2, 3)))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * s * (1 - s), rtol=1e-4)


def test_temporaries_outlive_the_walk_until_pushed() -> None:
    # head gradients and intermediate gradient buffers die with the walk; their pooled
    # memory must not be handed to new arrays before the bulked operation that uses them
    rng = np.random.RandomState(1)
    xs = [nd.array(rng.rand(64, 64).astype("f4")) for _ in range(3)]
    for x in xs:
        x.attach_grad()
    expect = []
    for i in range(20):
        with autograd.record():
            y = nd.tanh(nd.dot(xs[0], xs[1]) * (i + 1)) + xs[2]
        y.backward(nd.array(np.full((64, 64), 0.5, "f4")))  # the head gradient is dropped at once
        junk = [nd.ones((64, 64)) * 7 for _ in range(8)]   # would reuse freed blocks
        del junk
        expect.append(xs[2].grad.asnumpy().copy())
    for e in expect:
        np.testing.assert_array_equal(e, np.full((64, 64), 0.5, "f4"))
