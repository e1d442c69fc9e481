"""A 0 in a variable's ``__shape__`` is an unknown dimension (MXNet 1.x), filled by
inference, never a conflict: Gluon's ``Parameter.var()`` carries deferred shapes such as
``(4, 0)`` into hybridized graphs, as MXNet does (values checked with MXNet 1.9.1)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import plexnet as mx
from plexnet.gluon import nn

pytestmark = pytest.mark.timeout(60)


def test_zero_in_shape_attribute_is_filled_by_inference():
    d = mx.sym.var("d")
    fc = mx.sym.FullyConnected(d, mx.sym.var("w", shape=(3, 0)), num_hidden=3, no_bias=True, name="fc")
    # MXNet 1.9.1: ([(2, 5), (3, 5)], [(2, 3)], []) both ways; without data: ([(), (3, 0)], [()], [])
    assert fc.infer_shape(d=(2, 5)) == ([(2, 5), (3, 5)], [(2, 3)], [])
    assert fc.infer_shape_partial(d=(2, 5)) == ([(2, 5), (3, 5)], [(2, 3)], [])
    assert fc.infer_shape_partial() == ([(), (3, 0)], [()], [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fc.infer_shape() == (None, None, None)


@pytest.mark.parametrize("make,dshape,want", [
    (lambda d: mx.sym.Convolution(d, mx.sym.var("w", shape=(8, 0, 5, 5)), mx.sym.var("b", shape=(8,)),
                                  kernel=(5, 5), num_filter=8), (2, 3, 9, 9), [(8, 3, 5, 5), (8,)]),
    (lambda d: mx.sym.BatchNorm(d, mx.sym.var("g", shape=(0,)), mx.sym.var("b", shape=(0,))), (2, 3, 4, 4),
     [(3,), (3,)]),
    (lambda d: mx.sym.Embedding(d, mx.sym.var("w", shape=(10, 0)), input_dim=10, output_dim=4), (2, 3),
     [(10, 4)]),
    (lambda d: mx.sym.LeakyReLU(d, mx.sym.var("g", shape=(0,)), act_type="prelu"), (2, 3, 4), [(3,)]),
])
def test_partial_parameter_shapes_flow(make, dshape, want):
    s = make(mx.sym.var("data"))
    args, _, _ = s.infer_shape(data=dshape)
    assert args[1:] == want


def test_a_real_conflict_still_raises():
    fc = mx.sym.FullyConnected(mx.sym.var("d"), mx.sym.var("w", shape=(3, 4)), num_hidden=3, no_bias=True)
    with pytest.raises(mx.base.MXNetError, match="weight"):
        fc.infer_shape(d=(2, 5))
    with pytest.raises(mx.base.MXNetError, match="weight"):  # imperatively a 0 is a real size
        mx.nd.FullyConnected(mx.nd.ones((2, 5)), mx.nd.empty((3, 0)), no_bias=True, num_hidden=3)


def test_parameter_var_carries_deferred_shape():
    net = nn.Dense(4)
    net.initialize()
    v = net.weight.var()
    assert v.attr("__shape__") == "(4, 0)"  # as MXNet 1.9.1
    s = mx.sym.FullyConnected(mx.sym.var("data"), v, num_hidden=4, no_bias=True)
    assert s.infer_shape(data=(2, 7))[0][1] == (4, 7)
    conv = nn.Conv2D(8, 3)
    conv.initialize()
    assert conv.weight.var().attr("__shape__") == "(8, 0, 3, 3)"
    seq = nn.HybridSequential()
    seq.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Dense(5))
    seq.initialize()
    seq.hybridize()
    out = seq(mx.nd.ones((2, 3, 6, 6)))
    assert out.shape == (2, 5)
    assert seq[0].weight.shape == (4, 3, 3, 3) and seq[2].weight.shape == (5, 64)
    np.testing.assert_allclose(seq(mx.nd.ones((2, 3, 6, 6))).asnumpy(), out.asnumpy(), rtol=1e-5)


@pytest.mark.parametrize("make,want", [
    (lambda: mx.rnn.LSTMCell(4, prefix="l_"), [(2, 3, 4), (2, 4), (2, 4)]),
    (lambda: mx.rnn.GRUCell(4, prefix="g_"), [(2, 3, 4), (2, 4)]),
    (lambda: mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(4, prefix="a_"), mx.rnn.LSTMCell(4, prefix="b_")),
     [(2, 3, 8), (2, 4), (2, 4), (2, 4), (2, 4)]),
])
def test_unfused_cells_zero_batch_begin_states_bind(make, want):
    """Default begin states are ``zeros((0, hidden))``: their batch comes back from the
    FullyConnected outputs (MXNet 1.9.1 infers and binds the same shapes)."""
    outs, states = make().unroll(3, mx.sym.var("data"), merge_outputs=True, layout="NTC")
    flat: list = []

    def walk(s):
        if isinstance(s, (list, tuple)):
            for x in s:
                walk(x)
        else:
            flat.append(s)
    walk(states)
    g = mx.sym.Group([outs] + flat)
    assert g.infer_shape(data=(2, 3, 5))[1] == want
    assert g.infer_shape_partial(data=(2, 3, 5))[1] == want
    assert [o.shape for o in g.simple_bind(mx.cpu(), data=(2, 3, 5)).forward()] == want


def test_fused_unpack_weights_go_through_pack_weights_of_the_unfused_stack():
    """As in MXNet 1.9.1: the fused cell unpacks to per-gate names (``l_l0_i2h_i_weight``),
    the unfused stack's arguments are merged (``l_l0_i2h_weight``); ``pack_weights`` of the
    stack converts."""
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode="lstm", prefix="l_")
    stack = cell.unfuse()
    outs, _ = stack.unroll(3, mx.sym.var("data"), merge_outputs=True, layout="TNC")
    fouts, _ = cell.unroll(3, mx.sym.var("data"), merge_outputs=True, layout="TNC")
    n = dict(zip(fouts.list_arguments(), fouts.infer_shape(data=(3, 2, 5))[0]))["l_parameters"]
    p = {"l_parameters": mx.nd.array(np.random.RandomState(0).randn(*n) * 0.1)}
    unpacked = cell.unpack_weights(p)
    assert "l_l0_i2h_i_weight" in unpacked and "l_l0_i2h_weight" not in unpacked
    packed = stack.pack_weights(unpacked)
    assert sorted(packed) == sorted(a for a in outs.list_arguments() if a != "data")
    x = mx.nd.array(np.random.RandomState(1).rand(3, 2, 5))
    yu = outs.bind(mx.cpu(), {**packed, "data": x}).forward()[0].asnumpy()
    yf = fouts.bind(mx.cpu(), {**p, "data": x}).forward()[0].asnumpy()
    np.testing.assert_allclose(yu, yf, rtol=1e-4, atol=1e-6)
