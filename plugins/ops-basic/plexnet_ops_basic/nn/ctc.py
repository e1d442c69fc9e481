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
        return ["output0", "output1"]   # loss and the saved gradient; nnvm's default names

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
    def _batch(self, xp: Any, scores: Any, labels: list[list[int]], t_lens: np.ndarray, blank: int) -> tuple[Any, Any]:
        """Losses ``(N,)`` and score gradients ``(T, N, C)`` of the whole batch: one
        forward-backward recursion over time, vectorised over sequences and label
        positions (positions past a sequence's labels and steps past its length are
        masked out)."""
        t_max, n, c = scores.shape
        z = scores - scores.max(axis=2, keepdims=True)
        logp = z - xp.log(xp.exp(z).sum(axis=2, keepdims=True))  # (T, N, C)
        s_max = 2 * max((len(lab) for lab in labels), default=0) + 1
        ext = np.full((n, s_max), blank, dtype=np.int64)
        valid = np.zeros((n, s_max), dtype=bool)
        skip = np.zeros((n, s_max), dtype=bool)
        s_len = np.zeros(n, dtype=np.int64)
        for i, lab in enumerate(labels):
            e = [blank]
            for v in lab:
                e += [v, blank]
            s_len[i] = len(e)
            ext[i, :len(e)] = e
            valid[i, :len(e)] = True
            for k in range(2, len(e)):
                skip[i, k] = e[k] != blank and e[k] != e[k - 2]
        ext_a, valid_a, skip_a = xp.asarray(ext), xp.asarray(valid), xp.asarray(skip)
        lp = xp.take_along_axis(logp, xp.broadcast_to(ext_a[None], (t_max, n, s_max)), axis=2)
        lp = xp.where(valid_a[None], lp, NEG_INF)
        skip_next = xp.concatenate([skip_a[:, 2:], xp.zeros((n, 2), dtype=bool)], axis=1)
        ninf1, ninf2 = xp.full((n, 1), NEG_INF), xp.full((n, 2), NEG_INF)
        t_len = xp.asarray(t_lens)
        alpha = xp.full((t_max, n, s_max), NEG_INF)
        if t_max:
            alpha[0, :, :2] = lp[0, :, :2]
        for t in range(1, t_max):
            a = alpha[t - 1]
            a1 = xp.concatenate([ninf1, a[:, :-1]], axis=1)
            a2 = xp.where(skip_a, xp.concatenate([ninf2, a[:, :-2]], axis=1)[:, :s_max], NEG_INF)
            alpha[t] = _logsumexp(xp, a, a1, a2) + lp[t]
        beta = xp.full((t_max, n, s_max), NEG_INF)
        rows = xp.arange(n)
        last_s = xp.asarray(s_len - 1)
        for t in range(t_max - 1, -1, -1):
            if t + 1 < t_max:
                b = beta[t + 1]
                b1 = xp.concatenate([b[:, 1:], ninf1], axis=1)
                b2 = xp.where(skip_next, xp.concatenate([b[:, 2:], ninf2], axis=1)[:, :s_max], NEG_INF)
                beta[t] = _logsumexp(xp, b, b1, b2) + lp[t]
            start = t_len - 1 == t  # sequences whose last step is t start their recursion here
            init = xp.full((n, s_max), NEG_INF)
            init[rows, last_s] = lp[t, rows, last_s]
            prev = xp.maximum(last_s - 1, 0)
            init[rows, prev] = xp.where(last_s > 0, lp[t, rows, prev], init[rows, prev])
            beta[t] = xp.where(start[:, None], init, xp.where((t < t_len - 1)[:, None], beta[t], NEG_INF))
        t_last = xp.maximum(t_len - 1, 0)
        a_end = alpha[t_last, rows]  # (N, S)
        tail1 = a_end[rows, last_s]
        tail2 = xp.where(last_s > 0, a_end[rows, xp.maximum(last_s - 1, 0)], NEG_INF)
        log_p = _logsumexp(xp, tail1, tail2)
        empty = t_len == 0
        has_labels = xp.asarray(np.array([len(lab) > 0 for lab in labels]))
        log_p = xp.where(empty, xp.where(has_labels, NEG_INF, 0.0), log_p)
        finite = xp.isfinite(log_p)
        with np.errstate(invalid="ignore", over="ignore"):
            w = xp.exp(alpha + beta - lp - xp.where(finite, log_p, 0.0)[None, :, None])
        w = xp.where(xp.isfinite(w) & finite[None, :, None], w, 0.0)
        onehot = (ext_a[:, :, None] == xp.arange(c)[None, None, :]).astype(w.dtype)  # (N, S, C)
        occ = xp.einsum("tns,nsc->tnc", w, onehot)
        steps = (xp.arange(t_max)[:, None] < t_len[None, :])[:, :, None]
        grad = xp.where(steps, xp.exp(logp) - occ, 0.0)
        return -log_p, grad

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
        labels = []
        for i in range(n):
            row = lab_host[i]
            if llen is not None:
                labels.append(row[:int(llen[i])].tolist())
            else:
                stop = np.nonzero(row == pad)[0]
                labels.append(row[:int(stop[0]) if stop.size else row.size].tolist())
        t_lens = np.minimum(dlen, t_max) if dlen is not None else np.full(n, t_max, dtype=np.int64)
        losses, grad = self._batch(xp, data.astype(np.float64), labels, t_lens, blank)
        if req[0] != NULL:
            store(xp, out_data[0], req[0], losses.astype(data.dtype))
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
