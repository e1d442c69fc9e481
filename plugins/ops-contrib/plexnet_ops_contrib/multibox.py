"""``MultiBoxPrior`` (SSD anchor boxes), ``MultiBoxTarget``, ``MultiBoxDetection``,
``SparseEmbedding`` (``Embedding`` with MXNet's row-sparse gradient, here dense) and
``count_sketch``.

MultiBoxPrior: for every feature-map cell (centre ``((x + offset_x) * step_x, (y +
offset_y) * step_y)``, steps ``1/W``, ``1/H`` by default) one box per size with
``ratios[0]``, then one per further ratio with ``sizes[0]``; width ``size * H / W *
sqrt(ratio) / 2``, height ``size / sqrt(ratio) / 2`` either side of the centre; output
``(1, H * W * (len(sizes) + len(ratios) - 1), 4)``, corners, clipped to [0, 1] with
``clip``.

MultiBoxTarget, as MXNet 1.9.1: labels ``(B, M, >=5)`` ``[class, xmin, ymin, xmax, ymax]``
(rows from the first class -1 on are padding); every ground truth first takes its best
free anchor (greedy, highest IoU first, IoU > 1e-6), then every other anchor whose best
IoU exceeds ``overlap_threshold`` is positive; negatives are all the rest, or with
``negative_mining_ratio > 0`` the ``ratio * positives`` anchors with best IoU below
``negative_mining_thresh`` and the lowest background probability (softmax of
``cls_pred``); others get ``ignore_label``. Targets are the centre/size offsets divided
by ``variances``. No gradient.

MultiBoxDetection, as MXNet 1.9.1: per anchor the best non-background class (class 0 is
background; the first maximum wins) unless its score is below ``threshold``; boxes
decoded from ``loc_pred`` with ``variances`` (clipped to [0, 1] with ``clip``); valid rows
first in anchor order, then (``0 < nms_threshold <= 1``) the first ``nms_topk`` rows by
score, stably sorted, with greedy suppression at IoU >= ``nms_threshold`` (same class
unless ``force_suppress``); suppressed rows keep their values with id -1, the rest is
-1. No gradient (as MXNet). count_sketch: ``out[n, h[i]] += data[n, i] * s[i]`` (MXNet: GPU only).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FnProp, register as _register

__all__ = ["register"]


class _Floats(tuple):
    def __new__(cls, v: Any = ()) -> "_Floats":
        if isinstance(v, str):
            import ast
            v = ast.literal_eval(v)
        if isinstance(v, (int, float)):
            v = (v,)
        return super().__new__(cls, (float(x) for x in v))


class MultiBoxPriorParam(Params):
    sizes = Field(_Floats, default=_Floats((1.0,)), doc="box sizes relative to the image")
    ratios = Field(_Floats, default=_Floats((1.0,)), doc="aspect ratios")
    clip = Field(bool, default=False, doc="clip boxes to [0, 1]")
    steps = Field(_Floats, default=_Floats((-1.0, -1.0)), doc="(y, x) step; -1: 1/size")
    offsets = Field(_Floats, default=_Floats((0.5, 0.5)), doc="(y, x) centre offsets")


class MultiBoxPriorProp(FnProp):
    """SSD prior (anchor) boxes for every cell of an NCHW feature map."""

    param_cls = MultiBoxPriorParam
    outputs = ("output",)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, p = shapes[0], self.param
        if len(d) != 4:
            raise self.error("data must be 4-D (N, C, H, W)", shapes)
        if not p.sizes or not p.ratios or len(p.steps) != 2 or len(p.offsets) != 2:
            raise self.error("sizes and ratios must not be empty; steps and offsets need 2 values", shapes)
        return [(1, d[2] * d[3] * (len(p.sizes) + len(p.ratios) - 1), 4)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        p = self.param
        h, w = ins[0].shape[2:]
        sy = p.steps[0] if p.steps[0] > 0 else 1.0 / h
        sx = p.steps[1] if p.steps[1] > 0 else 1.0 / w
        shapes = [(s * h / w * math.sqrt(p.ratios[0]) / 2, s / math.sqrt(p.ratios[0]) / 2) for s in p.sizes]
        shapes += [(p.sizes[0] * h / w * math.sqrt(r) / 2, p.sizes[0] / math.sqrt(r) / 2) for r in p.ratios[1:]]
        half = np.array(shapes)  # (K, 2): half width, half height
        cy = (np.arange(h) + p.offsets[0]) * sy
        cx = (np.arange(w) + p.offsets[1]) * sx
        cyy, cxx = np.meshgrid(cy, cx, indexing="ij")
        c = np.stack([cxx, cyy], axis=-1).reshape(-1, 1, 2)  # (H*W, 1, 2)
        boxes = np.concatenate([c - half[None], c + half[None]], axis=-1).reshape(1, -1, 4)
        if p.clip:
            boxes = np.clip(boxes, 0.0, 1.0)
        return [xp.asarray(boxes.astype(ins[0].dtype))]


class MultiBoxTargetParam(Params):
    overlap_threshold = Field(float, default=0.5, doc="IoU above which an anchor is positive")
    ignore_label = Field(float, default=-1.0, doc="class target of ignored anchors")
    negative_mining_ratio = Field(float, default=-1.0, doc="negatives per positive (-1: no mining)")
    negative_mining_thresh = Field(float, default=0.5, doc="IoU below which an anchor may be a negative")
    minimum_negative_samples = Field(int, default=0, doc="accepted (unused by MXNet 1.9.1 too)")
    variances = Field(_Floats, default=_Floats((0.1, 0.1, 0.2, 0.2)), doc="encoding variances")


def _overlaps(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """IoU of anchors (N, 4) and ground truths (G, 4), MXNet's way (0 where the union is 0)."""
    w = np.maximum(0.0, np.minimum(a[:, None, 2], g[None, :, 2]) - np.maximum(a[:, None, 0], g[None, :, 0]))
    h = np.maximum(0.0, np.minimum(a[:, None, 3], g[None, :, 3]) - np.maximum(a[:, None, 1], g[None, :, 1]))
    inter = w * h
    union = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]))[:, None] + ((g[:, 2] - g[:, 0]) * (g[:, 3] - g[:, 1]))[None] \
        - inter
    return np.where(union == 0, 0.0, inter / np.where(union == 0, 1.0, union))


class MultiBoxTargetProp(FnProp):
    """SSD training targets ``(loc_target, loc_mask, cls_target)`` from anchors ``(1, N, 4)``,
    labels ``(B, M, >=5)`` and class predictions ``(B, C, N)``."""

    param_cls = MultiBoxTargetParam
    arguments = ("anchor", "label", "cls_pred")
    outputs = ("loc_target", "loc_mask", "cls_target")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        a, lab, pred = shapes
        if len(a) != 3 or a[0] != 1 or a[2] != 4 or a[1] < 1:
            raise self.error("anchor must have shape (1, num_anchors, 4)", shapes)
        if len(lab) != 3 or lab[1] < 1 or lab[2] < 5:
            raise self.error("label must have shape (batch, num_labels, >=5)", shapes)
        if len(pred) != 3 or pred[2] != a[1]:
            raise self.error("cls_pred must have shape (batch, num_classes, num_anchors)", shapes)
        if len(self.param.variances) != 4:
            raise self.error(f"variances must have 4 values, got {tuple(self.param.variances)}", shapes)
        return [(lab[0], a[1] * 4), (lab[0], a[1] * 4), (lab[0], a[1])]

    def _flags(self, iou: np.ndarray, preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per anchor: 1 positive, 0 negative, -1 ignored; and the matched ground truth."""
        p = self.param
        n, g = iou.shape
        flags = np.full(n, -1)
        match = np.full(n, -1)
        best = np.full(n, -1.0)
        free = iou.copy()
        for _ in range(g):  # every ground truth takes its best free anchor, best pairs first
            k = int(np.argmax(free))
            j, t = divmod(k, g)
            if not free[j, t] > 1e-6:
                break
            flags[j], match[j], best[j] = 1, t, free[j, t]
            free[j, :] = -1.0
            free[:, t] = -1.0
        rest = flags != 1
        if p.overlap_threshold > 0:
            cand = np.argmax(iou, axis=1)
            match[rest], best[rest] = cand[rest], iou[np.arange(n), cand][rest]
            flags[rest & (best > p.overlap_threshold)] = 1
        positives = int((flags == 1).sum())
        if p.negative_mining_ratio > 0:
            n_neg = min(int(positives * p.negative_mining_ratio), n - positives)
            if n_neg > 0:
                unset = (flags == -1) & (best < 0)
                cand = np.argmax(iou, axis=1)
                best[unset] = iou[np.arange(n), cand][unset]
                pool = np.nonzero((flags == -1) & (best < p.negative_mining_thresh))[0]
                e = np.exp(preds[:, pool] - preds[:, pool].max(axis=0))
                background = e[0] / e.sum(axis=0)
                flags[pool[np.argsort(background, kind="stable")[:n_neg]]] = 0
        else:
            flags[flags != 1] = 0
        return flags, match

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        anchor, label, pred = (np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.float64) for a in ins)
        p = self.param
        a = anchor[0]
        nb, n = label.shape[0], a.shape[0]
        loc = np.zeros((nb, n, 4))
        mask = np.zeros((nb, n, 4))
        cls = np.full((nb, n), p.ignore_label)
        vx, vy, vw, vh = p.variances
        aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
        ax, ay = (a[:, 0] + a[:, 2]) * 0.5, (a[:, 1] + a[:, 3]) * 0.5
        for b in range(nb):
            lab = label[b]
            n_gt = int(np.argmax(lab[:, 0] == -1)) if (lab[:, 0] == -1).any() else len(lab)
            if n_gt == 0:
                continue
            flags, match = self._flags(_overlaps(a, lab[:n_gt, 1:5]), pred[b])
            pos = flags == 1
            gt = lab[match[pos]]
            gw, gh = gt[:, 3] - gt[:, 1], gt[:, 4] - gt[:, 2]
            gx, gy = (gt[:, 1] + gt[:, 3]) * 0.5, (gt[:, 2] + gt[:, 4]) * 0.5
            loc[b, pos] = np.stack([(gx - ax[pos]) / aw[pos] / vx, (gy - ay[pos]) / ah[pos] / vy,
                                    np.log(gw / aw[pos]) / vw, np.log(gh / ah[pos]) / vh], axis=-1)
            mask[b, pos] = 1.0
            cls[b, pos] = gt[:, 0] + 1
            cls[b, flags == 0] = 0.0
        dt = ins[0].dtype
        return [xp.asarray(loc.reshape(nb, -1).astype(dt)), xp.asarray(mask.reshape(nb, -1).astype(dt)),
                xp.asarray(cls.astype(dt))]


class MultiBoxDetectionParam(Params):
    clip = Field(bool, default=True, doc="clip boxes to [0, 1]")
    threshold = Field(float, default=0.01, doc="minimum score of a detection")
    background_id = Field(int, default=0, doc="background class id")
    nms_threshold = Field(float, default=0.5, doc="IoU at which nms suppresses")
    force_suppress = Field(bool, default=False, doc="suppress across classes")
    variances = Field(_Floats, default=_Floats((0.1, 0.1, 0.2, 0.2)), doc="decoding variances")
    nms_topk = Field(int, default=-1, doc="detections kept before nms (-1: all)")


class MultiBoxDetectionProp(FnProp):
    """SSD detections ``(B, N, 6)`` = ``[class, score, xmin, ymin, xmax, ymax]`` from class
    probabilities ``(B, C, N)``, box offsets ``(B, N*4)`` and anchors ``(1, N, 4)``."""

    param_cls = MultiBoxDetectionParam
    arguments = ("cls_prob", "loc_pred", "anchor")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        c, loc, a = shapes
        if len(c) != 3 or len(loc) != 2 or len(a) != 3 or a[-1] != 4:
            raise self.error("expected cls_prob (B, C, N), loc_pred (B, N*4), anchor (1, N, 4)", shapes)
        if loc[1] != c[2] * 4 or a[1] != c[2] or loc[0] != c[0]:
            raise self.error("cls_prob, loc_pred and anchor disagree on the number of anchors or batches", shapes)
        if len(self.param.variances) != 4:
            raise self.error(f"variances must have 4 values, got {tuple(self.param.variances)}", shapes)
        return [(c[0], c[2], 6)]

    def _decode(self, xp: Any, anchors: Any, loc: Any) -> Any:
        vx, vy, vw, vh = self.param.variances
        al, at, ar, ab = (anchors[:, k] for k in range(4))
        aw, ah = ar - al, ab - at
        ax, ay = (al + ar) / 2, (at + ab) / 2
        ox, oy = loc[:, 0] * vx * aw + ax, loc[:, 1] * vy * ah + ay
        ow, oh = xp.exp(loc[:, 2] * vw) * aw / 2, xp.exp(loc[:, 3] * vh) * ah / 2
        box = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
        return xp.clip(box, 0, 1) if self.param.clip else box

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        cls, loc, anchor = ins
        p = self.param
        nb, nc, na = cls.shape
        out = np.full((nb, na, 6), -1.0, dtype=np.float64)
        host = [np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.float64) for a in (cls, loc, anchor)]
        for b in range(nb):
            probs = host[0][b, 1:, :]
            best = probs.argmax(axis=0)
            score = probs[best, np.arange(na)]
            cid = np.where(score < p.threshold, -1, best)  # class id - 1; -1: background
            rows = np.concatenate([cid[:, None], score[:, None],
                                   self._decode(np, host[2][0], host[1][b].reshape(na, 4))], axis=1)
            valid = rows[cid >= 0]
            out[b, :len(valid)] = valid
            n_valid = len(valid)
            if n_valid < 1 or not 0 < p.nms_threshold <= 1:
                continue
            order = np.argsort(-valid[:, 1], kind="stable")
            keep = n_valid if not 0 < p.nms_topk < n_valid else p.nms_topk
            out[b, keep:n_valid, 0] = -1  # MXNet drops the rest before reordering the kept ones
            out[b, :keep] = valid[order[:keep]]
            det = out[b]
            for i in range(keep):  # greedy suppression in score order
                if det[i, 0] < 0:
                    continue
                for j in range(i + 1, keep):
                    if det[j, 0] < 0 or not (p.force_suppress or det[i, 0] == det[j, 0]):
                        continue
                    bi, bj = det[i, 2:], det[j, 2:]
                    w = max(0.0, min(bi[2], bj[2]) - max(bi[0], bj[0]))
                    h = max(0.0, min(bi[3], bj[3]) - max(bi[1], bj[1]))
                    inter = w * h
                    union = (bi[2] - bi[0]) * (bi[3] - bi[1]) + (bj[2] - bj[0]) * (bj[3] - bj[1]) - inter
                    if (inter / union if union > 0 else 0.0) >= p.nms_threshold:
                        det[j, 0] = -1
        return [xp.asarray(out.astype(cls.dtype))]


class SparseEmbeddingParam(Params):
    input_dim = Field(int, low=1, doc="vocabulary size")
    output_dim = Field(int, low=1, doc="embedding size")
    dtype = Field("dtype", default="float32", doc="weight dtype")
    sparse_grad = Field(bool, default=True, doc="accepted; the gradient is dense here")
    deterministic = Field(bool, default=False, doc="MXNet: accumulate gradients in a fixed order (plexnet "
                                                   "always does)")


class SparseEmbeddingProp(FnProp):
    """``weight[data]``: rows of ``weight`` (input_dim, output_dim) for integer ``data``."""

    param_cls = SparseEmbeddingParam
    arguments = ("data", "weight")

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        # the weight's shape follows from the parameters (as Embedding's): simple_bind needs only data's
        d, wt = in_shape
        want = (self.param.input_dim, self.param.output_dim)
        if wt is not None and tuple(wt) != want:
            raise self.error(f"weight must have shape {want}", in_shape)
        if d is None:
            return [None, want], [None], []
        return [tuple(d), want], [tuple(d) + (self.param.output_dim,)], []

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, wt = shapes
        want = (self.param.input_dim, self.param.output_dim)
        if tuple(wt) != want:
            raise self.error(f"weight must have shape {want}", shapes)
        return [tuple(d) + (self.param.output_dim,)]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        wt = in_type[1] if in_type[1] is not None else np.dtype(self.param.dtype)
        return [in_type[0] if in_type[0] is not None else wt, wt], [wt], []

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        idx = xp.clip(ins[0].astype(np.int64), 0, self.param.input_dim - 1)
        return [ins[1][idx]]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        idx = xp.clip(ins[0].astype(np.int64), 0, self.param.input_dim - 1).ravel()
        g = xp.zeros(ins[1].shape, dtype=ogs[0].dtype)
        xp.add.at(g, idx, ogs[0].reshape(idx.size, -1))
        return [xp.zeros(ins[0].shape, dtype=ins[0].dtype), g]


class CountSketchParam(Params):
    out_dim = Field(int, low=1, doc="output dimension")
    processing_batch_size = Field(int, default=32, low=1, doc="MXNet's GPU batching; no effect on results")


class CountSketchProp(FnProp):
    """``out[n, h[i]] += data[n, i] * s[i]`` for data (N, d), h and s (1, d)."""

    param_cls = CountSketchParam
    arguments = ("data", "h", "s")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, h, s = shapes
        if len(d) != 2 or tuple(h) != (1, d[1]) or tuple(s) != (1, d[1]):
            raise self.error("expected data (N, d) and h, s of shape (1, d)", shapes)
        return [(d[0], self.param.out_dim)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        data, h, s = ins
        out = xp.zeros((data.shape[0], self.param.out_dim), dtype=data.dtype)
        xp.add.at(out, (slice(None), h[0].astype(np.int64)), data * s[0])
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        data, h, s = ins
        return [ogs[0][:, h[0].astype(np.int64)] * s[0], xp.zeros(h.shape, dtype=h.dtype),
                xp.zeros(s.shape, dtype=s.dtype)]


def register(registry: Any) -> None:
    _register(registry, {"MultiBoxPrior": MultiBoxPriorProp, "MultiBoxDetection": MultiBoxDetectionProp,
                         "MultiBoxTarget": MultiBoxTargetProp,
                         "SparseEmbedding": SparseEmbeddingProp,
                         "count_sketch": CountSketchProp})
