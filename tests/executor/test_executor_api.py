"""Executor API: bind/simple_bind variants, dictionaries, copy_params_from, reshape,
shared memory, reports, bulking and engine ordering."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import PlexnetError, ShapeError
from gradcheck import bind_f64

sym = mx.sym


def mlp():
    data = sym.Variable("data")
    h = sym.XTFullyConnected(data, num_hidden=8, name="fc1")
    h = sym.XTActivation(h, act_type="tanh", name="act1")
    h = sym.XTFullyConnected(h, num_hidden=3, name="fc2")
    return sym.XTSoftmaxOutput(h, name="softmax")


@pytest.mark.timeout(30)
def test_simple_bind_arrays_and_dicts():
    exe = mlp().simple_bind(mx.cpu(), data=(4, 5))
    assert list(exe.arg_dict) == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "softmax_label"]
    assert exe.arg_dict["fc1_weight"].shape == (8, 5) and exe.arg_dict["fc1_weight"].dtype == np.float32
    assert list(exe.grad_dict) == list(exe.arg_dict)
    assert all(g is not None for g in exe.grad_arrays)
    assert exe.aux_arrays == [] and exe.aux_dict == {}
    assert list(exe.output_dict) == ["softmax_output"] and exe.outputs[0].shape == (4, 3)
    assert np.all(exe.arg_dict["fc1_weight"].asnumpy() == 0)
    exe2 = mlp().simple_bind(mx.cpu(), grad_req="null", data=(4, 5))
    assert all(g is None for g in exe2.grad_arrays)
    exe2.backward()  # MXNet 1.9.1: a no-op when bound without gradients
    exe3 = mlp().simple_bind(mx.cpu(), grad_req={"fc1_weight": "write"}, data=(4, 5))
    assert [n for n, g in exe3.grad_dict.items() if g is not None] == ["fc1_weight"]
    with pytest.raises(ShapeError, match="cannot infer"):
        mlp().simple_bind(mx.cpu())
    # MXNet 1.9.1 ignores keywords that name no input
    assert mlp().simple_bind(mx.cpu(), data=(4, 5), bogus=(1,), axis=0).arg_dict["data"].shape == (4, 5)


@pytest.mark.timeout(30)
def test_bind_with_lists_dicts_and_checks():
    net = mlp()
    shapes = dict(zip(net.list_arguments(), net.infer_shape(data=(2, 5))[0]))
    args = {k: mx.nd.array(np.random.rand(*s)) for k, s in shapes.items()}
    grads = {k: mx.nd.zeros(s) for k, s in shapes.items() if k != "data"}
    exe = net.bind(mx.cpu(), args, args_grad=grads, grad_req="write")
    assert exe.grad_dict["data"] is None and exe.grad_dict["fc1_weight"] is grads["fc1_weight"]
    assert exe.arg_dict["fc2_bias"] is args["fc2_bias"]
    exe.forward(is_train=True)
    exe.backward()
    assert np.any(grads["fc1_weight"].asnumpy() != 0)
    # list form, positional order of list_arguments
    exe2 = net.bind(mx.cpu(), [args[k] for k in net.list_arguments()])
    out = exe2.forward()[0].asnumpy()
    np.testing.assert_allclose(out, exe.forward()[0].asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="has 2 arrays"):
        net.bind(mx.cpu(), [args["data"], args["fc1_weight"]])
    with pytest.raises(ValueError, match="no array for"):
        net.bind(mx.cpu(), {"data": args["data"]})
    bad = dict(args, fc1_weight=mx.nd.zeros((3, 3)))
    with pytest.raises(ShapeError):
        net.bind(mx.cpu(), bad)
    # grad_req as a list
    exe3 = net.bind(mx.cpu(), args, args_grad={k: mx.nd.zeros(s) for k, s in shapes.items()},
                    grad_req=["null", "write", "add", "write", "write", "null"])
    assert exe3.grad_req["fc1_bias"] == "add" and exe3.grad_req["data"] == "null"


@pytest.mark.timeout(30)
def test_bind_aux_states_default_and_given():
    data = sym.Variable("data")
    net = sym.XTBatchNorm(data, name="bn")
    exe = net.bind(mx.cpu(), {"data": mx.nd.ones((2, 3)), "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.zeros((3,))})
    assert [a.shape for a in exe.aux_arrays] == [(3,), (3,)]
    mm = mx.nd.array([1.0, 2.0, 3.0])
    exe2 = net.bind(mx.cpu(), {"data": mx.nd.ones((2, 3)), "bn_gamma": mx.nd.ones((3,)),
                               "bn_beta": mx.nd.zeros((3,))}, aux_states=[mm, mx.nd.ones((3,))])
    assert exe2.aux_dict["bn_moving_mean"] is mm


@pytest.mark.timeout(30)
def test_forward_kwargs_copy_params_from():
    exe = bind_f64(mlp(), {"data": (2, 5)})
    x = np.random.rand(2, 5)
    exe.forward(data=x)
    np.testing.assert_allclose(exe.arg_dict["data"].asnumpy(), x)
    with pytest.raises(TypeError, match="unknown argument"):   # MXNet: TypeError('Unknown argument ...')
        exe.forward(nodata=x)
    with pytest.raises(ValueError, match=r"Shape not match! Argument data, need: \(2, 5\), received: \(3, 5\)"):
        exe.forward(data=np.ones((3, 5)))   # MXNet checks before copying; plexnet failed later, in the engine
    w = np.random.rand(8, 5)
    exe.copy_params_from({"fc1_weight": mx.nd.array(w, dtype="float64"), "extra": mx.nd.ones((1,))},
                         allow_extra_params=True)
    np.testing.assert_allclose(exe.arg_dict["fc1_weight"].asnumpy(), w)
    with pytest.raises(ValueError, match="extra"):
        exe.copy_params_from({"extra": mx.nd.ones((1,))})
    with pytest.raises(ShapeError):
        exe.copy_params_from({"fc1_weight": mx.nd.ones((2, 2))})


@pytest.mark.timeout(30)
def test_reshape_shares_parameters_and_memory():
    exe = bind_f64(mlp(), {"data": (4, 5)})
    rng = np.random.RandomState(0)
    for k, a in exe.arg_dict.items():
        a[:] = rng.rand(*a.shape)
    small = exe.reshape(data=(2, 5), softmax_label=(2,))
    assert small.arg_dict["fc1_weight"] is exe.arg_dict["fc1_weight"]
    assert small.arg_dict["data"].shape == (2, 5)
    assert small.outputs[0].shape == (2, 3)
    # the smaller data array is a view of the old one (same memory, same engine variable)
    assert small.arg_dict["data"]._chunk is exe.arg_dict["data"]._chunk
    np.testing.assert_allclose(small.forward()[0].asnumpy(),
                               exe.forward()[0].asnumpy()[:2], rtol=1e-12)
    assert small.memory_report()["shared_bytes"] > 0
    with pytest.raises(ShapeError, match="partial_shaping"):
        exe.reshape(data=(2, 5))  # softmax_label would change too
    with pytest.raises(ShapeError, match="allow_up_sizing"):
        exe.reshape(data=(8, 5), softmax_label=(8,))
    big = exe.reshape(allow_up_sizing=True, partial_shaping=True, data=(8, 5))
    assert big.arg_dict["data"].shape == (8, 5) and big.arg_dict["softmax_label"].shape == (8,)


@pytest.mark.timeout(30)
def test_shared_exec_and_shared_arg_names():
    net = mlp()
    a = net.simple_bind(mx.cpu(), data=(4, 5))
    b = net.simple_bind(mx.cpu(), data=(2, 5), shared_exec=a,
                        shared_arg_names=["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"])
    assert b.arg_dict["fc1_weight"] is a.arg_dict["fc1_weight"]
    assert b.grad_dict["fc2_bias"] is a.grad_dict["fc2_bias"]
    assert b.arg_dict["data"] is not a.arg_dict["data"]
    assert b.memory_report()["shared_bytes"] > 0


@pytest.mark.timeout(30)
def test_reports_and_debug_str():
    exe = mlp().simple_bind(mx.cpu(), data=(16, 10))
    r = exe.memory_report()
    for k in ("planned_bytes", "naive_bytes", "ratio", "num_blocks", "num_inplace", "peak_live_bytes", "strategy",
              "arg_bytes", "grad_bytes", "aux_bytes", "head_grad_bytes", "forward_segments", "backward_segments"):
        assert k in r
    assert r["planned_bytes"] < r["naive_bytes"] and r["num_inplace"] >= 2
    assert r["head_grad_bytes"] == 0  # SoftmaxOutput needs no head gradient
    s = exe.debug_str()
    assert "Total" in s and "MB allocated" in s and "naive total" in s and f"{r['naive_bytes']}" in s
    off = mlp().simple_bind(mx.cpu(), data=(16, 10), plan_memory=False)
    assert off.memory_report()["planned_bytes"] == off.memory_report()["naive_bytes"]


@pytest.mark.timeout(30)
def test_plan_memory_env_var(monkeypatch):
    monkeypatch.setenv("PLEXNET_EXEC_PLAN_MEMORY", "0")
    exe = mlp().simple_bind(mx.cpu(), data=(4, 5))
    assert exe.memory_report()["plan_memory"] is False
    monkeypatch.setenv("PLEXNET_EXEC_PLAN_MEMORY", "1")
    assert mlp().simple_bind(mx.cpu(), data=(4, 5)).memory_report()["plan_memory"] is True


@pytest.mark.timeout(30)
@pytest.mark.parametrize("strategy", ["pool", "arena"])
def test_memory_strategies(monkeypatch, strategy):
    monkeypatch.setenv("PLEXNET_EXEC_MEMORY_STRATEGY", strategy)
    exe = mlp().simple_bind(mx.cpu(), data=(4, 5))
    assert exe.memory_report()["strategy"] == strategy
    exe.plan.verify(exe.exec_graph.entries)


@pytest.mark.timeout(30)
def test_bulk_segments(monkeypatch):
    exe = mlp().simple_bind(mx.cpu(), data=(4, 5))
    r = exe.memory_report()
    assert r["forward_segments"] == 1 and r["backward_segments"] == 1
    exe = mlp().simple_bind(mx.cpu(), data=(4, 5), bulk_exec=False)
    r = exe.memory_report()
    assert r["forward_segments"] == r["forward_nodes"] and r["backward_segments"] == r["backward_nodes"]
    monkeypatch.setenv("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "2")
    r = mlp().simple_bind(mx.cpu(), data=(4, 5)).memory_report()
    assert r["forward_segments"] == 2
    monkeypatch.setenv("PLEXNET_EXEC_BULK_EXEC_TRAIN", "0")
    r = mlp().simple_bind(mx.cpu(), data=(4, 5)).memory_report()
    assert r["forward_segments"] == r["forward_nodes"]


def _numpy_sgd(params, X, Y, lr, steps):
    """Reference: FC-tanh-FC-softmax trained with plain numpy."""
    p = {k: v.copy() for k, v in params.items()}
    for i in range(steps):
        x, y = X[i], Y[i].astype(np.int64)
        h = np.tanh(x @ p["fc1_weight"].T + p["fc1_bias"])
        z = h @ p["fc2_weight"].T + p["fc2_bias"]
        e = np.exp(z - z.max(1, keepdims=True))
        prob = e / e.sum(1, keepdims=True)
        dz = prob.copy()
        dz[np.arange(len(y)), y] -= 1
        g = {"fc2_weight": dz.T @ h, "fc2_bias": dz.sum(0)}
        dh = dz @ p["fc2_weight"] * (1 - h * h)
        g["fc1_weight"] = dh.T @ x
        g["fc1_bias"] = dh.sum(0)
        for k in p:
            p[k] -= lr * g[k]
    return p


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bulk", [True, False])
def test_engine_orders_updates_after_backward(bulk):
    """The anchor-bench loop with no waits: input copies, forward, backward and the
    user's ``w -= lr * g`` are ordered by the engine through the arrays' variables."""
    rng = np.random.RandomState(3)
    exe = bind_f64(mlp(), {"data": (16, 5)}, bulk_exec=bulk)
    params = {k: rng.uniform(-0.5, 0.5, a.shape) for k, a in exe.arg_dict.items()
              if k not in ("data", "softmax_label")}
    for k, v in params.items():
        exe.arg_dict[k][:] = v
    steps = 12
    X = rng.rand(steps, 16, 5)
    Y = rng.randint(0, 3, (steps, 16)).astype(np.float64)
    lr = 0.05
    for i in range(steps):
        exe.arg_dict["data"][:] = X[i]
        exe.arg_dict["softmax_label"][:] = Y[i]
        exe.forward(is_train=True)
        exe.backward()
        for k in params:
            w = exe.arg_dict[k]
            w -= lr * exe.grad_dict[k]
    want = _numpy_sgd(params, X, Y, lr, steps)
    for k in params:
        np.testing.assert_allclose(exe.arg_dict[k].asnumpy(), want[k], rtol=1e-9, atol=1e-12, err_msg=k)


@pytest.mark.timeout(30)
def test_errors_inside_operators_name_the_node():
    data = sym.Variable("data")
    net = sym.XTFail(sym.XTFullyConnected(data, num_hidden=2, name="fc"), name="boom")
    exe = net.simple_bind(mx.cpu(), data=(2, 3))
    exe.forward(is_train=True)
    with pytest.raises(Exception, match="boom") as ei:
        exe.outputs[0].asnumpy()
    assert "kaput" in str(ei.value)
    try:
        mx.nd.waitall()
    except Exception:  # noqa: BLE001 - the same error, reported once more at most
        pass
    # the executor stays usable for the part that works
    fc = net.get_children()
    exe2 = fc.simple_bind(mx.cpu(), data=(2, 3))
    exe2.forward()
    assert exe2.outputs[0].asnumpy().shape == (2, 2)


@pytest.mark.timeout(30)
def test_duplicate_input_names_rejected():
    a = sym.Variable("x")
    b = sym.Variable("x")
    net = sym.XTadd(a, sym.XTsquare(b, name="sq"), name="add")
    with pytest.raises(PlexnetError, match="unique"):
        net.simple_bind(mx.cpu(), x=(2,))


@pytest.mark.timeout(30)
def test_eval_and_group_outputs():
    x = sym.Variable("x")
    net = sym.Group([sym.XTsquare(x, name="sq"), sym.XTexp(x, name="e")])
    outs = net.eval(mx.cpu(), x=mx.nd.array([1.0, 2.0]))
    np.testing.assert_allclose(outs[0].asnumpy(), [1, 4])
    np.testing.assert_allclose(outs[1].asnumpy(), np.exp([1, 2]), rtol=1e-6)


@pytest.mark.timeout(30)
def test_monitor_callback_sees_every_node_output():
    exe = bind_f64(mlp(), {"data": (2, 5)})
    rng = np.random.RandomState(0)
    for k, a in exe.arg_dict.items():
        a[:] = rng.rand(*a.shape)
    seen = {}
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr))
    exe.forward(is_train=True)
    assert list(seen) == ["fc1_output", "act1_output", "fc2_output", "softmax_output"]
    # values as they were right after each node (act1 runs in place on fc1's memory)
    x, w, b = (exe.arg_dict[k].asnumpy() for k in ("data", "fc1_weight", "fc1_bias"))
    np.testing.assert_allclose(seen["fc1_output"].asnumpy(), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(seen["act1_output"].asnumpy(), np.tanh(x @ w.T + b), rtol=1e-12)
    seen.clear()
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr), monitor_all=True)
    exe.forward()
    assert "fc1_data" in seen and "fc2_weight" in seen
    exe.set_monitor_callback(None)
    seen.clear()
    exe.forward()
    assert not seen


@pytest.mark.timeout(30)
def test_values_backward_does_not_need_die_in_forward():
    """SimpleOp gradient kinds decide what backward keeps: exp keeps its output (its
    input dies with the forward pass), square keeps its input."""
    x = sym.Variable("x")
    for op, kept, dead in ((sym.XTexp, "e_output", "fc_output"), (sym.XTsquare, "fc_output", None)):
        fc = sym.XTFullyConnected(x, num_hidden=4, name="fc")
        net = sym.XTscale(op(fc, name="e"), scalar=2.0, name="s")
        exe = net.simple_bind(mx.cpu(), x=(3, 5))
        plan, xg = exe.plan, exe.exec_graph
        n_fwd = len(xg.forward)
        by_name = {e.name: e.eid for e in xg.entries}
        assert plan.last_use[by_name[kept]] >= n_fwd  # read by a backward node
        if dead is not None:
            assert plan.last_use[by_name[dead]] < n_fwd  # gone after the forward pass
        # XTFullyConnected's backward declares no use of its output
        bwd_fc = next(xn for xn in xg.backward if xn.name == "fc")
        assert bwd_fc.out_data == [None] and bwd_fc.in_data[0] is not None
