"""Operator behaviour that the tail of MXNet 1.9.1's test_operator.py and test_contrib_operator.py
rely on (each checked against MXNet 1.9.1 with the mxvenv; see docs/porting-operators.md)."""
import sys

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import MXNetError


def test_unravel_index_leaves_the_first_dim_unreduced():
    # MXNet's kernel: C (truncating) division from the last dim up; the first dim keeps the rest
    idx = mx.nd.array([49, 3, 60, -1])
    np.testing.assert_array_equal(mx.nd.unravel_index(idx, shape=(50,)).asnumpy(), [[49, 3, 60, -1]])
    idx = mx.nd.array([49, 3, 60, 100, 200])
    want = [[4, 0, 6, 10, 20], [9, 3, 0, 0, 0]]
    np.testing.assert_array_equal(mx.nd.unravel_index(idx, shape=(5, 10)).asnumpy(), want)
    np.testing.assert_array_equal(mx.nd.unravel_index(idx, shape=(-1, 10)).asnumpy(), want)
    np.testing.assert_array_equal(mx.nd.unravel_index(idx, shape=(2, -1, 10)).asnumpy(),
                                  [[-4, 0, -6, -10, -20], [0] * 5, [9, 3, 0, 0, 0]])
    np.testing.assert_array_equal(mx.nd.unravel_index(mx.nd.array([-1, -11]), shape=(5, 10)).asnumpy(),
                                  [[0, -1], [-1, -1]])


def test_unravel_index_inverts_ravel_multi_index_with_a_leading_minus_one():
    data = np.random.RandomState(0).randint(50, size=(3, 40))
    shape = tuple(int(x) + 1 for x in data.max(axis=1))
    flat = mx.nd.ravel_multi_index(mx.nd.array(data), shape=(-1,) + shape[1:])
    np.testing.assert_array_equal(flat.asnumpy(), np.ravel_multi_index(data, shape))
    np.testing.assert_array_equal(mx.nd.unravel_index(flat, shape=(-1,) + shape[1:]).asnumpy(), data)


def test_diag_offset_past_the_edge_is_an_error():
    a = mx.nd.ones((3, 4))
    assert mx.nd.diag(a, k=4).shape == (0,)  # exactly at the edge: an empty diagonal
    assert mx.nd.diag(a, k=-3).shape == (0,)
    for k in (5, -4):
        with pytest.raises(MXNetError, match="Diagonal does not exist"):
            mx.nd.diag(a, k=k)
    with pytest.raises(MXNetError, match="Diagonal does not exist"):
        mx.nd.diag(mx.nd.ones((2, 3, 4)), k=-4, axis1=1, axis2=2)
    assert mx.nd.diag(mx.nd.ones((3,)), k=5).shape == (8, 8)  # 1-D: any offset


def test_contrib_nd_and_sym_aliases():
    assert mx.contrib.nd is mx.nd.contrib and mx.contrib.sym is mx.sym.contrib
    out = mx.contrib.nd.box_nms(mx.nd.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2]]))
    assert out.shape == (1, 6)
    assert mx.contrib.sym.box_nms(mx.sym.var("d")).list_arguments() == ["d"]


def test_get_operator_arguments():
    from plexnet.operator import OperatorArguments, get_operator_arguments
    args = get_operator_arguments("Convolution")
    assert isinstance(args, OperatorArguments) and args.narg == 14
    assert args.names[:4] == ["data", "weight", "bias", "kernel"]
    assert args.types[:5] == ["NDArray-or-Symbol"] * 3 + ["Shape(tuple), required",
                                                           "Shape(tuple), optional, default=[]"]
    assert args.types[args.names.index("no_bias")] == "boolean, optional, default=0"
    assert get_operator_arguments("broadcast_add") == (2, ["lhs", "rhs"], ["NDArray-or-Symbol"] * 2)
    assert get_operator_arguments("add_n") == (1, ["args"], ["NDArray-or-Symbol[]"])
    assert get_operator_arguments("Custom") == (2, ["data", "op_type"], ["NDArray-or-Symbol[]", "string"])
    sm = get_operator_arguments("sum")
    assert sm.types[1] == "Shape or None, optional, default=None"
    nms = get_operator_arguments("_contrib_box_nms")
    assert nms.types[nms.names.index("topk")] == "int, optional, default='-1'"
    assert nms.types[nms.names.index("overlap_thresh")] == "float, optional, default=0.5"
    assert nms.types[nms.names.index("in_format")] == "{'center', 'corner'},optional, default='corner'"
    with pytest.raises(MXNetError):
        get_operator_arguments("no_such_operator")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_custom_op_runs_in_a_forked_child():
    import multiprocessing

    class _Add(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            out_data[0][:] = in_data[0] + in_data[1]

    @mx.operator.register("porting_fork_add")
    class _AddProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["a", "b"]

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]]

        def create_operator(self, ctx, shapes, dtypes):
            return _Add()

    def run():
        c = mx.nd.Custom(mx.nd.array([1, 2, 3]), mx.nd.array([4, 5, 6]), op_type="porting_fork_add")
        assert c.asnumpy().tolist() == [5, 7, 9]

    run()  # starts the custom-op thread in the parent
    p = multiprocessing.get_context("fork").Process(target=run, daemon=True)
    p.start()
    p.join(20)
    alive = p.is_alive()
    if alive:
        p.kill()
        p.join(5)
    assert not alive and p.exitcode == 0


def test_scalar_index_gives_shape_one_outside_np_shape():
    # MXNet 1.x has no 0-d arrays: x[i] of a 1-D array, x[i, j] of a 2-D one are (1,) views
    a = mx.nd.arange(3)
    b = mx.nd.arange(6).reshape((2, 3))
    assert a[0].shape == (1,) and a[-1].shape == (1,) and b[1, 2].shape == (1,) and b[1][2].shape == (1,)
    assert b[np.int64(1), -1].asnumpy().tolist() == [5.0]
    assert b[1].shape == (3,)
    v = a[1]
    v[:] = 7  # a view: writes through
    assert a.asnumpy().tolist() == [0, 7, 2]
    with mx.np_shape():
        assert a[0].shape == () and b[1, 2].shape == ()
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x[2] * 3 + x[-3]
    y.backward()
    assert y.shape == (1,)
    np.testing.assert_array_equal(x.grad.asnumpy(), [1, 0, 3])


def test_imperative_backward_reads_a_longer_head_gradient_from_its_start():
    # MXNet does not check the head gradient's shape; a longer one is read from the start
    x = mx.nd.ones((3, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.concat(x * 2, dim=0)
    y.backward(mx.nd.arange(8).reshape((4, 2)))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 2], [4, 6], [8, 10]])
    with mx.autograd.record():
        y = x * 2
    with pytest.raises(ValueError, match="head gradient of shape"):
        y.backward(mx.nd.ones((2, 2)))  # shorter: still an error


def test_executor_backward_ignores_extra_head_gradients_and_unread_ones():
    x = mx.sym.var("x")
    e = (x * 2).bind(mx.cpu(), {"x": mx.nd.ones(3)}, args_grad={"x": mx.nd.zeros(3)})
    e.forward(is_train=True)
    e.backward([mx.nd.ones(3) * 5, mx.nd.ones(7)])
    np.testing.assert_array_equal(e.grad_dict["x"].asnumpy(), [10, 10, 10])
    # Proposal's gradient is zero and never reads the head gradient: any shape is accepted
    na = 9
    sym = mx.sym.contrib.MultiProposal(cls_prob=mx.sym.var("c"), bbox_pred=mx.sym.var("b"),
                                       im_info=mx.sym.var("i"), rpn_pre_nms_top_n=20, rpn_post_nms_top_n=5,
                                       scales=(8, 16, 32), ratios=(0.5, 1, 2))
    rs = np.random.RandomState(0)
    args = {"c": mx.nd.array(rs.rand(2, 2 * na, 4, 4)), "b": mx.nd.array(rs.rand(2, 4 * na, 4, 4)),
            "i": mx.nd.array([[64, 64, 1.0], [64, 64, 1.0]])}
    grads = {k: mx.nd.ones(v.shape) for k, v in args.items()}
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones((3, 5))])  # the output is (10, 5)
    for g in grads.values():
        assert not g.asnumpy().any()


def test_mxnet_module_paths_and_as_list():
    from plexnet.attribute import AttrScope
    from plexnet.base import _as_list
    from plexnet.name import NameManager
    assert AttrScope is mx.AttrScope and NameManager is mx.name.NameManager
    assert _as_list(1) == [1] and _as_list((1, 2)) == (1, 2)


def test_control_flow_output_formats_follow_the_functions():
    ten = mx.nd.array([0])
    outs, final = mx.nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, [i + 1]), [ten], max_iterations=5)
    assert isinstance(outs, mx.nd.NDArray) and outs.shape == (5, 1) and isinstance(final, list)
    outs, final = mx.nd.contrib.while_loop(lambda i: i < 3, lambda i: ([i], i + 1), ten, max_iterations=5)
    assert isinstance(outs, list) and isinstance(final, mx.nd.NDArray)
    outs, _ = mx.nd.contrib.while_loop(lambda i: i < 0, lambda i: (i, i + 1), ten, max_iterations=5)
    assert outs == []  # no step ran
    a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
    assert isinstance(mx.sym.contrib.cond(a, lambda: [b], lambda: [c]), list)
    assert isinstance(mx.sym.contrib.cond(a, lambda: b, lambda: c), mx.sym.Symbol)


def test_foreach_unused_state_is_an_assertion_and_1d_data_steps_are_shape_one():
    v = mx.sym.var("v")
    with pytest.raises(AssertionError, match="have to be used"):
        mx.sym.contrib.foreach(lambda d, s: (d, [mx.sym.var("other")]), v, [mx.sym.var("s")])
    step = lambda d, s: (d * s[0], [s[0] * 2])  # noqa: E731
    outs, states = mx.sym.contrib.foreach(step, mx.sym.var("d"), [mx.sym.var("s")])
    g = mx.sym.Group([outs] + states)
    assert g.infer_shape_partial(d=(3,)) == ([(3,), (1,)], [(3, 1), (1,)], [])
    e = g.bind(mx.cpu(), {"d": mx.nd.array([1, 2, 3]), "s": mx.nd.array([2])})
    np.testing.assert_array_equal(e.forward()[0].asnumpy(), [[2], [8], [24]])
    d = mx.sym.var("data", shape=(0, 3, 4))
    outs, _ = mx.sym.contrib.foreach(lambda x, s: (x + s[0], [s[0] * 2]), d, [mx.sym.var("st")])
    assert outs.infer_shape_partial()[1] == [(0, 3, 4)]  # unknown step count stays unknown


def test_while_loop_keeps_a_free_variable_apart_from_the_loop_variable_of_the_same_output():
    def build(F, s):
        def cond(a, b):
            x = F.squeeze(a.slice_axis(axis=0, begin=0, end=1))
            return x == x
        first = [s, s + 1]
        _, st1 = F.contrib.while_loop(cond, lambda a, b: (a + 1, [a, b]), first, max_iterations=5)
        out, _ = F.contrib.while_loop(cond, lambda a, b: (a + 1, [a + st1[0], b + st1[1]]), st1, max_iterations=5)
        return out
    s = mx.nd.array([1.0, 2.0])
    want = build(mx.nd, s).asnumpy()
    np.testing.assert_array_equal(want[:, 0], [2, 3, 4, 5, 6])
    got = build(mx.sym, mx.sym.var("s")).bind(mx.cpu(), {"s": s}).forward()[0].asnumpy()
    np.testing.assert_array_equal(got, want)


def test_subgraph_names_are_counted_on_attrscope():
    from collections import defaultdict
    from plexnet.attribute import AttrScope
    AttrScope._subgraph_names = defaultdict(int)
    x = mx.sym.var("x")
    for _ in range(2):
        mx.sym.contrib.cond(x > 0.5, lambda: x * 2, lambda: x * 3, name="my_cond")
    assert dict(AttrScope._subgraph_names) == {"my_cond_pred": 2, "my_cond_then": 2, "my_cond_else": 2}


def test_split_v2_symbol_with_no_indices_is_one_piece():
    s = mx.sym.split_v2(mx.sym.var("a"), ())
    assert s.infer_shape(a=(3, 4)) == ([(3, 4)], [(3, 4)], [])
    assert mx.sym.var("a").split_v2((1, 2), axis=1).infer_shape(a=(4, 4))[1] == [(4, 1), (4, 1), (4, 2)]


def test_init_op_minus_one_dims_are_inferred_from_consumers():
    o1 = mx.sym.ones(shape=[2, 3])
    b = o1 + mx.sym.transpose(mx.sym.ones(shape=[-1, -1]))
    y = b.bind(mx.cpu(), args={}).forward()[0]
    assert y.shape == (2, 3) and (y.asnumpy() == 2).all()
    b = mx.sym.ones(shape=[2, -1]) + mx.sym.transpose(mx.sym.ones(shape=[3, -1]))
    assert b.bind(mx.cpu(), args={}).forward()[0].shape == (2, 3)
    assert mx.sym.zeros(shape=(2, -1)).infer_shape_partial()[1] == [(2, 0)]
    assert '"(-1, -1)"' in mx.sym.ones(shape=(-1, -1)).tojson()  # the attribute as given
    with pytest.raises(MXNetError):
        mx.sym.ones(shape=(-2, 3))


def test_nd_zeros_and_ones_refuse_unknown_shapes_outside_np_shape():
    for fn in (mx.nd.zeros, mx.nd.ones):
        for shape in ((), (0, 1, 3, 0), (0,)):
            with pytest.raises(MXNetError, match="inferring shapes failed"):
                fn(shape=shape)
        with pytest.raises(MXNetError):
            fn((-1, 2))
        with mx.np_shape():
            assert fn((0, 1, 0, 4)).shape == (0, 1, 0, 4)
    assert mx.nd.empty((0, 2)).shape == (0, 2) and mx.nd.full((0, 2), 3).shape == (0, 2)
    assert mx.nd.array(np.ones(())).shape == ()


def test_depth_to_space_refuses_zero_size_dims():
    with mx.np_shape():
        with pytest.raises(MXNetError, match="zero-size"):
            mx.nd.depth_to_space(mx.nd.empty((1, 4, 0, 3)), 2)
        with pytest.raises(MXNetError, match="zero-size"):
            mx.nd.space_to_depth(mx.nd.empty((1, 0, 4, 4)), 2)


def test_pooling_same_convention_1d():
    # MXNet 1.9.1 (values recorded with it): ceil(n / stride) windows, clipped at the end;
    # avg divides by the elements inside the input; only 1-D pooling, no padding
    x = mx.nd.arange(11).reshape((1, 1, 11))
    def pool(**kw):
        return mx.nd.Pooling(x, pooling_convention="same", pad=(0, 0, 0), **kw).asnumpy().ravel().tolist()
    assert pool(kernel=2, stride=2, pool_type="max") == [1, 3, 5, 7, 9, 10]
    assert pool(kernel=3, stride=2, pool_type="max") == [2, 4, 6, 8, 10, 10]
    assert pool(kernel=3, stride=1, pool_type="max") == [2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10]
    assert pool(kernel=2, stride=2, pool_type="avg") == [0.5, 2.5, 4.5, 6.5, 8.5, 10]
    assert pool(kernel=4, stride=3, pool_type="avg") == [1.5, 4.5, 7.5, 9.5]
    assert pool(kernel=3, stride=2, pool_type="sum") == [3, 9, 15, 21, 27, 10]
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, kernel=2, stride=2, pool_type="avg", pooling_convention="same")
    y.backward()
    assert x.grad.asnumpy().ravel().tolist() == [0.5] * 10 + [1.0]
    with pytest.raises(MXNetError, match="disables the use of pad"):
        mx.nd.Pooling(x, kernel=2, stride=2, pad=2, pooling_convention="same")
    with pytest.raises(MXNetError, match="1-D"):
        mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), stride=(2, 2), pooling_convention="same")


def test_pooling_reads_the_first_len_kernel_strides_and_pads():
    x = mx.nd.ones((1, 1, 10))
    assert mx.nd.Pooling(x, kernel=2, stride=2, pad=(0, 0, 0)).shape == (1, 1, 5)
    assert mx.nd.Pooling(x, kernel=2, stride=(2, 1), pad=(1, 0, 0)).shape == (1, 1, 6)
    x2 = mx.nd.ones((1, 1, 10, 10))
    assert mx.nd.Pooling(x2, kernel=(2, 2), stride=(2, 2, 2), pad=(1, 1, 1)).shape == (1, 1, 6, 6)
    with pytest.raises(MXNetError, match="as many dimensions"):
        mx.nd.Pooling(x2, kernel=(2, 2), stride=2)


def test_activation_arguments_list_mxnet_1_9_choices():
    from plexnet.operator import get_operator_arguments
    args = get_operator_arguments("Activation")
    assert args == (2, ["data", "act_type"],
                    ["NDArray-or-Symbol", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"])
    assert mx.nd.Activation(mx.nd.zeros(2), act_type="mish").shape == (2,)  # extension kept
    with pytest.raises(MXNetError, match="allowed: 'relu'"):
        mx.nd.Activation(mx.nd.zeros(2), act_type="foo")


def test_np_shape_binds_zero_size_and_scalar_inputs():
    # under np_shape a 0 dim is a real size and () a 0-d shape, also for bind (MXNet's test_index_array)
    d = mx.sym.var("data")
    ia = mx.sym.contrib.index_array(d)
    with mx.np_shape():
        e = ia.bind(mx.cpu(), {"data": mx.nd.array(np.ones(()))}, args_grad={"data": mx.nd.zeros(())})
        out = e.forward(is_train=True)[0]
        assert out.shape == (0,)
        e.backward([mx.nd.ones((0,))])
        assert e.grad_dict["data"].shape == ()
        e = ia.bind(mx.cpu(), {"data": mx.nd.array(np.ones((0, 0, 0)))})
        assert e.forward()[0].shape == (0, 0, 0, 3)
    with pytest.raises(MXNetError, match="cannot infer"):
        ia.bind(mx.cpu(), {"data": mx.nd.array(np.ones(()))})  # outside np_shape: () is unknown


@pytest.mark.parametrize("stmt,raises", [
    ("x[:] = y", False), ("x[:] = 1", False), ("x[0] = 1", False), ("x[...] = y", False), ("x += 1", False),
    ("x[:] = y * 2", False), ("x[0] = y[0]", True), ("x[1:2] = y[1:2]", True), ("x += y", True),
])
def test_inplace_write_reading_the_target_is_refused_while_recorded(stmt, raises):
    # MXNet 1.9.1 (all nine checked): a partial assignment is _slice_assign(x, v, out=x) and
    # x += y is _plus(x, y, out=x); recorded because y is, they read and write x
    names = {"x": mx.nd.zeros((3, 4)), "y": mx.nd.ones((3, 4))}
    names["y"].attach_grad()
    with mx.autograd.record():
        if raises:
            with pytest.raises(MXNetError, match=r"Inplace operations \(\+=, -=, x\[:\]=, etc\) are not supported"):
                exec(stmt, {}, names)
        else:
            exec(stmt, {}, names)
    mx.nd.waitall()


def test_slice_axis_keeps_an_unknown_axis_unknown():
    v = mx.sym.var(name="data", shape=(10, 0))
    assert mx.sym.slice_axis(v, axis=0, begin=0, end=5).infer_shape_partial()[1] == [(5, 0)]
    assert mx.sym.slice_axis(v, axis=1, begin=0, end=5).infer_shape_partial()[1] == [(10, 0)]
    with pytest.raises(MXNetError, match="invalid range"):
        mx.nd.slice_axis(mx.nd.ones((3, 4)), axis=1, begin=3, end=3)


def test_imperative_samplers_refuse_unknown_shapes_outside_np_shape():
    for fn in (lambda s: mx.nd.random.uniform(shape=s), lambda s: mx.nd.random.normal(shape=s),
               lambda s: mx.nd.random.randint(0, 5, shape=s)):
        for shape in ((), (0, 2), (2, 0)):
            with pytest.raises(MXNetError, match="inferring shapes failed"):
                fn(shape)
        with mx.np_shape():
            assert fn((0, 2)).shape == (0, 2)
    assert mx.nd.random.uniform(0, 1).shape == (1,)  # no shape given: one draw
    # NDArray parameters: shape () means one draw per element; symbols keep 0 as "infer it"
    assert mx.nd.random.normal(mx.nd.array([0, 1]), mx.nd.array([1, 1]), shape=()).shape == (2,)
    assert mx.sym.random.uniform(shape=(0, 3)).infer_shape_partial()[1] == [(0, 3)]


def test_adamw_update_takes_mxnet_input_order_positionally():
    # MXNet: _adamw_update(weight, grad, mean, var, rescale_grad), _mp_adamw_update(..., weight32, rescale_grad)
    w, g, m, v = mx.nd.ones(3), mx.nd.ones(3), mx.nd.zeros(3), mx.nd.zeros(3)
    mx.nd._internal._adamw_update(w, g, m, v, mx.nd.array([1.0]), lr=0.1, eta=1, out=w)
    np.testing.assert_allclose(w.asnumpy(), [0.68377024] * 3, rtol=1e-6)  # MXNet 1.9.1's numbers
    # float32 coefficients as MXNet's kernel: 1 - 0.9f, 1 - 0.999f
    np.testing.assert_allclose(m.asnumpy(), [0.10000002] * 3, rtol=1e-7)
    np.testing.assert_allclose(v.asnumpy(), [0.0009999871] * 3, rtol=1e-6)
    w16, w32, m, v = mx.nd.ones(3, dtype="float16"), mx.nd.ones(3), mx.nd.zeros(3), mx.nd.zeros(3)
    mx.nd._internal._mp_adamw_update(w16, g.astype("float16"), m, v, w32, mx.nd.array([1.0]), lr=0.1, eta=1, out=w16)
    np.testing.assert_allclose(w32.asnumpy(), [0.68377024] * 3, rtol=1e-6)
    # inputs an operator writes in place are auxiliary states of a symbol, as MXNet's FMutateInputs
    s = mx.sym.contrib.adamw_update(*[mx.sym.var(n) for n in "wgmvr"], lr=0.1, eta=1)
    assert s.list_arguments() == ["w", "g", "r"] and s.list_auxiliary_states() == ["m", "v"]


def test_slice_assign_scalar_positional_order():
    from plexnet.operator import get_operator_arguments
    assert get_operator_arguments("_slice_assign_scalar").names == ["data", "scalar", "begin", "end", "step"]
    out = mx.nd._internal._slice_assign_scalar(mx.nd.zeros((3, 3)), 2.0, (0, 0), (2, 2))
    np.testing.assert_array_equal(out.asnumpy(), [[2, 2, 0], [2, 2, 0], [0, 0, 0]])


def test_wrapped_batchnorm_operators_list_their_inputs():
    import inspect
    for op in (mx.nd.contrib.SyncBatchNorm, mx.nd.contrib.BatchNormWithReLU):
        assert list(inspect.signature(op).parameters)[:5] == ["data", "gamma", "beta", "moving_mean", "moving_var"]


def test_creation_operators_have_no_data_input_and_like_samplers_take_positional_parameters():
    import inspect
    assert list(inspect.signature(mx.nd.uniform).parameters)[:3] == ["low", "high", "shape"]
    assert list(inspect.signature(mx.nd.random_normal).parameters)[:3] == ["loc", "scale", "shape"]
    assert mx.nd.uniform(0, 1, (2, 3)).shape == (2, 3)
    x = mx.nd.zeros((2, 3))
    assert mx.nd.random.uniform_like(x, 5, 6).asnumpy().min() >= 5  # MXNet: (data, low, high, out, name)
    o = mx.nd.empty((2, 3))
    assert mx.nd.random.uniform_like(x, 5, 6, o) is o
    assert mx.sym.random.normal_like(mx.sym.var("d"), 0, 1).infer_shape(d=(2, 2))[1] == [(2, 2)]


def test_creation_functions_take_mxnet_keyword_names():
    assert mx.nd.array(source_array=[1, 2]).shape == (2,)
    assert mx.nd.moveaxis(tensor=mx.nd.ones((2, 3)), source=0, destination=1).shape == (3, 2)
    assert mx.nd.from_numpy(ndarray=np.ones(2)).shape == (2,)
    assert mx.nd.empty((2,), stype="default").shape == (2,)
    with pytest.raises(MXNetError, match="storage type"):
        mx.nd.empty((2,), stype="csr")


def test_tojson_removes_amp_casts_by_default_and_as_in_context_keyword():
    s = mx.sym.amp_cast(mx.sym.var("x"), dtype="float16") * 2
    assert "amp_cast" not in s.tojson() and "amp_cast" in s.tojson(remove_amp_cast=False)
    m = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2)
    j = (m[0] + m[1]).tojson()
    assert "amp_multicast" not in j and mx.sym.load_json(j).list_arguments() == ["a", "b"]
    assert mx.nd.ones(2).as_in_context(context=mx.cpu()).shape == (2,)


def test_integer_scalar_operands_wrap_and_clip_compares_in_float():
    # MXNet 1.9.1 (recorded): the scalar becomes DType(scalar) (C cast: truncated, wrapped)
    x = mx.nd.array([1, 2, 200], dtype="uint8")
    assert (x + 300).asnumpy().tolist() == [45, 46, 244]
    assert (x * -1).asnumpy().tolist() == [255, 254, 56]
    assert (x > 256).asnumpy().tolist() == [1, 1, 1]
    assert mx.nd.maximum(x, -3).asnumpy().tolist() == [253, 253, 253]
    assert (mx.nd.array([1, 2, 100], dtype="int8") + 200).asnumpy().tolist() == [-55, -54, 44]
    u = mx.nd.array([0, 1, 2, 3, 4, 5, 255], dtype="uint8")
    assert mx.nd.clip(u, -2.5, 2.5).asnumpy().tolist() == [0, 1, 2, 2, 2, 2, 2]
    assert mx.nd.clip(u, -1, 300).asnumpy().tolist() == [0, 1, 2, 3, 4, 5, 255]
    assert mx.nd.clip(mx.nd.array([-5, -1, 0, 3, 7], dtype="int32"), -2.5, 2.5).asnumpy().tolist() == [-2, -1, 0, 2, 2]


def test_rrelu_inference_uses_the_mean_slope_and_leaves_the_mask_zero():
    out, mask = mx.nd.LeakyReLU(mx.nd.array([-1.0, 2.0, -3.0]), act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    np.testing.assert_allclose(out.asnumpy(), [-0.2, 2.0, -0.6], rtol=1e-6)
    assert mask.asnumpy().tolist() == [0, 0, 0]  # as MXNet 1.9.1 (the mask is only drawn in training)


def test_gather_nd_bounds_and_clip_with_crossed_bounds():
    x = mx.nd.arange(24).reshape((2, 3, 4))
    assert mx.nd.gather_nd(x, mx.nd.array([[-1], [0]])).asnumpy().ravel()[:2].tolist() == [12, 13]  # wraps once
    for bad in (2, -3):  # MXNet 1.9.1: IndexError "index 2 is out of bounds for axis 0 with size 2"
        with pytest.raises(MXNetError, match="out of bounds"):
            mx.nd.gather_nd(x, mx.nd.array([[bad], [0]])).asnumpy()
    # a_min > a_max: MXNet accepts it and tests x > a_max first
    assert mx.nd.clip(mx.nd.array([0, 1, 2, 3]), 2, 1).asnumpy().tolist() == [2, 2, 1, 1]
