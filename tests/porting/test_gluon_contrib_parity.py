"""MXNet 1.9.1's ``gluon.contrib`` (found missing by porting MXNet's test_gluon_contrib.py
and test_gluon_rnn.py): layers, conv RNN cells, deformable convolutions. Values are pinned
against MXNet 1.9.1 outputs recorded by tests/fixtures/make_mxnet_gluon_contrib_fixtures.py."""
import os

import numpy as np
import pytest

import plexnet as mx
from plexnet import gluon
from plexnet.gluon import contrib, nn

REF = np.load(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                           "gluon_contrib", "mxnet_gluon_contrib.npz"))

CELLS = {
    "conv1d_rnn": (lambda: contrib.rnn.Conv1DRNNCell((3, 7), 4, 3, 3, i2h_pad=(1,), prefix="c_"), 2),
    "conv1d_lstm": (lambda: contrib.rnn.Conv1DLSTMCell((3, 7), 4, 3, 5, prefix="c_"), 2),
    "conv1d_gru": (lambda: contrib.rnn.Conv1DGRUCell((3, 7), 4, 3, 3, h2h_dilate=(2,), prefix="c_"), 2),
    "conv2d_lstm": (lambda: contrib.rnn.Conv2DLSTMCell((2, 5, 6), 3, (3, 1), 3, prefix="c_"), 2),
    "conv2d_gru": (lambda: contrib.rnn.Conv2DGRUCell((2, 5, 6), 3, 3, 3, activation="relu", prefix="c_"), 2),
    "conv3d_rnn": (lambda: contrib.rnn.Conv3DRNNCell((2, 4, 4, 5), 2, 3, 3, prefix="c_"), 2),
}


def _close(a, name):
    np.testing.assert_allclose(a.asnumpy(), REF[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", sorted(CELLS))
def test_conv_rnn_cells_match_mxnet(name, hybridize):
    make, _ = CELLS[name]
    cell = make()
    cell.initialize()
    if hybridize:
        cell.hybridize()
    x = mx.nd.array(REF[f"{name}/x"])
    cell.unroll(x.shape[1], x, merge_outputs=True)
    for k, p in cell.collect_params().items():
        p.set_data(mx.nd.array(REF[f"{name}/{k}"]))
    x.attach_grad()
    with mx.autograd.record():
        out, states = cell.unroll(x.shape[1], x, merge_outputs=True)
        loss = (out * out).sum() + sum((s * (i + 2)).sum() for i, s in enumerate(states))
    loss.backward()
    _close(out, f"{name}/out")
    for i, s in enumerate(states):
        _close(s, f"{name}/state{i}")
    _close(x.grad, f"{name}/dx")


@pytest.mark.parametrize("cls,gates,dims,layout", [
    (contrib.rnn.Conv1DRNNCell, 1, 1, "NCW"), (contrib.rnn.Conv2DLSTMCell, 4, 2, "NCHW"),
    (contrib.rnn.Conv3DGRUCell, 3, 3, "NCDHW")])
def test_conv_rnn_cell_structure(cls, gates, dims, layout):
    shape = (10,) + (9,) * dims
    cell = cls(shape, 6, 3, 3, prefix="rnn_")
    params = {k: v.shape for k, v in cell.collect_params().items()}
    assert params == {"rnn_i2h_weight": (6 * gates, 10) + (3,) * dims, "rnn_h2h_weight": (6 * gates, 6) + (3,) * dims,
                      "rnn_i2h_bias": (6 * gates,), "rnn_h2h_bias": (6 * gates,)}
    states = cell.state_info(2)
    assert [s["shape"] for s in states] == [(2, 6) + (7,) * dims] * (2 if gates == 4 else 1)
    assert all(s["__layout__"] == layout for s in states)
    assert repr(cell) == f"{cls.__name__}(10 -> {6 * gates}, tanh, {layout})"
    inputs = [mx.sym.Variable("rnn_t%d_data" % i) for i in range(3)]
    outputs, _ = cell.unroll(3, inputs)
    outputs = mx.sym.Group(outputs)
    assert outputs.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output", "rnn_t2_out_output"]
    _, outs, _ = outputs.infer_shape(**{"rnn_t%d_data" % i: (1,) + shape for i in range(3)})
    assert outs == [(1, 6) + (7,) * dims] * 3


def test_conv_rnn_cell_default_prefix_and_deferred_channels():
    with mx.name.NameManager():
        cell = contrib.rnn.Conv1DGRUCell((0, 7), 5, 3, 3)
    assert sorted(cell.collect_params().keys())[0].startswith("conv_gru")
    assert cell.i2h_weight.shape == (15, 0, 3)
    assert repr(cell) == "Conv1DGRUCell(None -> 15, tanh, NCW)"
    cell.initialize()
    cell.hybridize()
    cell.unroll(3, mx.nd.ones((2, 3, 4, 7)), merge_outputs=True)
    assert cell.i2h_weight.shape == (15, 4, 3)


def test_conv_rnn_cell_even_h2h_kernel_is_refused():
    with pytest.raises(AssertionError, match="Only support odd number"):
        contrib.rnn.Conv1DRNNCell((3, 7), 5, 3, 2)


@pytest.mark.parametrize("name,cls", [("deform", contrib.cnn.DeformableConvolution),
                                      ("mdeform", contrib.cnn.ModulatedDeformableConvolution)])
def test_deformable_convolutions_match_mxnet(name, cls):
    kw = {"padding": (1, 1)} if name == "deform" else {"strides": (2, 2)}
    layer = cls(4, kernel_size=(3, 3), prefix="d_", **kw)
    layer.initialize()
    x = mx.nd.array(REF[f"{name}/x"])
    layer(x)
    for k, p in layer.collect_params().items():
        p.set_data(mx.nd.array(REF[f"{name}/{k}"]))
    _close(layer(x), f"{name}/out")
    layer.hybridize()
    _close(layer(x), f"{name}/out")


def test_deformable_convolution_parameters():
    with mx.name.NameManager():          # automatic prefixes count from 0 in a fresh manager
        _deformable_convolution_parameters()


def _deformable_convolution_parameters():
    layer = contrib.cnn.DeformableConvolution(4, kernel_size=(3, 3), in_channels=2)
    assert {k: v.shape for k, v in layer.collect_params().items()} == {
        "deformable_conv0_offset_weight": (18, 2, 3, 3), "deformable_conv0_offset_bias": (18,),
        "deformable_conv0_deformable_conv_weight": (4, 2, 3, 3), "deformable_conv0_deformable_conv_bias": (4,)}
    m = contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=(3, 3), use_bias=False, offset_use_bias=False)
    assert sorted(m.collect_params().keys()) == ["modulated_deformable_conv0_deformable_conv_weight",
                                                 "modulated_deformable_conv0_offset_weight"]
    m.initialize()            # input channels deferred: the 0 in (4, 0, 3, 3) is filled at the first call
    assert m(mx.nd.ones((1, 5, 6, 6))).shape == (1, 4, 4, 4)
    assert m.deformable_conv_weight.shape == (4, 5, 3, 3)
    assert m.offset_weight.shape == (27, 5, 3, 3)


@pytest.mark.parametrize("cls,factor,shape,out", [
    (contrib.nn.PixelShuffle1D, 2, (1, 4, 3), (1, 2, 6)),
    (contrib.nn.PixelShuffle2D, (2, 3), (1, 12, 2, 3), (1, 2, 4, 9)),
    (contrib.nn.PixelShuffle3D, (2, 1, 2), (1, 4, 2, 3, 4), (1, 1, 4, 3, 8))])
def test_pixel_shuffle_values(cls, factor, shape, out):
    x = mx.nd.arange(int(np.prod(shape))).reshape(shape)
    layer = cls(factor)
    y = layer(x).asnumpy()
    # reference: MXNet's reshape/transpose order written out in numpy
    fs = (factor,) if isinstance(factor, int) else factor
    n = len(fs)
    a = x.asnumpy().reshape((shape[0], -1) + fs + shape[2:])
    axes = (0, 1) + tuple(ax for i in range(n) for ax in (2 + n + i, 2 + i))
    np.testing.assert_array_equal(y, a.transpose(axes).reshape(out))
    layer.hybridize()
    np.testing.assert_array_equal(layer(x).asnumpy(), y)
    assert repr(layer) == f"{cls.__name__}({factor})"


def test_pixel_shuffle_2d_as_mxnet():
    y = contrib.nn.PixelShuffle2D((2, 3))(mx.nd.arange(36).reshape((1, 6, 2, 3)))
    assert y.asnumpy()[0, 0, :2].tolist() == [[0, 6, 12, 1, 7, 13, 2, 8, 14], [18, 24, 30, 19, 25, 31, 20, 26, 32]]
    with pytest.raises(ValueError):
        contrib.nn.PixelShuffle2D((2, 2, 2))


def test_concurrent_containers_and_identity():
    model = contrib.nn.HybridConcurrent(axis=1)
    model.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=3))
    assert len(model(mx.sym.var("data")).list_arguments()) == 5
    model.initialize()
    assert model(mx.nd.ones((5, 3))).shape == (5, 6)
    model2 = contrib.nn.Concurrent(axis=0)
    model2.add(contrib.nn.Identity(), contrib.nn.Identity())
    assert model2(mx.nd.ones((2, 3))).shape == (4, 3)
    assert isinstance(contrib.nn.SyncBatchNorm(), nn.BatchNorm)


def test_contrib_data_and_rnn_reexports():
    assert list(contrib.data.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]
    assert contrib.rnn.LSTMPCell is gluon.rnn.LSTMPCell
    assert contrib.rnn.VariationalDropoutCell is gluon.rnn.VariationalDropoutCell

