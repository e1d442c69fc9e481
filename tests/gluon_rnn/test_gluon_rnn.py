"""gluon.rnn against MXNet 1.9.1: layers (values and gradients) and cells for fixed
weights, imperative and hybridized; structure and error behaviour."""
from __future__ import annotations

import os

import numpy as np
import pytest

import plexnet as mx
from plexnet.gluon import rnn

from . import rnn_cases as rc

REF = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "rnn_gluon.npz"))


def _check(name, res):
    for i, r in enumerate(res):
        np.testing.assert_allclose(r.asnumpy(), REF[f"{name}/out{i}"], rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name} output {i}")


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", rc.LAYERS)
def test_layer_values_and_gradients_as_mxnet(name, hybridize):
    net, run, x = rc.build_layer(mx, name)
    if hybridize:
        net.hybridize()
    xs = mx.nd.array(x)
    if not rc.has_grad(name):
        _check(name, run(net, xs))
        return
    xs.attach_grad()
    with mx.autograd.record():
        res = run(net, xs)
        loss = sum((r * (i + 1)).sum() for i, r in enumerate(res))
    loss.backward()
    _check(name, res)
    np.testing.assert_allclose(xs.grad.asnumpy(), REF[f"{name}/dx"], rtol=1e-4, atol=1e-5)
    for k, p in net._collect_params_with_prefix().items():
        np.testing.assert_allclose(p.grad().asnumpy(), REF[f"{name}/d{k}"], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("name", rc.CELLS)
def test_cell_unroll_as_mxnet(name):
    cell, run, x = rc.build_cell(mx, name)
    _check(name, run(cell, mx.nd.array(x)))


@pytest.mark.parametrize("name", rc.CELL_GRADS)
def test_cell_gradients_as_mxnet(name):
    cell, run, x = rc.build_cell(mx, name)
    xs = mx.nd.array(x)
    xs.attach_grad()
    with mx.autograd.record(train_mode=False):
        loss = sum((r * (i + 1)).sum() for i, r in enumerate(run(cell, xs)))
    loss.backward()
    np.testing.assert_allclose(xs.grad.asnumpy(), REF[f"{name}/dx"], rtol=1e-4, atol=1e-5)
    for k, p in cell._collect_params_with_prefix().items():
        np.testing.assert_allclose(p.grad().asnumpy(), REF[f"{name}/d{k}"], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("name", ["rnn_cell", "lstm_cell", "gru_cell", "hybrid_sequential", "lstmp"])
def test_hybridized_cell_unroll_as_mxnet(name):
    cell, run, x = rc.build_cell(mx, name)
    cell.hybridize()
    _check(name, run(cell, mx.nd.array(x)))


def test_layer_parameter_names_and_deferred_input_size():
    net = rnn.LSTM(8, num_layers=2, bidirectional=True)
    assert sorted(net.collect_params().keys()) == sorted(
        f"{net.prefix}{d}{i}_{g}_{t}" for d in "lr" for i in range(2) for g in ("i2h", "h2h")
        for t in ("weight", "bias"))
    net.initialize()
    out = net(mx.nd.ones((3, 2, 7)))
    assert out.shape == (3, 2, 16)
    assert net.l0_i2h_weight.shape == (32, 7) and net.r1_i2h_weight.shape == (32, 16)
    assert repr(net) == "LSTM(7 -> 8, TNC, num_layers=2, bidirectional)"


def test_layer_structural_names_load_mxnet_layout(tmp_path):
    net, _, x = rc.build_layer(mx, "gru-L2-bi-ntc")
    net.save_parameters(str(tmp_path / "g.params"))
    saved = mx.nd.load(str(tmp_path / "g.params"))
    mx_saved = mx.nd.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "gru_mxnet.params"))
    assert sorted(saved) == sorted(mx_saved)  # MXNet's names: _unfused.0.l_cell.i2h_weight, ...
    for src in (str(tmp_path / "g.params"),
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "gru_mxnet.params")):
        other = rnn.GRU(6, num_layers=2, bidirectional=True, layout="NTC")
        other.load_parameters(src)
        np.testing.assert_allclose(other(mx.nd.array(x)).asnumpy(), net(mx.nd.array(x)).asnumpy(), rtol=1e-6)


def test_layer_bad_state_shape():
    net = rnn.GRU(4, input_size=3)
    net.initialize()
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        net(mx.nd.ones((2, 5, 3)), [mx.nd.zeros((1, 4, 4))])


def test_layer_symbolic_and_export(tmp_path):
    net, run, x = rc.build_layer(mx, "lstm")
    net.hybridize()
    ref = net(mx.nd.array(x)).asnumpy()
    net.export(str(tmp_path / "lstm"))
    # as in MXNet, the zero begin states made inside the call are graph inputs too
    back = mx.gluon.SymbolBlock.imports(str(tmp_path / "lstm-symbol.json"), ["data0", "data1", "data2"],
                                        str(tmp_path / "lstm-0000.params"))
    zeros = mx.nd.zeros((1, rc.N, 6))
    np.testing.assert_allclose(back(mx.nd.array(x), zeros, zeros).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_cell_state_info_and_begin_state():
    cell = rnn.LSTMCell(5, input_size=3)
    assert cell.state_info(2) == [{"shape": (2, 5), "__layout__": "NC"}] * 2
    states = cell.begin_state(2)
    assert [s.shape for s in states] == [(2, 5), (2, 5)]
    cell.initialize()
    out, new = cell(mx.nd.ones((2, 3)), states)
    assert out.shape == (2, 5) and len(new) == 2


def test_unroll_valid_length_masks_states():
    cell = rnn.GRUCell(4, input_size=3)
    cell.initialize()
    x = mx.nd.array(np.random.RandomState(0).rand(2, 5, 3))
    vl = mx.nd.array([2, 5])
    outs, states = cell.unroll(5, x, layout="NTC", merge_outputs=True, valid_length=vl)
    o = outs.asnumpy()
    assert np.all(o[0, 2:] == 0) and np.any(o[1, 4] != 0)
    # the state of sample 0 is its state after 2 steps
    outs2, states2 = cell.unroll(2, x[:, :2], layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(states[0].asnumpy()[0], states2[0].asnumpy()[0], rtol=1e-5)


def test_dropout_cells_in_training_mode():
    cell = rnn.DropoutCell(0.5)
    x = mx.nd.ones((4, 100))
    with mx.autograd.record():
        y, _ = cell(x, [])
    v = y.asnumpy()
    assert set(np.unique(v)).issubset({0.0, 2.0}) and 0.2 < (v == 0).mean() < 0.8
    z = rnn.ZoneoutCell(rnn.RNNCell(4, input_size=3), zoneout_outputs=0.5)
    z.initialize()
    with mx.autograd.record():
        out, _ = z.unroll(3, mx.nd.ones((2, 3, 3)), layout="NTC", merge_outputs=True)
    assert out.shape == (2, 3, 4)
    with pytest.raises(AssertionError):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2)))


def test_bidirectional_cell_refuses_step_call():
    cell = rnn.BidirectionalCell(rnn.RNNCell(2, input_size=2), rnn.RNNCell(2, input_size=2))
    cell.initialize()
    with pytest.raises(NotImplementedError, match="Bidirectional cannot be stepped"):
        cell(mx.nd.ones((1, 2)), cell.begin_state(batch_size=1))


def test_modifier_cell_params_and_reset():
    base = rnn.LSTMCell(3, input_size=2)
    res = rnn.ResidualCell(base)
    assert isinstance(res, rnn.ModifierCell)
    assert set(res.collect_params().keys()) == set(base.collect_params().keys())
    res.reset()
    assert base._counter == -1


def test_deferred_input_size_hybridized_and_training_step():
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(rnn.LSTM(8, layout="NTC"))
        net.add(mx.gluon.nn.Dense(1, flatten=False))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, (16, 5, 3)))
    y = mx.nd.array(np.cumsum(x.asnumpy()[:, :, :1], axis=1))  # running sum of the first feature
    assert net[0].l0_i2h_weight.shape == (32, 0)
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    loss_fn = mx.gluon.loss.L2Loss()
    losses = []
    for _ in range(30):
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(16)
        losses.append(float(loss.mean().asscalar()))
    assert net[0].l0_i2h_weight.shape == (32, 3)
    assert losses[-1] < 0.5 * losses[0]


def test_deferred_bidirectional_in_hybridized_parent_matches_imperative():
    def build():
        net = mx.gluon.nn.HybridSequential(prefix="m_")
        with net.name_scope():
            net.add(rnn.GRU(4, num_layers=2, bidirectional=True))
        net.initialize(mx.init.Uniform(0.3))
        return net
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (3, 2, 5)))
    mx.random.seed(3)
    a = build()
    ref = a(x).asnumpy()
    mx.random.seed(3)
    b = build()
    b.hybridize()
    np.testing.assert_allclose(b(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert b[0].r0_i2h_weight.shape == (12, 5) and b[0].l1_i2h_weight.shape == (12, 8)
