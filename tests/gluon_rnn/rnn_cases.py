"""gluon.rnn cases built the same way with MXNet (fixture generator) and plexnet
(tests): ``build(mx, name)`` returns ``(block, run)`` where ``run(block, x)`` gives the
list of output arrays; the weights come from ``weights`` (names and shapes only)."""
from __future__ import annotations

import numpy as np

T, N, C = 4, 3, 5


def weights(block) -> None:
    """Deterministic values for every parameter, by sorted structural name."""
    params = block._collect_params_with_prefix()
    for i, name in enumerate(sorted(params)):
        p = params[name]
        rng = np.random.RandomState(100 + i)
        v = rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)
        p.set_data(_nd_of(p).array(v))


def _nd_of(p):
    """The ``nd`` module of the library that made ``p`` (mxnet or plexnet)."""
    import importlib
    return importlib.import_module(type(p.data()).__module__.split(".")[0]).nd


def x_tnc(layout="TNC"):
    x = np.random.RandomState(7).uniform(-1, 1, (T, N, C)).astype(np.float32)
    return x if layout == "TNC" else x.transpose(1, 0, 2).copy()


def _layer(mx, name):
    r = mx.gluon.rnn
    kind, *opts = name.split("-")
    kw = {}
    layout = "TNC"
    for o in opts:
        if o == "bi":
            kw["bidirectional"] = True
        elif o.startswith("L"):
            kw["num_layers"] = int(o[1:])
        elif o == "ntc":
            layout = kw["layout"] = "NTC"
        elif o.startswith("P"):
            kw["projection_size"] = int(o[1:])
        elif o in ("relu", "tanh"):
            kw["activation"] = o
    cls = {"rnn": r.RNN, "lstm": r.LSTM, "gru": r.GRU}[kind]
    net = cls(6, input_size=C, **kw)
    return net, layout


LAYERS = ["rnn-tanh", "rnn-relu-L2", "lstm", "lstm-L2-bi", "lstm-ntc", "gru", "gru-L2-bi-ntc", "lstm-P3"]
CELL_GRADS = ["rnn_cell", "lstm_cell", "gru_cell", "hybrid_sequential", "bidirectional", "residual", "lstmp"]
CELLS = ["rnn_cell", "lstm_cell", "gru_cell", "sequential", "hybrid_sequential", "bidirectional", "residual",
         "zoneout", "dropout", "variational", "lstmp", "lstm_cell_ntc_merge"]


def has_grad(name):
    """MXNet 1.9.1 has no CPU training of LSTM with projection."""
    return "-P" not in name


def build_layer(mx, name):
    net, layout = _layer(mx, name)
    net.initialize()
    weights(net)

    def run(net, x):
        states = net.begin_state(N)
        states = [s + 0.1 * (i + 1) for i, s in enumerate(states)]
        out, new = net(x, states)
        return [out] + list(new)
    return net, run, x_tnc(layout)


def build_cell(mx, name):
    r = mx.gluon.rnn
    layout = "TNC"
    merge = True
    if name == "rnn_cell":
        cell = r.RNNCell(6, activation="tanh", input_size=C)
    elif name == "lstm_cell":
        cell = r.LSTMCell(6, input_size=C)
    elif name == "lstm_cell_ntc_merge":
        cell = r.LSTMCell(6, input_size=C)
        layout, merge = "NTC", False
    elif name == "gru_cell":
        cell = r.GRUCell(6, input_size=C)
    elif name == "sequential":
        cell = r.SequentialRNNCell()
        with cell.name_scope():
            cell.add(r.LSTMCell(6, input_size=C))
            cell.add(r.GRUCell(4, input_size=6))
    elif name == "hybrid_sequential":
        cell = r.HybridSequentialRNNCell()
        with cell.name_scope():
            cell.add(r.RNNCell(6, input_size=C))
            cell.add(r.LSTMCell(4, input_size=6))
    elif name == "bidirectional":
        cell = r.BidirectionalCell(r.LSTMCell(6, input_size=C), r.GRUCell(4, input_size=C))
    elif name == "residual":
        cell = r.ResidualCell(r.GRUCell(C, input_size=C))
    elif name == "zoneout":
        cell = r.ZoneoutCell(r.LSTMCell(6, input_size=C), zoneout_outputs=0.3, zoneout_states=0.2)
    elif name == "dropout":
        cell = r.SequentialRNNCell()
        with cell.name_scope():
            cell.add(r.RNNCell(6, input_size=C))
            cell.add(r.DropoutCell(0.5))
    elif name == "variational":
        vdc = getattr(r, "VariationalDropoutCell", None) or mx.gluon.contrib.rnn.VariationalDropoutCell
        cell = vdc(r.GRUCell(6, input_size=C), drop_inputs=0.3, drop_states=0.3, drop_outputs=0.3)
    elif name == "lstmp":
        lp = getattr(r, "LSTMPCell", None) or mx.gluon.contrib.rnn.LSTMPCell
        cell = lp(6, 3, input_size=C)
    else:
        raise KeyError(name)
    cell.initialize()
    weights(cell)

    def run(cell, x):
        outs, states = cell.unroll(T, x, layout=layout, merge_outputs=merge)
        outs = outs if merge else mx.nd.stack(*outs, axis=1)
        return [outs] + list(states)
    return cell, run, x_tnc(layout)
