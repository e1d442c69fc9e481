"""``RNN``: MXNet 1.x's fused recurrent layer (``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``),
multi-layer, bidirectional, with state outputs, LSTM projection and cell-state clipping,
per-sequence lengths, and backward (backpropagation through time).

Layouts are MXNet's (so ``FusedRNNCell`` and ``gluon.rnn`` parameters fit):

* data ``(T, N, I)``; state ``(L*D, N, P or H)``; state_cell ``(L*D, N, H)`` (LSTM);
  sequence_length ``(N,)`` (``use_sequence_length``);
* ``parameters`` is one flat vector: first every weight, for each layer and then each
  direction ``W_x (G*H, in)``, ``W_h (G*H, P or H)`` and with projection ``W_r (P, H)``;
  then every bias, for each layer and direction ``b_x (G*H)``, ``b_h (G*H)``;
* gate order LSTM ``i f g o``, GRU ``r z n`` with ``n = tanh(x_n + r * (W_hn h + b_hn))``
  (cuDNN's GRU, as MXNet).

Backward recomputes the forward steps from the inputs (the executor keeps only
``in_data``); with ``p > 0`` the inter-layer dropout masks are a hidden output so both
passes use the same draw. Padded steps (``use_sequence_length``) output zeros and keep the
state, as cuDNN. MXNet's CPU build rejects projection, clipping and sequence lengths
(cuDNN only); here they run everywhere with cuDNN's semantics.
"""
from __future__ import annotations

from typing import Any

import numpy as np  # dtype and shape arithmetic only

from plexnet.operator import Field, Operator, OperatorProperty, Params
from plexnet.operator.params import ParamError
from plexnet.resource import ResourceRequest

from ._common import OpReqType, ShapeError, fmt_shape, shape_assign

__all__ = ["register", "rnn_param_size"]

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class RNNParam(Params):
    state_size = Field(int, low=1, doc="hidden units H")
    num_layers = Field(int, low=1, doc="stacked layers L")
    bidirectional = Field(bool, default=False, doc="D = 2 directions")
    mode = Field(str, choices=tuple(GATES), doc="cell type")
    p = Field(float, default=0.0, low=0.0, high=1.0, doc="dropout between layers (training)")
    state_outputs = Field(bool, default=False, doc="also return the final states")
    projection_size = Field(int, default=None, optional=True, low=1, doc="LSTM projection size P")
    lstm_state_clip_min = Field(float, default=None, optional=True, doc="clip the LSTM cell state below")
    lstm_state_clip_max = Field(float, default=None, optional=True, doc="clip the LSTM cell state above")
    lstm_state_clip_nan = Field(bool, default=False, doc="clipping also replaces NaN (by the max)")
    use_sequence_length = Field(bool, default=False, doc="take per-sequence lengths as the last input")

    def __post_init__(self, op: str) -> None:
        if self.projection_size is not None and self.mode != "lstm":
            raise ParamError(f"{op}: argument 'projection_size' is only supported for mode='lstm', "
                             f"got mode={self.mode!r}")
        if (self.lstm_state_clip_min is None) != (self.lstm_state_clip_max is None):
            raise ParamError(f"{op}: arguments 'lstm_state_clip_min' and 'lstm_state_clip_max' must be given "
                             f"together")
        if self.lstm_state_clip_min is not None:
            if self.mode != "lstm":
                raise ParamError(f"{op}: LSTM state clipping needs mode='lstm', got mode={self.mode!r}")
            if self.lstm_state_clip_min > self.lstm_state_clip_max:
                raise ParamError(f"{op}: 'lstm_state_clip_min'={self.lstm_state_clip_min} is greater than "
                                 f"'lstm_state_clip_max'={self.lstm_state_clip_max}")


def _dims(p: RNNParam) -> tuple[int, int, int, int, int]:
    """(G, H, Hout, D, L): gates, hidden size, output size per direction, directions, layers."""
    h = p.state_size
    return GATES[p.mode], h, p.projection_size or h, 2 if p.bidirectional else 1, p.num_layers


def rnn_param_size(p: RNNParam, input_size: int) -> int:
    """Length of the flat parameter vector (MXNet's ``GetRnnParamSize``)."""
    g, h, ho, d, nl = _dims(p)
    size = 0
    for layer in range(nl):
        ins = input_size if layer == 0 else d * ho
        per = g * h * (ins + ho) + 2 * g * h + (ho * h if p.projection_size else 0)
        size += d * per
    return size


def _slices(p: RNNParam, input_size: int) -> list[list[dict[str, tuple[int, tuple]]]]:
    """``[layer][direction] -> {name: (offset, shape)}`` into the flat vector."""
    g, h, ho, d, nl = _dims(p)
    out: list[list[dict[str, tuple[int, tuple]]]] = [[{} for _ in range(d)] for _ in range(nl)]
    off = 0
    for layer in range(nl):
        ins = input_size if layer == 0 else d * ho
        for k in range(d):
            out[layer][k]["wx"] = (off, (g * h, ins))
            off += g * h * ins
            out[layer][k]["wh"] = (off, (g * h, ho))
            off += g * h * ho
            if p.projection_size:
                out[layer][k]["wr"] = (off, (ho, h))
                off += ho * h
    for layer in range(nl):
        for k in range(d):
            for b in ("bx", "bh"):
                out[layer][k][b] = (off, (g * h,))
                off += g * h
    return out


def _assign(op: str, shapes: list, idx: int, names: list, want: tuple) -> None:
    """``shape_assign`` that also fills unknown (0) dims, MXNet 1.x's partial shapes
    (``FusedRNNCell``'s begin states are ``(L*D, 0, H)`` until the batch size is known)."""
    have = shapes[idx]
    if have is not None and len(have) == len(want) and all(h in (0, w) for h, w in zip(have, want)):
        shapes[idx] = None
    shape_assign(op, shapes, idx, names, want)


class RNNProp(OperatorProperty):
    """Fused multi-layer recurrent network (see the module docstring)."""
    param_cls = RNNParam

    def list_arguments(self) -> list[str]:
        a = ["data", "parameters", "state"]
        if self.param.mode == "lstm":
            a.append("state_cell")
        if self.param.use_sequence_length:
            a.append("sequence_length")
        return a

    def list_outputs(self) -> list[str]:
        o = ["output", "state_output"] + (["statecell_output"] if self.param.mode == "lstm" else [])
        return o + (["dropout_mask"] if self.param.p > 0 and self.param.num_layers > 1 else [])

    def num_visible_outputs(self) -> int:
        if not self.param.state_outputs:
            return 1
        return 3 if self.param.mode == "lstm" else 2

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        names = self.list_arguments()
        shapes = [tuple(s) if s is not None else None for s in in_shape]
        data = shapes[0]
        nout = len(self.list_outputs())
        if data is None:
            return shapes, [None] * nout, []
        if len(data) != 3:
            raise ShapeError(f"{self.op_name}: argument 'data' must be 3-D (seq_len, batch, input_size), "
                             f"got shape {fmt_shape(data)}")
        t, n, i = data
        g, h, ho, d, nl = _dims(self.param)
        _assign(self.op_name, shapes, 1, names, (rnn_param_size(self.param, i),))
        _assign(self.op_name, shapes, 2, names, (nl * d, n, ho))
        k = 3
        if self.param.mode == "lstm":
            _assign(self.op_name, shapes, k, names, (nl * d, n, h))
            k += 1
        if self.param.use_sequence_length:
            _assign(self.op_name, shapes, k, names, (n,))
        outs = [(t, n, d * ho), (nl * d, n, ho)]
        if self.param.mode == "lstm":
            outs.append((nl * d, n, h))
        if nout > len(outs):
            outs.append((nl - 1, t, n, d * ho))
        return shapes, outs, []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        t = in_type[0] if in_type[0] is not None else next((x for x in in_type[1:] if x is not None), None)
        ins = [t if x is None else x for x in in_type]
        if self.param.use_sequence_length:
            ins[-1] = in_type[-1] if in_type[-1] is not None else np.dtype(np.int32)
            for k in range(len(ins) - 1):
                ins[k] = in_type[k] if in_type[k] is not None else t
        return ins, [t] * len(self.list_outputs()), []

    def forward_resource(self, in_shape: list) -> list:
        return [ResourceRequest(ResourceRequest.kRandom)] if self.param.p > 0 else []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        deps = list(out_grad) + list(in_data)
        if self.param.p > 0 and self.param.num_layers > 1:
            deps.append(out_data[-1])
        return deps

    def is_stateless(self) -> bool:
        # each graph node gets its own operator: a training forward keeps its step caches
        # for the backward that follows (MXNet's reserve space)
        return False


# -- the computation ------------------------------------------------------------------------------------------

def _sigmoid(xp: Any, x: Any) -> Any:
    return 0.5 * (xp.tanh(0.5 * x) + 1)


class _Layer:
    """One direction of one layer: weights as views of the flat vector."""

    def __init__(self, w: Any, sl: dict[str, tuple[int, tuple]]) -> None:
        def view(key: str) -> Any:
            off, shape = sl[key]
            return w[off:off + int(np.prod(shape))].reshape(shape)
        self.wx, self.wh, self.bx, self.bh = view("wx"), view("wh"), view("bx"), view("bh")
        self.wr = view("wr") if "wr" in sl else None
        # contiguous transposes: the per-step GEMMs run ~1.5x faster on them
        self.whT = self.wh.T.copy()
        self.wrT = self.wr.T.copy() if self.wr is not None else None


def _rev_index(xp: Any, t: int, lengths: Any) -> Any:
    """``idx[t, n]``: time step read by the reversed pass (an involution)."""
    steps = xp.arange(t).reshape(t, 1)
    if lengths is None:
        return xp.broadcast_to(steps[::-1], (t, 1))
    ln = lengths.reshape(1, -1)
    return xp.where(steps < ln, ln - 1 - steps, steps)


def _gather_time(xp: Any, x: Any, idx: Any) -> Any:
    n = x.shape[1]
    if idx.shape[1] == 1:
        return x[idx[:, 0]]
    return x[idx, xp.arange(n).reshape(1, n)]


class RNNOp(Operator):
    """The xp implementation; ``_run`` does forward and, with head gradients, backward."""

    def __init__(self, prop: RNNProp) -> None:
        self.p = prop.param
        self._stash: Any = None  # (input identities, per-layer step caches) of the last training forward

    # -- one direction of one layer ---------------------------------------------------------------------
    def _cell_forward(self, xp: Any, lay: _Layer, xw: Any, h: Any, c: Any, m: Any) -> tuple[Any, Any, Any, tuple]:
        """One step: returns (output, new h, new c, cache)."""
        p = self.p
        mode = p.mode
        hw = h @ lay.whT
        if mode == "gru":
            hw += lay.bh  # (the other modes fold b_h into xw)
        if mode in ("rnn_tanh", "rnn_relu"):
            pre = xw + hw
            hn = xp.tanh(pre) if mode == "rnn_tanh" else xp.maximum(pre, 0)
            cache: tuple = (hn,)
            cn = None
        elif mode == "lstm":
            pre = xw + hw
            hsz = p.state_size
            i = _sigmoid(xp, pre[:, :hsz])
            f = _sigmoid(xp, pre[:, hsz:2 * hsz])
            g = xp.tanh(pre[:, 2 * hsz:3 * hsz])
            o = _sigmoid(xp, pre[:, 3 * hsz:])
            cn = f * c + i * g
            clip = None
            if p.lstm_state_clip_min is not None:
                lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
                clip = (cn >= lo) & (cn <= hi)
                cn = xp.fmax(xp.fmin(cn, hi), lo) if p.lstm_state_clip_nan else xp.clip(cn, lo, hi)
            tc = xp.tanh(cn)
            hh = o * tc
            hn = hh @ lay.wrT if lay.wr is not None else hh
            cache = (i, f, g, o, tc, hh, clip)
        else:  # gru
            hsz = p.state_size
            r = _sigmoid(xp, xw[:, :hsz] + hw[:, :hsz])
            z = _sigmoid(xp, xw[:, hsz:2 * hsz] + hw[:, hsz:2 * hsz])
            hnn = hw[:, 2 * hsz:]
            nn = xp.tanh(xw[:, 2 * hsz:] + r * hnn)
            hn = (1 - z) * nn + z * h
            cache = (r, z, nn, hnn)
            cn = None
        if m is not None:  # padded steps keep the state and output zeros
            out = hn * m
            hn = out + h * (1 - m)
            if cn is not None:
                cn = cn * m + c * (1 - m)
        else:
            out = hn
        return out, hn, cn, cache

    def _cell_backward(self, xp: Any, lay: _Layer, cache: tuple, h: Any, c: Any, m: Any, dy: Any, dh: Any,
                       dc: Any, dwr: list) -> tuple[Any, Any, Any, Any]:
        """Gradients of one step: (d xw, d hw, d h_prev, d c_prev); the weight gradients are
        one GEMM per direction afterwards (``dwr`` collects the projection's terms)."""
        p = self.p
        mode = p.mode
        dnew = dy + dh
        dh_prev = 0
        dc_prev = 0
        if m is not None:
            dh_prev = dh * (1 - m)
            dnew = dnew * m
            if dc is not None:
                dc_prev = dc * (1 - m)
                dc = dc * m
        if mode in ("rnn_tanh", "rnn_relu"):
            hn = cache[0]
            dpre = dnew * (1 - hn * hn) if mode == "rnn_tanh" else dnew * (hn > 0)
            dxw = dpre
            dhw = dpre
        elif mode == "lstm":
            i, f, g, o, tc, hh, clip = cache
            if lay.wr is not None:
                dwr.append((dnew, hh))
                dhh = dnew @ lay.wr
            else:
                dhh = dnew
            do = dhh * tc
            dcn = dc + dhh * o * (1 - tc * tc)
            if clip is not None:
                dcn = dcn * clip
            di, df, dg = dcn * g, dcn * c, dcn * i
            dc_prev = dc_prev + dcn * f
            dpre = xp.concatenate([di * i * (1 - i), df * f * (1 - f), dg * (1 - g * g), do * o * (1 - o)], axis=1)
            dxw = dpre
            dhw = dpre
        else:
            r, z, nn, hnn = cache
            dz = dnew * (h - nn)
            dn = dnew * (1 - z)
            dh_prev = dh_prev + dnew * z
            dnp = dn * (1 - nn * nn)
            dr = dnp * hnn
            drp = dr * r * (1 - r)
            dzp = dz * z * (1 - z)
            dxw = xp.concatenate([drp, dzp, dnp], axis=1)
            dhw = xp.concatenate([drp, dzp, dnp * r], axis=1)
        dh_prev = dh_prev + dhw @ lay.wh
        return dxw, dhw, dh_prev, (dc_prev if mode == "lstm" else None)

    def _direction(self, xp: Any, lay: _Layer, x: Any, h0: Any, c0: Any, masks: Any, reverse: bool,
                   lengths: Any, keep: bool = False) -> tuple:
        """One direction over the sequence: (outputs, hT, cT, saved); ``saved`` (with
        ``keep``) is what ``_direction_backward`` needs."""
        t = x.shape[0]
        idx = _rev_index(xp, t, lengths) if reverse else None
        xs = _gather_time(xp, x, idx) if reverse else x
        xw = xs @ lay.wx.T
        xw += lay.bx if self.p.mode == "gru" else lay.bx + lay.bh
        h, c = h0, c0
        outs, caches, hs, cs = [], [], [], []
        for s in range(t):
            m = masks[s] if masks is not None else None
            hs.append(h)
            cs.append(c)
            o, h, c, cache = self._cell_forward(xp, lay, xw[s], h, c, m)
            outs.append(o)
            if keep:
                caches.append(cache)
        y = xp.stack(outs)
        saved = (idx, xs, caches, hs, cs) if keep else None
        return (_gather_time(xp, y, idx) if reverse else y), h, c, saved

    def _direction_backward(self, xp: Any, lay: _Layer, saved: tuple, masks: Any, dy: Any, dhT: Any,
                            dcT: Any) -> tuple:
        """(dx, dh0, dc0, weight grads) of one direction from its saved forward."""
        idx, xs, caches, hs, cs = saved
        t = xs.shape[0]
        dys = _gather_time(xp, dy, idx) if idx is not None else dy
        dh, dc = dhT, dcT
        dxw = xp.empty((t,) + dys.shape[1:2] + (lay.wx.shape[0],), dtype=xs.dtype)
        dhw = xp.empty_like(dxw)
        dwr: list = []
        for s in range(t - 1, -1, -1):
            m = masks[s] if masks is not None else None
            dxw[s], dhw[s], dh, dc = self._cell_backward(xp, lay, caches[s], hs[s], cs[s], m, dys[s], dh, dc, dwr)
        tt, n, gh = dxw.shape
        flat, hflat = dxw.reshape(tt * n, gh), dhw.reshape(tt * n, gh)
        grads = {"wx": flat.T @ xs.reshape(tt * n, -1), "bx": flat.sum(axis=0),
                 "wh": hflat.T @ xp.stack(hs).reshape(tt * n, -1), "bh": hflat.sum(axis=0)}
        if lay.wr is not None:
            grads["wr"] = xp.concatenate([d for d, _ in dwr]).T @ xp.concatenate([hh for _, hh in dwr])
        dx = (flat @ lay.wx).reshape(tt, n, -1)
        return (_gather_time(xp, dx, idx) if idx is not None else dx), dh, dc, grads

    # -- the whole network -------------------------------------------------------------------------------
    def _setup(self, xp: Any, in_data: Any) -> tuple:
        p = self.p
        x, w, hx = in_data[0], in_data[1], in_data[2]
        k = 3
        cx = None
        if p.mode == "lstm":
            cx = in_data[k]
            k += 1
        lengths = None
        masks = None
        if p.use_sequence_length:
            lengths = in_data[k].astype(np.int64)
            t = x.shape[0]
            masks = (xp.arange(t).reshape(t, 1, 1) < lengths.reshape(1, -1, 1)).astype(x.dtype)
        layers = [[_Layer(w, sl) for sl in row] for row in _slices(p, x.shape[2])]
        return x, hx, cx, lengths, masks, layers

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp = ctx.xp
        p = self.p
        x, hx, cx, lengths, masks, layers = self._setup(xp, in_data)
        _, _, _, d, nl = _dims(p)
        drop = p.p > 0 and nl > 1
        dropmask = None
        if drop:
            if ctx.is_train:
                keep = 1.0 - p.p
                rng = ctx.requested[0].get_random()
                dt = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
                dm = (rng.random(out_data[-1].shape, dtype=dt) < keep).astype(x.dtype)
                dropmask = dm / keep if keep > 0 else dm
            else:
                dropmask = xp.ones(out_data[-1].shape, dtype=x.dtype)
        hy, cy = [], []
        inp = x
        keep = bool(ctx.is_train)
        saved = []
        self._stash = None
        for layer in range(nl):
            ys, row = [], []
            for k in range(d):
                j = layer * d + k
                y, h, c, sv = self._direction(xp, layers[layer][k], inp, hx[j], None if cx is None else cx[j], masks,
                                              k == 1, lengths, keep=keep)
                ys.append(y)
                hy.append(h)
                cy.append(c)
                row.append(sv)
            saved.append(row)
            inp = ys[0] if d == 1 else xp.concatenate(ys, axis=2)
            if drop and layer < nl - 1:
                inp = inp * dropmask[layer]
        if keep:
            self._stash = (_identity(in_data), saved)
        results = [inp, xp.stack(hy)] + ([xp.stack(cy)] if p.mode == "lstm" else []) + ([dropmask] if drop else [])
        for o, r, v in zip(out_data, req, results):
            _store(xp, o, r, v)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        p = self.p
        x, hx, cx, lengths, masks, layers = self._setup(xp, in_data)
        dropmask = out_data[-1] if p.p > 0 and p.num_layers > 1 else None
        stash, self._stash = getattr(self, "_stash", None), None
        if stash is not None and stash[0] == _identity(in_data):
            saved = stash[1]  # the training forward's caches (same input arrays)
        else:  # forward again, keeping what each layer's backward needs
            saved = self._recompute(xp, x, hx, cx, masks, layers, lengths, dropmask)
        self._backward_layers(xp, p, saved, layers, masks, out_grad, in_data, hx, cx, dropmask, req, in_grad)

    def _recompute(self, xp: Any, x: Any, hx: Any, cx: Any, masks: Any, layers: list, lengths: Any,
                   dropmask: Any) -> list:
        _, _, _, d, nl = _dims(self.p)
        saved = []
        inp = x
        for layer in range(nl):
            row = [self._direction(xp, layers[layer][k], inp, hx[layer * d + k],
                                   None if cx is None else cx[layer * d + k], masks, k == 1, lengths, keep=True)
                   for k in range(d)]
            saved.append([r[3] for r in row])
            if layer < nl - 1:
                inp = row[0][0] if d == 1 else xp.concatenate([r[0] for r in row], axis=2)
                if dropmask is not None:
                    inp = inp * dropmask[layer]
        return saved

    def _backward_layers(self, xp: Any, p: RNNParam, saved: list, layers: list, masks: Any, out_grad: Any,
                         in_data: Any, hx: Any, cx: Any, dropmask: Any, req: Any, in_grad: Any) -> None:
        _, _, ho, d, nl = _dims(p)
        x = in_data[0]
        nvis = len(out_grad)
        dy = out_grad[0]
        dhy = out_grad[1] if nvis > 1 else xp.zeros_like(hx)
        dcy = out_grad[2] if nvis > 2 else (xp.zeros_like(cx) if cx is not None else None)
        w_grad = xp.zeros(in_data[1].shape, dtype=in_data[1].dtype)
        dhx = xp.zeros_like(hx)
        dcx = xp.zeros_like(cx) if cx is not None else None
        sl = _slices(p, x.shape[2])
        for layer in range(nl - 1, -1, -1):
            dx_total = None
            for k in range(d):
                j = layer * d + k
                dyk = dy[:, :, k * ho:(k + 1) * ho]
                dx, dh0, dc0, grads = self._direction_backward(xp, layers[layer][k], saved[layer][k], masks, dyk,
                                                               dhy[j], None if dcy is None else dcy[j])
                dhx[j] = dh0
                if dcx is not None:
                    dcx[j] = dc0
                for name, g in grads.items():
                    off, shape = sl[layer][k][name]
                    w_grad[off:off + g.size] = g.reshape(-1)
                dx_total = dx if dx_total is None else dx_total + dx
            dy = dx_total
            if dropmask is not None and layer > 0:
                dy = dy * dropmask[layer - 1]
        grads_out = [dy, w_grad, dhx] + ([dcx] if cx is not None else [])
        for g, r, v in zip(in_grad, req, grads_out):
            _store(xp, g, r, v)
        if p.use_sequence_length and req[-1] not in (OpReqType.null, OpReqType.add):
            in_grad[-1][...] = 0


def _identity(arrays: Any) -> tuple:
    """Which input arrays a forward saw (the same objects: the executor's bound arrays)."""
    return tuple(id(a) for a in arrays)


def _store(xp: Any, out: Any, req: Any, value: Any) -> None:
    if req == OpReqType.null:
        return
    if req == OpReqType.add:
        xp.add(out, value, out=out, casting="unsafe")
    elif value is not out:
        xp.copyto(out, value, casting="unsafe")


def register(registry: Any) -> None:
    registry.register_property("RNN", RNNProp)
    registry.register_impl("RNN", "*", lambda prop, ctx: RNNOp(prop), impl_name="xp")
