"""What gluon.rnn / gluon.contrib.rnn cells and layers must share with MXNet 1.9.1,
recorded by ``fixtures/make_mxnet_rnn_structure.py`` (with mxnet) and checked by
``test_rnn_structure.py`` (with plexnet): parameter names/shapes/initializers in
``collect_params()`` order, ``state_info``, ``repr``, the graphs traced for one step
and for ``unroll`` (layouts, merge_outputs, valid_length), the fused layers' graphs and
``_unfuse()`` stacks, and the outputs for fixed weights and inputs.

Every builder takes the library module (``mxnet`` or ``plexnet``) and is called inside
a fresh ``NameManager`` so that automatic names match."""
from __future__ import annotations

import inspect
import json
from typing import Any, Callable

import numpy as np

T, N, C, H = 3, 2, 3, 4
CONV_IN = {1: (2, 5), 2: (2, 4, 4), 3: (2, 3, 3, 3)}


def _seq(mx: Any, hybrid: bool) -> Any:
    r = mx.gluon.rnn
    s = (r.HybridSequentialRNNCell if hybrid else r.SequentialRNNCell)(prefix="s_")
    with s.name_scope():
        s.add(r.RNNCell(H, input_size=C, activation="relu"))
        s.add(r.DropoutCell(0.5))
        s.add(r.LSTMCell(H, input_size=H))
        s.add(r.GRUCell(H, input_size=H) if hybrid else r.ZoneoutCell(r.GRUCell(H, input_size=H), 0.3, 0.2))
    return s


def _conv(mx: Any, kind: str, dims: int, **kw: Any) -> Any:
    cls = getattr(mx.gluon.contrib.rnn, f"Conv{dims}D{kind}Cell")
    return cls(input_shape=CONV_IN[dims], hidden_channels=3, i2h_kernel=3, h2h_kernel=3, prefix="conv_", **kw)


def _default_names(mx: Any) -> Any:
    # automatic prefixes (rnn0_, lstm0_, ...) and a modifier's prefix built from them
    r = mx.gluon.rnn
    s = r.SequentialRNNCell()
    with s.name_scope():
        s.add(r.RNNCell(H, input_size=C))
        s.add(r.ResidualCell(r.LSTMCell(H, input_size=H)))
        s.add(r.GRUCell(H, input_size=H))
    return s


def _leaky(mx: Any) -> Any:
    return mx.gluon.rnn.RNNCell(H, activation=mx.gluon.nn.LeakyReLU(0.1), input_size=C, prefix="rnn_")


# label -> builder(mx); each builds a cell taking (N, C) steps (conv cells: (N,) + CONV_IN)
CELLS: dict[str, Callable[[Any], Any]] = {
    "rnn_tanh": lambda mx: mx.gluon.rnn.RNNCell(H, input_size=C, prefix="rnn_"),
    "rnn_relu_deferred": lambda mx: mx.gluon.rnn.RNNCell(H, activation="relu", prefix="rnn_"),
    "rnn_softrelu": lambda mx: mx.gluon.rnn.RNNCell(H, activation="softrelu", input_size=C, prefix="rnn_"),
    "rnn_leaky": _leaky,
    "lstm": lambda mx: mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="lstm_"),
    "lstm_acts": lambda mx: mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="lstm_", activation="softsign",
                                                  recurrent_activation="tanh",
                                                  i2h_bias_initializer="ones"),
    "gru": lambda mx: mx.gluon.rnn.GRUCell(H, input_size=C, prefix="gru_", h2h_weight_initializer="ones"),
    "sequential": lambda mx: _seq(mx, False),
    "hybrid_sequential": lambda mx: _seq(mx, True),
    "default_names": _default_names,
    "dropout": lambda mx: mx.gluon.rnn.DropoutCell(0.25, prefix="d_"),
    "dropout_axes": lambda mx: mx.gluon.rnn.DropoutCell(0.25, axes=(0,), prefix="d_"),
    "dropout_zero": lambda mx: mx.gluon.rnn.DropoutCell(0.0, prefix="d_"),
    "zoneout": lambda mx: mx.gluon.rnn.ZoneoutCell(mx.gluon.rnn.GRUCell(H, input_size=C, prefix="g_"), 0.2, 0.3),
    "zoneout_outputs": lambda mx: mx.gluon.rnn.ZoneoutCell(mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="l_"),
                                                           zoneout_outputs=0.4),
    "residual": lambda mx: mx.gluon.rnn.ResidualCell(mx.gluon.rnn.GRUCell(C, input_size=C, prefix="g_")),
    "bidirectional": lambda mx: mx.gluon.rnn.BidirectionalCell(
        mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="l_"), mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="r_")),
    "bidirectional_prefix": lambda mx: mx.gluon.rnn.BidirectionalCell(
        mx.gluon.rnn.GRUCell(H, input_size=C, prefix="l_"), mx.gluon.rnn.RNNCell(H, input_size=C, prefix="r_"),
        output_prefix="both_"),
    "vardrop_states": lambda mx: mx.gluon.contrib.rnn.VariationalDropoutCell(
        mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="l_"), 0.2, 0.3, 0.4),
    "vardrop_sequence": lambda mx: mx.gluon.contrib.rnn.VariationalDropoutCell(
        mx.gluon.rnn.GRUCell(H, input_size=C, prefix="g_"), drop_inputs=0.2, drop_outputs=0.4),
    "lstmp": lambda mx: mx.gluon.contrib.rnn.LSTMPCell(H, 2, input_size=C, prefix="p_"),
    "conv1d_rnn": lambda mx: _conv(mx, "RNN", 1, i2h_pad=1),
    "conv2d_lstm": lambda mx: _conv(mx, "LSTM", 2, i2h_pad=1, activation="relu"),
    "conv2d_gru_dilate": lambda mx: _conv(mx, "GRU", 2, i2h_pad=1, h2h_dilate=2, i2h_bias_initializer="ones"),
    "conv2d_gru_valid": lambda mx: _conv(mx, "GRU", 2, i2h_bias_initializer="ones"),
    "conv3d_lstm": lambda mx: _conv(mx, "LSTM", 3, i2h_pad=(1, 1, 1)),
    "conv2d_rnn_nhwc": lambda mx: mx.gluon.contrib.rnn.Conv2DRNNCell(
        (4, 4, 2), 3, (3, 3), (1, 1), i2h_pad=(1, 1), conv_layout="NHWC", prefix="conv_"),
}

# label -> builder(mx) of fused layers taking TNC or NTC (T, N, C) data
LAYERS: dict[str, Callable[[Any], Any]] = {
    "rnn_tanh": lambda mx: mx.gluon.rnn.RNN(H, activation="tanh", input_size=C, prefix="rnn_"),
    "rnn_relu_L2_dropout": lambda mx: mx.gluon.rnn.RNN(H, 2, dropout=0.3, input_size=C, prefix="rnn_"),
    "lstm": lambda mx: mx.gluon.rnn.LSTM(H, input_size=C, prefix="lstm_"),
    "lstm_L2_bi_ntc": lambda mx: mx.gluon.rnn.LSTM(H, 2, layout="NTC", bidirectional=True, input_size=C,
                                                   prefix="lstm_", i2h_bias_initializer="ones"),
    "lstm_proj": lambda mx: mx.gluon.rnn.LSTM(H, 2, input_size=C, projection_size=2, prefix="lstm_"),
    "lstm_clip": lambda mx: mx.gluon.rnn.LSTM(H, input_size=C, state_clip_min=-0.2, state_clip_max=0.3,
                                              state_clip_nan=True, prefix="lstm_"),
    "gru_bi": lambda mx: mx.gluon.rnn.GRU(H, bidirectional=True, input_size=C, prefix="gru_"),
    "gru_L3_ntc_f64": lambda mx: mx.gluon.rnn.GRU(H, 3, layout="NTC", input_size=C, dtype="float64",
                                                  prefix="gru_"),
    "gru_default_name": lambda mx: mx.gluon.rnn.GRU(H, input_size=C),
}
# layers whose input size is left to inference (their traced graph is checked apart)
DEFERRED_LAYERS: dict[str, Callable[[Any], Any]] = {
    "lstm_deferred": lambda mx: mx.gluon.rnn.LSTM(H, prefix="lstm_"),
}

# MXNet 1.9.1 on CPU cannot run dilated or NHWC convolutions (MKLDNN descriptor error)
NO_VALUES = {"conv2d_gru_dilate", "conv2d_rnn_nhwc"}

UNROLLS = [("NTC", None, False), ("TNC", True, False), ("NTC", False, False),
           ("TNC", None, True), ("NTC", True, True), ("NTC", False, True)]


def _init(init: Any) -> Any:
    if init is None or isinstance(init, str):
        return init
    return init.dumps()


def jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.dtype) or isinstance(obj, type):
        return str(np.dtype(obj))
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj


def params(block: Any) -> list:
    return [[k, list(p.shape) if p.shape is not None else None, _init(p.init), p.grad_req, str(np.dtype(p.dtype))]
            for k, p in block.collect_params().items()]


def graph(sym: Any) -> dict:
    g = json.loads(sym.tojson())
    nodes = []
    for node in g["nodes"]:
        attrs = dict(node.get("attrs", {}))
        attrs.pop("__storage_type__", None)    # plexnet has dense storage only
        nodes.append([node["op"], node["name"], [i[:2] for i in node["inputs"]], attrs])
    return {"nodes": nodes, "heads": [h[:2] for h in g["heads"]]}


def _group(mx: Any, outputs: Any, states: list) -> tuple[Any, dict]:
    outs = outputs if isinstance(outputs, list) else [outputs]
    return mx.sym.Group(list(outs) + list(states)), {"merged": not isinstance(outputs, list),
                                                     "n_out": len(outs), "n_states": len(states)}


def step_shape(label: str) -> tuple:
    """Shape of one time step of CELLS[label]'s input."""
    if label == "conv2d_rnn_nhwc":
        return (N, 4, 4, 2)
    for dims in (1, 2, 3):
        if label.startswith(f"conv{dims}d"):
            return (N,) + CONV_IN[dims]
    return (N, C)


def data(label: str, layout: str) -> np.ndarray:
    """Fixed unroll input of shape (N, T, ...) or (T, N, ...)."""
    shape = step_shape(label)
    x = np.random.RandomState(7).uniform(-1, 1, (T,) + shape).astype(np.float32)
    if layout == "NTC":
        x = np.ascontiguousarray(np.swapaxes(x, 0, 1))
    return x


VALID = np.array([3, 1], dtype=np.float32)


def set_weights(block: Any, mx: Any) -> None:
    """Deterministic values for every parameter, by sorted structural name."""
    ps = block._collect_params_with_prefix()
    for i, name in enumerate(sorted(ps)):
        p = ps[name]
        v = np.random.RandomState(100 + i).uniform(-0.5, 0.5, p.shape)
        p.set_data(mx.nd.array(v, dtype=p.dtype))


def error_name(e: Exception) -> str:
    """The exception's type name; the libraries' own errors are both 'LibraryError'."""
    name = type(e).__name__
    return "LibraryError" if name in ("MXNetError", "PlexnetError") else name


def _trace(mx: Any, fn: Callable[[], Any]) -> Any:
    try:
        with mx.name.NameManager():
            return fn()
    except Exception as e:  # noqa: BLE001 - the exception type is part of the record
        return {"error": error_name(e)}


def cell_structure(mx: Any, label: str) -> dict:
    """Everything symbolic about CELLS[label] (a new instance for each trace)."""
    def build() -> Any:
        with mx.name.NameManager():
            return CELLS[label](mx)

    cell = build()
    out: dict = {"params": params(cell), "state_info": jsonable(cell.state_info(N)),
                 "state_info0": jsonable(cell.state_info()), "repr": repr(cell), "prefix": cell.prefix,
                 "children": [[k, type(c).__name__, c.prefix] for k, c in cell._children.items()]}

    def step() -> dict:
        c = build()
        n = len(c.state_info())
        o, s = c(mx.sym.var("x"), [mx.sym.var(f"s{i}") for i in range(n)])
        o2, s2 = c(o if not isinstance(o, list) else o[0], s)   # second step: t1_ names
        g, meta = _group(mx, o2, s2)
        return dict(graph(g), **meta)
    out["step"] = _trace(mx, step)

    def begin() -> dict:
        c = build()
        states = c.begin_state(batch_size=N, func=mx.sym.zeros)
        return graph(mx.sym.Group(states)) if states else {"nodes": [], "heads": []}
    out["begin_state"] = _trace(mx, begin)

    for layout, merge, valid in UNROLLS:
        def unroll(layout: str = layout, merge: Any = merge, valid: bool = valid) -> dict:
            c = build()
            o, s = c.unroll(T, mx.sym.var("data"), layout=layout, merge_outputs=merge,
                            valid_length=mx.sym.var("vl") if valid else None)
            g, meta = _group(mx, o, s)
            return dict(graph(g), **meta)
        out[f"unroll_{layout}_{merge}_{valid}"] = _trace(mx, unroll)

    def listed() -> dict:
        # inputs given as a list of steps
        c = build()
        o, s = c.unroll(T, [mx.sym.var(f"x{i}") for i in range(T)], layout="TNC", merge_outputs=None)
        g, meta = _group(mx, o, s)
        return dict(graph(g), **meta)
    out["unroll_list"] = _trace(mx, listed)
    return out


def cell_values(mx: Any, label: str) -> dict[str, np.ndarray]:
    """Outputs and states of NDArray unrolls with fixed weights (inference: no dropout)."""
    res: dict[str, np.ndarray] = {}
    if label in NO_VALUES:
        return res
    for layout, merge, valid in UNROLLS:
        with mx.name.NameManager():
            cell = CELLS[label](mx)
        cell.initialize()
        x = mx.nd.array(data(label, layout))
        vl = mx.nd.array(VALID) if valid else None
        key = f"cell/{label}/{layout}_{merge}_{valid}"
        try:
            cell.unroll(T, x, layout=layout, merge_outputs=merge, valid_length=vl)   # deferred shapes
        except Exception as e:  # noqa: BLE001 - recorded
            res[f"{key}/error"] = np.array(error_name(e))
            continue
        set_weights(cell, mx)
        o, s = cell.unroll(T, x, layout=layout, merge_outputs=merge, valid_length=vl)
        outs = o if isinstance(o, list) else [o]
        for i, a in enumerate(list(outs) + list(s)):
            res[f"{key}/{i}"] = a.asnumpy()
        res[f"{key}/n_out"] = np.array([len(outs), int(not isinstance(o, list))])
    return res


def layer_structure(mx: Any, label: str, builders: dict | None = None) -> dict:
    builders = builders or LAYERS

    def build() -> Any:
        with mx.name.NameManager():
            return builders[label](mx)

    layer = build()
    out: dict = {"params": params(layer), "state_info": jsonable(layer.state_info(N)),
                 "repr": repr(layer), "prefix": layer.prefix,
                 "structural": sorted(layer._collect_params_with_prefix())}

    def plain() -> dict:
        return graph(build()(mx.sym.var("data")))

    def with_states() -> dict:
        lay = build()
        n = len(lay.state_info())
        o, s = lay(mx.sym.var("data"), [mx.sym.var(f"h{i}") for i in range(n)])
        g, meta = _group(mx, o, s)
        return dict(graph(g), **meta)

    def begin() -> dict:
        return graph(mx.sym.Group(build().begin_state(batch_size=N, func=mx.sym.zeros)))

    def unfuse() -> dict:
        stack = build()._unfuse()
        o, s = stack.unroll(T, mx.sym.var("data"), layout="TNC", merge_outputs=True)
        g, meta = _group(mx, o, s)
        return dict(graph(g), params=params(stack), repr=repr(stack), **meta)

    for name, fn in [("plain", plain), ("with_states", with_states), ("begin_state", begin), ("unfuse", unfuse)]:
        out[name] = _trace(mx, fn)
    return out


def layer_values(mx: Any, label: str) -> dict[str, np.ndarray]:
    with mx.name.NameManager():
        layer = LAYERS[label](mx)
    layer.initialize()
    set_weights(layer, mx)
    layout = layer._layout
    x = np.random.RandomState(7).uniform(-1, 1, (T, N, C))
    if layout == "NTC":
        x = np.ascontiguousarray(x.swapaxes(0, 1))
    x = mx.nd.array(x, dtype=layer._dtype)
    res = {f"layer/{label}/plain": layer(x).asnumpy()}
    states = [s + 0.1 * (i + 1) for i, s in enumerate(layer.begin_state(N))]
    o, s = layer(x, states)
    for i, a in enumerate([o] + list(s)):
        res[f"layer/{label}/states/{i}"] = a.asnumpy()
    return res


def _default(p: inspect.Parameter) -> Any:
    if p.default is p.empty:
        return None
    if callable(p.default):    # no addresses: the function's name
        return f"<{type(p.default).__name__} {p.default.__name__}>"
    return repr(p.default)


def signatures(*modules: Any) -> dict:
    """Parameter names, kinds and defaults of the public classes/functions
    (``__all__``) of ``modules`` and of their main methods."""
    out = {}
    for mod in modules:
        for name in sorted(getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")])):
            obj = getattr(mod, name)
            if name.startswith("_") or not callable(obj):
                continue
            fn = obj.__init__ if inspect.isclass(obj) else obj
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                continue
            out[f"{mod.__name__.split('.', 1)[1]}.{name}"] = [
                [p.name, p.kind.name, _default(p)]
                for p in sig.parameters.values()]
            if inspect.isclass(obj):
                for meth in ("unroll", "begin_state", "state_info", "__call__", "forward", "hybrid_forward",
                             "reset", "add"):
                    m = getattr(obj, meth, None)
                    if m is None:
                        continue
                    try:
                        msig = inspect.signature(m)
                    except (TypeError, ValueError):
                        continue
                    out[f"{mod.__name__.split('.', 1)[1]}.{name}.{meth}"] = [
                        [p.name, p.kind.name, _default(p)]
                        for p in msig.parameters.values()]
    return out
