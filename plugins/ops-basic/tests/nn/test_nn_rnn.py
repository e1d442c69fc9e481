"""RNN: numerical gradients for every mode, projection, clipping, sequence lengths,
dropout, shapes and errors (values against MXNet: test_mxnet_fixtures.py)."""
from __future__ import annotations

import numpy as np
import pytest

from opcheck import check_gradient, check_req, make_prop, run_backward, run_forward
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError


def _args(kw: dict, data: tuple, seed: int = 0) -> list:
    prop = make_prop("RNN", kw)
    n_extra = len(prop.list_arguments()) - 1
    ins, _, _ = prop.infer_shape([data] + [None] * n_extra)
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s) for s in ins]


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("layers,bi", [(1, False), (2, True)])
def test_rnn_gradient(mode: str, layers: int, bi: bool) -> None:
    kw = dict(state_size=3, num_layers=layers, mode=mode, bidirectional=bi, state_outputs=True)
    args = _args(kw, (3, 2, 4))
    check_gradient("RNN", args, kw, rtol=1e-4, atol=1e-6)


def test_rnn_shapes_and_outputs() -> None:
    kw = dict(state_size=5, num_layers=2, mode="lstm", bidirectional=True)
    prop = make_prop("RNN", kw)
    ins, outs, _ = prop.infer_shape([(7, 3, 4), None, None, None])
    # MXNet's GetRnnParamSize: layer 0: 2*(4*5*(4+5) + 2*4*5); layer 1: 2*(4*5*(10+5) + 2*4*5)
    assert ins[1] == (2 * (180 + 40) + 2 * (300 + 40),)
    assert ins[2] == ins[3] == (4, 3, 5)
    assert outs[0] == (7, 3, 10)
    assert prop.num_visible_outputs() == 1
    assert make_prop("RNN", dict(kw, state_outputs=True)).num_visible_outputs() == 3
    assert make_prop("RNN", dict(kw, mode="gru", state_outputs=True)).list_arguments() == ["data", "parameters", "state"]


def test_rnn_lstm_projection_and_clip() -> None:
    kw = dict(state_size=4, num_layers=2, mode="lstm", projection_size=2, state_outputs=True,
              lstm_state_clip_min=-0.4, lstm_state_clip_max=0.4)
    args = _args(kw, (3, 2, 3))
    outs = run_forward("RNN", args, kw)
    assert outs[0].shape == (3, 2, 2) and outs[1].shape == (2, 2, 2) and outs[2].shape == (2, 2, 4)
    assert np.all(np.abs(outs[2]) <= 0.4 + 1e-12)
    check_gradient("RNN", args, kw, rtol=1e-4, atol=1e-6)


def test_rnn_sequence_length() -> None:
    kw = dict(state_size=3, num_layers=1, mode="lstm", bidirectional=True, use_sequence_length=True,
              state_outputs=True)
    args = _args(kw, (4, 3, 2))
    args[-1] = np.array([4, 2, 1], dtype=np.float64)
    outs = run_forward("RNN", args, kw)
    assert np.all(outs[0][2:, 1] == 0) and np.all(outs[0][1:, 2] == 0)
    # a sequence of length 2 gives what a 2-step run on it alone gives
    kw1 = dict(kw, use_sequence_length=False)
    alone = run_forward("RNN", [args[0][:2, 1:2], args[1], args[2][:, 1:2], args[3][:, 1:2]], kw1)
    np.testing.assert_allclose(outs[0][:2, 1:2], alone[0], rtol=1e-12)
    np.testing.assert_allclose(outs[1][:, 1:2], alone[1], rtol=1e-12)
    check_gradient("RNN", args, kw, wrt=["data", "parameters", "state", "state_cell"], rtol=1e-4, atol=1e-6)


def test_rnn_dropout_between_layers() -> None:
    kw = dict(state_size=3, num_layers=3, mode="gru", p=0.5)
    args = _args(kw, (3, 2, 2))
    train = run_forward("RNN", args, kw, is_train=True)
    mask = train[-1]
    assert set(np.unique(mask)) <= {0.0, 2.0}
    infer = run_forward("RNN", args, kw, is_train=False)
    assert np.all(infer[-1] == 1)
    check_gradient("RNN", args, kw, rtol=1e-4, atol=1e-6)  # same seed: same masks in every run


def test_rnn_req() -> None:
    kw = dict(state_size=2, num_layers=1, mode="rnn_tanh", state_outputs=True)
    check_req("RNN", _args(kw, (2, 2, 3)), kw, req=("null", "write", "add"))


def test_rnn_errors() -> None:
    with pytest.raises(ParamError, match="projection_size"):
        make_prop("RNN", dict(state_size=2, num_layers=1, mode="gru", projection_size=1))
    with pytest.raises(ParamError, match="mode"):
        make_prop("RNN", dict(state_size=2, num_layers=1, mode="elman"))
    with pytest.raises(ParamError, match="lstm_state_clip"):
        make_prop("RNN", dict(state_size=2, num_layers=1, mode="lstm", lstm_state_clip_min=0.0))
    prop = make_prop("RNN", dict(state_size=2, num_layers=1, mode="rnn_tanh"))
    with pytest.raises(ShapeError, match=r"RNN.*'data'.*\(2, 3\)"):
        prop.infer_shape([(2, 3), None, None])
    with pytest.raises(ShapeError, match=r"RNN.*'parameters'"):
        prop.infer_shape([(2, 3, 4), (5,), None])


def test_rnn_through_symbol_executor() -> None:
    import plexnet as mx
    data = mx.sym.Variable("data")
    net = mx.sym.RNN(data, state_size=4, num_layers=1, mode="lstm", name="rnn")
    assert net.list_arguments() == ["data", "rnn_parameters", "rnn_state", "rnn_state_cell"]
    exe = net.simple_bind(mx.cpu(), data=(5, 2, 3))
    for k, v in exe.arg_dict.items():
        v[:] = np.random.default_rng(1).uniform(-0.5, 0.5, v.shape)
    out = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.ones(out.shape))
    assert out.shape == (5, 2, 4)
    assert np.abs(exe.grad_dict["rnn_parameters"].asnumpy()).sum() > 0
    args = [exe.arg_dict[n].asnumpy().astype(np.float64) for n in net.list_arguments()]
    ref = run_backward("RNN", args, dict(state_size=4, num_layers=1, mode="lstm"), [np.ones((5, 2, 4))])
    np.testing.assert_allclose(exe.grad_dict["rnn_parameters"].asnumpy(), ref[1], rtol=1e-4, atol=1e-5)


def test_fused_rnn_cell_runs_on_the_operator() -> None:
    """mx.rnn.FusedRNNCell: begin states are ``_zeros`` of shape (L*D, 0, H) whose batch
    dim the graph infers from the RNN operator (MXNet 1.x partial shapes)."""
    import plexnet as mx
    rnn = getattr(mx, "rnn", None)
    if rnn is None or not hasattr(rnn, "FusedRNNCell"):
        pytest.skip("mx.rnn.FusedRNNCell is not available")
    cell = rnn.FusedRNNCell(4, num_layers=2, mode="lstm", bidirectional=True, prefix="f_")
    out, _ = cell.unroll(3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    exe = out.simple_bind(mx.current_context(), data=(3, 2, 5))
    assert exe.arg_dict["f_parameters"].shape == (2 * (4 * 4 * (5 + 4) + 2 * 4 * 4) + 2 * (4 * 4 * (8 + 4) + 2 * 4 * 4),)
    for v in exe.arg_dict.values():
        v[:] = np.random.default_rng(0).uniform(-0.5, 0.5, v.shape)
    y = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.ones(y.shape))
    assert y.shape == (3, 2, 8)
    assert np.isfinite(exe.grad_dict["f_parameters"].asnumpy()).all()
