"""Property test: random graphs run with memory planning on and off give identical
outputs and gradients, and no two simultaneously live values share memory."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

import plexnet as mx
from plexnet.executor.planner import plan_memory

sym = mx.sym
SHAPE = (2, 4)

UNARY = ["tanh", "relu", "sigmoid", "square", "scale", "fc", "fc", "flatten", "split_concat"]
BINARY = ["add", "mul"]


def _unary(kind: str, x, i: int, width: int, draw):
    """(symbol, width) of a unary step on a (2, width) value."""
    if kind in ("tanh", "relu", "sigmoid"):
        return sym.XTActivation(x, act_type=kind, name=f"n{i}"), width
    if kind == "square":
        return sym.XTsquare(x, name=f"n{i}"), width
    if kind == "scale":
        return sym.XTscale(x, scalar=0.5, name=f"n{i}"), width
    if kind == "fc":  # changes the size: the planner must match and grow blocks
        w = draw(st.sampled_from([2, 4, 8, 16]))
        return sym.XTFullyConnected(x, num_hidden=w, name=f"n{i}"), w
    if kind == "flatten":
        return sym.XTFlatten(x, name=f"n{i}"), width
    if width % 2:
        return sym.XTFlatten(x, name=f"n{i}"), width
    # split + concat: a multi-output node whose outputs are consumed separately
    parts = sym.XTSliceChannel(x, num_outputs=2, name=f"n{i}s")
    return sym.XTConcat(sym.XTActivation(parts[1], act_type="tanh", name=f"n{i}t"), parts[0], name=f"n{i}"), width


@st.composite
def graphs(draw):
    n_in = draw(st.integers(1, 3))
    values = [(sym.Variable(f"x{i}"), SHAPE[1]) for i in range(n_in)]
    n_nodes = draw(st.integers(1, 14))
    for i in range(n_nodes):
        if draw(st.booleans()):
            kind = draw(st.sampled_from(BINARY))
            a, wa = values[draw(st.integers(0, len(values) - 1))]
            same = [v for v, w in values if w == wa]
            b = same[draw(st.integers(0, len(same) - 1))]
            values.append((sym.XTadd(a, b, name=f"n{i}") if kind == "add" else sym.XTmul(a, b, name=f"n{i}"), wa))
        else:
            kind = draw(st.sampled_from(UNARY))
            x, w = values[draw(st.integers(0, len(values) - 1))]
            values.append(_unary(kind, x, i, w, draw))
    extra = draw(st.lists(st.integers(0, len(values) - 1), max_size=3, unique=True))
    outs = [values[-1][0]] + [values[k][0] for k in extra if k != len(values) - 1]
    net = sym.Group(outs) if len(outs) > 1 else outs[0]
    reqs = {a: draw(st.sampled_from(["write", "write", "add", "null"])) for a in net.list_arguments()}
    seed = draw(st.integers(0, 2 ** 16))
    return net, reqs, seed


def _run(net, reqs, seed, plan_memory_on, bulk):
    rng = np.random.RandomState(seed)
    shapes = {f"x{i}": SHAPE for i in range(3) if f"x{i}" in net.list_arguments()}
    types = {a: "float64" for a in net.list_arguments()}
    exe = net.simple_bind(mx.cpu(), grad_req=reqs, type_dict=types, plan_memory=plan_memory_on,
                          bulk_exec=bulk, **shapes)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape)
    for name, g in exe.grad_dict.items():
        if g is not None:
            g[:] = rng.uniform(-1, 1, g.shape)
    outs = [o.asnumpy().copy() for o in exe.forward(is_train=True)]
    ograds = [rng.uniform(-1, 1, o.shape) for o in outs]
    if any(r != "null" for r in reqs.values()):
        exe.backward([mx.nd.array(g, dtype="float64") for g in ograds])
    grads = {k: v.asnumpy().copy() for k, v in exe.grad_dict.items() if v is not None}
    # a second step must give the same outputs (no state left behind by planning)
    outs2 = [o.asnumpy().copy() for o in exe.forward(is_train=True)]
    return exe, outs, outs2, grads


@pytest.mark.timeout(300)
@settings(max_examples=int(__import__("os").environ.get("PLEXNET_PROPERTY_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_planning_on_off_identical(g):
    net, reqs, seed = g
    exe_on, outs_on, outs2_on, grads_on = _run(net, reqs, seed, True, True)
    exe_off, outs_off, outs2_off, grads_off = _run(net, reqs, seed, False, False)
    assert len(outs_on) == len(outs_off)
    for a, b in zip(outs_on, outs_off):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(outs2_on, outs_on):
        np.testing.assert_array_equal(a, b)
    assert grads_on.keys() == grads_off.keys()
    for k in grads_on:
        np.testing.assert_array_equal(grads_on[k], grads_off[k], err_msg=k)
    # the plans: no two simultaneously live values share memory, for every strategy
    xg = exe_on.exec_graph
    exe_on.plan.verify(xg.entries)
    exe_off.plan.verify(exe_off.exec_graph.entries)
    for strategy in ("pool", "arena"):
        plan_memory(xg.entries, xg.schedule, strategy=strategy).verify(xg.entries)
    assert exe_on.plan.planned_bytes <= exe_off.plan.planned_bytes
    event(f"in-place: {exe_on.plan.num_inplace > 0}")
    event(f"shared memory: {exe_on.plan.planned_bytes < exe_on.plan.naive_bytes}")
