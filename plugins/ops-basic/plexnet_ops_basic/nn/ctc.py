"""``CTCLoss`` (``ctc_loss``, ``_contrib_CTCLoss``): connectionist temporal classification,
MXNet 1.x semantics.

data ``(T, N, C)`` are unnormalised scores (a softmax is applied inside); label ``(N, L)``;
optional ``data_lengths`` / ``label_lengths`` ``(N,)``. ``blank_label='first'``: the blank is
class 0, real labels are ``1..C-1`` and ``0`` pads a label row; ``'last'``: the blank is
``C-1`` and ``-1`` pads. The output is the per-sequence negative log-likelihood ``(N,)``;
the gradient with respect to the scores is computed in forward by the forward-backward
recursion in log space (vectorised over label positions) and kept in the hidden output
``grad``, which backward scales by the head gradient (as MXNet's warp-ctc binding).
"""
from __future__ import annotations

from typing import Any

import numpy as np  # dtype handling and host-side label bookkeeping

from plexnet.operator import Field, OperatorProperty, Params

from plexnet_ops_basic.tensor._common import NULL, XpOperator, fill_zero, register_op, store

from ._common import ShapeError, fmt_shape

__all__ = ["register"]

NEG_INF = -np.inf


class CTCLossParam(Params):
    use_data_lengths = Field(bool, default=False, doc="take sequence lengths from data_lengths")
    use_label_lengths = Field(bool, default=False, doc="take label lengths from label_lengths")
    blank_label = Field(str, default="first", choices=("first", "last"), doc="which class is the blank")


class CTCLossProp(OperatorProperty):
    """Connectionist temporal classification loss (see the module docstring)."""
    param_cls = CTCLossParam

    def list_arguments(self) -> list[str]:
        a = ["data", "label"]
        if self.param.use_data_lengths:
            a.append("data_lengths")
        if self.param.use_label_lengths:
            a.append("label_lengths")
        return a

    def list_outputs(self) -> list[str]:
        return ["output", "grad"]

    def num_visible_outputs(self) -> int:
        return 1

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        shapes = [tuple(s) if s is not None else None for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None, None], []
        if len(d) != 3:
            raise ShapeError(f"{self.op_name}: argument 'data' must be 3-D (seq_len, batch, alphabet), got "
                             f"shape {fmt_shape(d)}")
        lab = shapes[1]
        if lab is not None and (len(lab) != 2 or lab[0] != d[1]):
            raise ShapeError(f"{self.op_name}: argument 'label' must be (batch, max_label_len) with batch "
                             f"{d[1]}, got shape {fmt_shape(lab)} (data {d})")
        for k in range(2, len(shapes)):
            if shapes[k] is not None and shapes[k] != (d[1],):
                raise ShapeError(f"{self.op_name}: argument {self.list_arguments()[k]!r} must have shape "
                                 f"({d[1]},), got {fmt_shape(shapes[k])}")
            shapes[k] = (d[1],)
        return shapes, [(d[1],), d], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        t = in_type[0]
        ins = [t] + [x if x is not None else t for x in in_type[1:]]
        return ins, [t, t], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return [out_grad[0], out_data[1]]


def _logsumexp(xp: Any, *arrs: Any) -> Any:
    m = arrs[0]
    for a in arrs[1:]:
        m = xp.maximum(m, a)
    safe = xp.where(xp.isfinite(m), m, 0)
    tot = 0
    for a in arrs:
        tot = tot + xp.exp(a - safe)
    with np.errstate(divide="ignore"):
        return xp.log(tot) + safe


class CTCLossOp(XpOperator):
    def _sequence(self, xp: Any, scores: Any, labels: list[int], blank: int) -> tuple[float, Any]:
        """Loss and score gradient of one sequence ``scores (T, C)``."""
        t_len, c = scores.shape
        z = scores - scores.max(axis=1, keepdims=True)
        logp = z - xp.log(xp.exp(z).sum(axis=1, keepdims=True))
        ext = [blank]
        for lab in labels:
            ext += [lab, blank]
        s_len = len(ext)
        ext_a = xp.asarray(np.array(ext, dtype=np.int64))
        # transitions from s-2 are allowed for non-blanks that differ from the label two back
        skip = np.zeros(s_len, dtype=bool)
        for s in range(2, s_len):
            skip[s] = ext[s] != blank and ext[s] != ext[s - 2]
        skip_a = xp.asarray(skip)
        if t_len == 0:
            return (0.0 if not labels else np.inf), xp.zeros(scores.shape, dtype=scores.dtype)
        lp = logp[:, ext_a]  # (T, S)
        alpha = xp.full((t_len, s_len), NEG_INF, dtype=np.float64)
        alpha[0, 0] = lp[0, 0]
        if s_len > 1:
            alpha[0, 1] = lp[0, 1]
        ninf1 = xp.full((1,), NEG_INF)
        ninf2 = xp.full((2,), NEG_INF)
        for t in range(1, t_len):
            a = alpha[t - 1]
            a1 = xp.concatenate([ninf1, a[:-1]])
            a2 = xp.where(skip_a, xp.concatenate([ninf2, a[:-2]])[:s_len], NEG_INF)
            alpha[t] = _logsumexp(xp, a, a1, a2) + lp[t]
        beta = xp.full((t_len, s_len), NEG_INF, dtype=np.float64)
        beta[-1, -1] = lp[-1, -1]
        if s_len > 1:
            beta[-1, -2] = lp[-1, -2]
        skip_next = xp.concatenate([skip_a[2:], xp.zeros((2,), dtype=bool)])[:s_len]
        for t in range(t_len - 2, -1, -1):
            b = beta[t + 1]
            b1 = xp.concatenate([b[1:], ninf1])
            b2 = xp.where(skip_next, xp.concatenate([b[2:], ninf2])[:s_len], NEG_INF)
            beta[t] = _logsumexp(xp, b, b1, b2) + lp[t]
        tail = [alpha[-1, -1]] + ([alpha[-1, -2]] if s_len > 1 else [])
        log_p = _logsumexp(xp, *tail)
        loss = -float(log_p)
        gamma = alpha + beta - lp  # log of sum over paths through (t, s), times p
        grad = xp.exp(logp)
        if np.isfinite(loss):
            occ = xp.zeros((t_len, c), dtype=np.float64)
            w = xp.exp(gamma - log_p)
            for s in range(s_len):  # small S: a host loop over label positions
                occ[:, ext[s]] += w[:, s]
            grad = grad - occ
        return loss, grad

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp, p = ctx.xp, self.param
        data, label = in_data[0], in_data[1]
        t_max, n, c = data.shape
        k = 2
        dlen = None
        if p.use_data_lengths:
            dlen = np.asarray(_host(in_data[k])).astype(np.int64)
            k += 1
        llen = np.asarray(_host(in_data[k])).astype(np.int64) if p.use_label_lengths else None
        lab_host = np.asarray(_host(label)).astype(np.int64)
        blank = 0 if p.blank_label == "first" else c - 1
        pad = 0 if p.blank_label == "first" else -1
        losses = np.zeros(n, dtype=np.float64)
        grad = xp.zeros(data.shape, dtype=data.dtype)
        for i in range(n):
            row = lab_host[i]
            if llen is not None:
                labels = row[:int(llen[i])].tolist()
            else:
                stop = np.nonzero(row == pad)[0]
                labels = row[:int(stop[0]) if stop.size else row.size].tolist()
            t_len = min(int(dlen[i]), t_max) if dlen is not None else t_max
            loss, g = self._sequence(xp, data[:t_len, i].astype(np.float64), labels, blank)
            losses[i] = loss
            grad[:t_len, i] = g
        if req[0] != NULL:
            store(xp, out_data[0], req[0], xp.asarray(losses.astype(data.dtype)))
        if req[1] != NULL:
            store(xp, out_data[1], req[1], grad)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        if req[0] != NULL:
            store(xp, in_grad[0], req[0], out_data[1] * out_grad[0].reshape(1, -1, 1))
        for g, r in zip(in_grad[1:], req[1:]):
            fill_zero(g, r)


def _host(a: Any) -> Any:
    """A host (numpy) copy of a small index array: label bookkeeping runs on the host."""
    get = getattr(a, "get", None)
    return get() if callable(get) and not isinstance(a, np.ndarray) else a


def register(registry: Any) -> None:
    register_op(registry, "CTCLoss", CTCLossProp, CTCLossOp, ("ctc_loss",))
