"""MXNet 1.9.1 Module behaviours found by running MXNet's own test_module.py."""
import numpy as np
import pytest

import plexnet as mx


def test_checkpoint_optimizer_states_load_as_ndarrays(tmp_path):
    prefix = str(tmp_path / "test")
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4)
    mod = mx.mod.Module(sym, ("data",), label_names=None)
    mod.bind(data_shapes=[("data", (3, 5))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    mod.forward(mx.io.DataBatch([mx.nd.ones((3, 5))]))
    mod.backward([mx.nd.ones((3, 4))])
    mod.update()
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    mod2 = mx.mod.Module.load(prefix, 0, load_optimizer_states=True, data_names=("data",), label_names=None)
    mod2.bind(data_shapes=[("data", (3, 5))])
    mod2.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    assert set(mod._updater.states) == set(mod2._updater.states)
    for k, v in mod._updater.states.items():
        w = mod2._updater.states[k]
        assert isinstance(w, mx.nd.NDArray)  # MXNet unpickles NDArrays
        assert np.array_equal(v.asnumpy(), w.asnumpy())


def test_module_without_parameters_backward():
    sym = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu", __layout__="TNC")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((3, 8, 7))], label=None))
    mod.backward([mx.nd.ones((3, 8, 7))])
    assert mod.get_outputs()[0].shape == (3, 8, 7)
    assert [x.shape for x in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7)] * 2


def test_gradient_through_non_differentiable_operator_is_refused():
    # MXNet 1.9.1 registers no FGradient for batch_take: binding with any gradient through
    # it, or an imperative backward through it, is an error; binding without gradients is fine
    a, i = mx.sym.var("a"), mx.sym.var("i")
    s = mx.sym.batch_take(a, i)
    args = {"a": mx.nd.ones((2, 3)), "i": mx.nd.array([0, 2], dtype="int32")}
    with pytest.raises(mx.MXNetError, match="batch_take is non-differentiable"):
        s.bind(mx.cpu(), args, args_grad={"a": mx.nd.zeros((2, 3))})
    with pytest.raises(mx.MXNetError, match="non-differentiable"):
        (mx.sym.sum(a) + mx.sym.sum(s)).simple_bind(mx.cpu(), a=(2, 3), i=(2,), type_dict={"i": "int32"},
                                                     grad_req={"a": "write", "i": "null"})
    ex = s.bind(mx.cpu(), args)
    assert ex.forward()[0].asnumpy().tolist() == [1, 1]
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.batch_take(x, mx.nd.array([0, 1], dtype="int32"))
    with pytest.raises(mx.MXNetError, match="batch_take is non-differentiable"):
        y.backward()


def test_executor_reshape_shares_output_memory():
    # MXNet's test_executor.test_reshape: a smaller reshaped executor writes into the
    # original's memory, outputs included; an up-sized one gets new memory
    y = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=4)
    exe = y.simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    new_exe = exe.reshape(x=(3, 4))
    new_exe.forward(is_train=False)
    assert np.all(new_exe.outputs[0].asnumpy() == 4)
    assert np.all(exe.outputs[0].asnumpy()[:3] == 4)
    exe.forward(is_train=False)
    assert np.all(exe.outputs[0].asnumpy() == 4)
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_arrays[0][:] = 2
    big.forward(is_train=False)
    assert np.all(big.outputs[0].asnumpy() == 8)
    assert np.all(exe.outputs[0].asnumpy() == 4) and np.all(exe.arg_arrays[0].asnumpy() == 1)


def _fc_stack(n):
    h = mx.sym.var("data")
    for i in range(n):
        h = mx.sym.FullyConnected(h, num_hidden=6, name=f"fc{i}")
    return mx.sym.SoftmaxOutput(h, mx.sym.var("softmax_label"), name="softmax")


def test_executor_group_shared_data_arrays():
    # MXNet's test_module.test_executor_group; results recorded with MXNet 1.9.1
    from plexnet.module.executor_group import DataParallelExecutorGroup
    ctxs = [mx.cpu(0), mx.cpu(1)]
    s1 = _fc_stack(2)
    params = [n for n in s1.list_arguments() if n not in ("data", "softmax_label")]

    def group(sym, n, shared=None, need_grad=False):
        return DataParallelExecutorGroup(symbol=sym, contexts=ctxs, workload=[1, 1], data_shapes=[("data", (n, 5))],
                                         label_shapes=[("softmax_label", (n,))], param_names=params,
                                         for_training=True, inputs_need_grad=need_grad, shared_group=shared)

    g1 = group(s1, 4)
    assert [sorted(d) for d in g1.shared_data_arrays] == [["data", "softmax_label"]] * 2
    g2 = group(_fc_stack(3), 4, g1)
    assert g2.shared_data_arrays is g1.shared_data_arrays
    assert sorted(g2.shared_data_arrays[0]) == ["data", "fc2_bias", "fc2_weight", "softmax_label"]
    same = mx.test_utils.same_array
    for i in range(2):
        e1, e2 = g1.execs[i], g2.execs[i]
        assert same(e1.arg_dict["data"], e2.arg_dict["data"])
        assert same(e1.arg_dict["fc0_weight"], e2.arg_dict["fc0_weight"])
        assert same(e1.grad_dict["fc0_weight"], e2.grad_dict["fc0_weight"])
        assert same(g2.shared_data_arrays[i]["fc2_weight"], e2.arg_dict["fc2_weight"])
    assert sorted(group(s1, 4, need_grad=True).shared_data_arrays[0]) == ["data", "grad of data", "softmax_label"]
    small = group(s1, 2, g1)  # a view of the shared input memory
    assert small.execs[0].arg_dict["data"].shape == (1, 5) and g1.shared_data_arrays[0]["data"].shape == (2, 5)
    small.execs[0].arg_dict["data"][:] = 7
    assert g1.execs[0].arg_dict["data"].asnumpy()[:, 0].tolist() == [7, 0]
    big = group(s1, 8, g1)  # too large: a new array replaces the shared one
    assert big.execs[0].arg_dict["data"].shape == (4, 5) and g1.shared_data_arrays[0]["data"].shape == (4, 5)


def test_no_backward_upstream_of_stop_gradient():
    # MXNet's test_symbol.test_zero_prop / test_zero_prop2: nodes whose gradient is all zero
    # (reaching the outputs only through stop_gradient) get no backward, so no memory, and a
    # non-differentiable operator there is accepted
    import re
    data = mx.sym.Variable("data")
    for _ in range(4):
        data = data * data

    def mb(sym, **kw):
        exe = sym.simple_bind(ctx=mx.cpu(), data=(8, 3, 128, 128), **kw)
        return int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1)), exe

    big, _ = mb(data)
    small1, _ = mb(data, grad_req="null")
    small2, exe = mb(mx.sym.stop_gradient(data))
    assert big > small2 and small1 == small2
    exe.arg_dict["data"][:] = 1
    exe.forward(is_train=True)
    exe.backward()
    assert exe.grad_dict["data"].asnumpy().sum() == 0
    x, idx = mx.sym.Variable("x"), mx.sym.Variable("idx")
    y = mx.sym.batch_take(x, idx)
    exe = mx.sym.stop_gradient(y).simple_bind(ctx=mx.cpu(), x=(10, 10), idx=(10,),
                                              type_dict={"x": np.float32, "idx": np.int32})
    exe.forward()
    exe.backward()
    with pytest.raises(mx.MXNetError, match="non-differentiable"):
        y.simple_bind(ctx=mx.cpu(), x=(10, 10), idx=(10,), type_dict={"x": np.float32, "idx": np.int32})


def test_imperative_backward_skips_non_differentiable_behind_stop_gradient():
    # MXNet 1.9.1: the gradient reaching batch_take is all zero, so backward succeeds
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.stop_gradient(mx.nd.batch_take(x, mx.nd.array([0, 1], dtype="int32"))) + x.sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [[2, 2, 2], [2, 2, 2]]
