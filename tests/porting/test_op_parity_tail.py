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
