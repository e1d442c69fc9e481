"""Bounding boxes as MXNet 1.9.1's ``contrib``: ``box_iou``, ``box_nms`` (alias
``box_non_maximum_suppression``), ``box_encode``, ``box_decode``, ``bipartite_matching``.

Conventions kept from MXNet: scores sort descending (stably: ties keep input order);
``box_nms`` keeps, per batch, the first ``topk`` valid boxes (score > ``valid_thresh``,
class != ``background_id``) and suppresses a box whose IoU with a kept box of the same
class (any class with ``force_suppress``) exceeds ``overlap_thresh``; kept rows come
first, the rest is -1; converting the output format skips rows whose first coordinate is
negative; the gradient goes back to the kept rows. ``bipartite_matching`` makes greedy
matches in score order and, as MXNet's loop does, stops after ``topk + 1`` matches.
``box_iou`` and ``bipartite_matching`` pass zero gradients.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FnProp, register as _register

__all__ = ["register", "iou_matrix"]

FORMATS = ("corner", "center")


def _corners(xp: Any, b: Any, fmt: str) -> Any:
    if fmt == "corner":
        return b
    x, y, w, h = b[..., 0], b[..., 1], b[..., 2] / 2, b[..., 3] / 2
    return xp.stack([x - w, y - h, x + w, y + h], axis=-1)


def _area(xp: Any, c: Any) -> Any:
    w, h = c[..., 2] - c[..., 0], c[..., 3] - c[..., 1]
    return xp.where((w < 0) | (h < 0), 0, w * h)


def iou_matrix(xp: Any, a: Any, b: Any, fmt: str) -> Any:
    """IoU of every box of ``a`` (..., 4) with every box of ``b`` (..., 4): ``a.shape[:-1] + b.shape[:-1]``."""
    ca, cb = _corners(xp, a.reshape(-1, 4), fmt), _corners(xp, b.reshape(-1, 4), fmt)
    iw = xp.minimum(ca[:, None, 2], cb[None, :, 2]) - xp.maximum(ca[:, None, 0], cb[None, :, 0])
    ih = xp.minimum(ca[:, None, 3], cb[None, :, 3]) - xp.maximum(ca[:, None, 1], cb[None, :, 1])
    inter = iw * ih
    union = _area(xp, ca)[:, None] + _area(xp, cb)[None, :] - inter
    ok = (iw > 0) & (ih > 0) & (inter > 0)
    iou = xp.where(ok, inter / xp.where(ok, union, 1), 0)
    return iou.reshape(a.shape[:-1] + b.shape[:-1])


class BoxFormatParam(Params):
    format = Field(str, default="corner", choices=FORMATS, doc="corner: xmin,ymin,xmax,ymax; center: x,y,w,h")


class BoxIouProp(FnProp):
    """Intersection over union of every pair of boxes: ``lhs.shape[:-1] + rhs.shape[:-1]``."""

    param_cls = BoxFormatParam
    arguments = ("lhs", "rhs")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        for i, s in enumerate(shapes):
            if len(s) < 2 or s[-1] != 4:
                raise self.error(f"argument {self.arguments[i]!r} must have at least 2 dimensions and a last "
                                 f"dimension of 4", shapes)
        return [shapes[0][:-1] + shapes[1][:-1]]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [iou_matrix(xp, ins[0], ins[1], self.param.format)]


class BoxNMSParam(Params):
    overlap_thresh = Field(float, default=0.5, doc="IoU above which the lower-scored box is suppressed")
    valid_thresh = Field(float, default=0.0, doc="boxes need a score above this")
    topk = Field(int, default=-1, doc="only the topk highest-scored valid boxes (-1: all)")
    coord_start = Field(int, default=2, doc="index of the first of the 4 coordinates")
    score_index = Field(int, default=1, doc="index of the score")
    id_index = Field(int, default=-1, doc="index of the class id (-1: no classes)")
    background_id = Field(int, default=-1, doc="class id ignored by nms")
    force_suppress = Field(bool, default=False, doc="suppress across classes too")
    in_format = Field(str, default="corner", choices=FORMATS, doc="input box encoding")
    out_format = Field(str, default="corner", choices=FORMATS, doc="output box encoding")


class BoxNMSProp(FnProp):
    """Non-maximum suppression of ``(..., num_boxes, width)`` detections."""

    param_cls = BoxNMSParam
    outputs = ("output0", "output1")   # the result and its hidden record; nnvm's default names
    visible = 1

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, p = shapes[0], self.param
        if len(d) < 2:
            raise self.error("data must have at least 2 dimensions (num_boxes, box_width)", shapes)
        width = d[-1]
        need = 6 if p.id_index >= 0 else 5
        if width < need:
            raise self.error(f"the last dimension must have at least {need} elements (score, 4 coordinates"
                             f"{', class id' if need == 6 else ''}), got {width}", shapes)
        if not 0 <= p.score_index < width or p.coord_start <= p.score_index <= p.coord_start + 3:
            raise self.error(f"score_index {p.score_index} is out of range or overlaps the coordinates", shapes)
        if not (0 <= p.coord_start and p.coord_start + 3 < width):
            raise self.error(f"coordinates {p.coord_start}..{p.coord_start + 3} are out of range", shapes)
        if p.id_index >= 0 and (p.id_index >= width or p.coord_start <= p.id_index <= p.coord_start + 3
                                or p.id_index == p.score_index):
            raise self.error(f"id_index {p.id_index} is out of range or conflicts with score/coordinates", shapes)
        return [d, d[:-1] + (1,)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], out_data[1]]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        p, data = self.param, ins[0]
        n, width = data.shape[-2], data.shape[-1]
        flat = data.reshape(-1, n, width)
        out = xp.full(flat.shape, -1, dtype=data.dtype)
        record = xp.full(flat.shape[:2] + (1,), -1, dtype=data.dtype)
        cs = p.coord_start
        topk = n if p.topk < 0 else min(n, p.topk)
        for b in range(flat.shape[0]):
            rows = flat[b]
            scores = rows[:, p.score_index]
            valid = scores > p.valid_thresh
            if p.id_index >= 0:
                valid &= rows[:, p.id_index] != p.background_id
            cand = xp.nonzero(valid)[0]
            if cand.size == 0:
                continue
            order = cand[xp.argsort(-scores[cand], kind="stable")][:topk]
            boxes = _corners(xp, rows[order, cs:cs + 4], p.in_format)
            iou = iou_matrix(xp, boxes, boxes, "corner")
            if p.id_index >= 0 and not p.force_suppress:
                cls = rows[order, p.id_index]
                iou = xp.where(cls[:, None] == cls[None, :], iou, 0)
            alive = np.ones(len(order), dtype=bool)
            over = np.asarray(iou.get() if hasattr(iou, "get") else iou) > p.overlap_thresh
            for i in range(len(order)):  # greedy, in score order
                if alive[i]:
                    alive[i + 1:] &= ~over[i, i + 1:]
            keep = order[xp.asarray(np.nonzero(alive)[0])]
            out[b, :len(keep)] = rows[keep]
            record[b, :len(keep), 0] = keep.astype(data.dtype)
        if p.in_format != p.out_format:
            c = out[..., cs:cs + 4]
            if p.out_format == "corner":
                conv = _corners(xp, c, "center")
            else:
                conv = xp.stack([(c[..., 0] + c[..., 2]) / 2, (c[..., 1] + c[..., 3]) / 2,
                                 c[..., 2] - c[..., 0], c[..., 3] - c[..., 1]], axis=-1)
            out[..., cs:cs + 4] = xp.where((c[..., :1] < 0), c, conv)
        return [out.reshape(data.shape), record.reshape(data.shape[:-1] + (1,))]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        og, record = ogs[0], outs[1]
        n, width = og.shape[-2], og.shape[-1]
        g = xp.zeros((og.size // (n * width), n, width), dtype=og.dtype)
        rec = record.reshape(g.shape[0], n).astype(np.int64)
        ogf = og.reshape(g.shape)
        for b in range(g.shape[0]):
            sel = rec[b] >= 0
            g[b, rec[b][sel]] = ogf[b][sel]
        return [g.reshape(og.shape)]


class BoxEncodeProp(FnProp):
    """Training targets ``((ref_center - anchor_center) / anchor_size - means) / stds`` and
    ``(log(ref_size / anchor_size) - means) / stds`` for positive samples, with masks."""

    arguments = ("samples", "matches", "anchors", "refs", "means", "stds")
    outputs = ("targets", "masks")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        s, m, a, r, mean, std = shapes
        if len(s) != 2 or len(m) < 2 or len(a) < 3 or a[-1] != 4 or len(r) < 3 or r[-1] != 4:
            raise self.error("expected samples (B, N), matches (B, N), anchors (B, N, 4), refs (B, M, 4)", shapes)
        if tuple(mean) != (4,) or tuple(std) != (4,):
            raise self.error("means and stds must have shape (4,)", shapes)
        return [a, a]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        samples, matches, anchors, refs, means, stds = ins
        b = anchors.shape[0]
        idx = matches.astype(np.int64)
        ref = refs[xp.arange(b)[:, None], idx]  # (B, N, 4)

        def center(c):  # type: ignore[no-untyped-def]
            w, h = c[..., 2] - c[..., 0], c[..., 3] - c[..., 1]
            return c[..., 0] + w * 0.5, c[..., 1] + h * 0.5, w, h
        rx, ry, rw, rh = center(ref)
        ax, ay, aw, ah = center(anchors)
        t = xp.stack([(rx - ax) / aw, (ry - ay) / ah, xp.log(rw / aw), xp.log(rh / ah)], axis=-1)
        t = (t - means) / stds
        valid = (samples > 0.5)[..., None]
        return [xp.where(valid, t, 0), xp.broadcast_to(valid, t.shape).astype(anchors.dtype)]


class BoxDecodeParam(Params):
    std0 = Field(float, default=1.0, doc="scale of the 1st encoded value")
    std1 = Field(float, default=1.0, doc="scale of the 2nd encoded value")
    std2 = Field(float, default=1.0, doc="scale of the 3rd encoded value")
    std3 = Field(float, default=1.0, doc="scale of the 4th encoded value")
    clip = Field(float, default=-1.0, doc="clip the size exponents to this (when > 0)")
    format = Field(str, default="center", choices=FORMATS, doc="encoding of the anchors")


class BoxDecodeProp(FnProp):
    """Boxes (corner format) from encoded offsets ``data`` (B, N, 4) and ``anchors`` (1, N, 4)."""

    param_cls = BoxDecodeParam
    arguments = ("data", "anchors")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, a = shapes
        if len(d) != 3 or d[-1] != 4 or len(a) < 3 or a[-1] != 4:
            raise self.error("expected data (B, N, 4) and anchors (1, N, 4)", shapes)
        return [d]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        p, x = self.param, ins[0]
        a = ins[1].reshape(1, -1, 4)
        if p.format == "corner":
            aw, ah = a[..., 2] - a[..., 0], a[..., 3] - a[..., 1]
            ax, ay = a[..., 0] + aw * 0.5, a[..., 1] + ah * 0.5
        else:
            ax, ay, aw, ah = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
        ox = x[..., 0] * p.std0 * aw + ax
        oy = x[..., 1] * p.std1 * ah + ay
        dw, dh = x[..., 2] * p.std2, x[..., 3] * p.std3
        if p.clip > 0:
            dw, dh = xp.minimum(dw, p.clip), xp.minimum(dh, p.clip)
        ow, oh = xp.exp(dw) * aw * 0.5, xp.exp(dh) * ah * 0.5
        return [xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)]


class MatchingParam(Params):
    is_ascend = Field(bool, default=False, doc="ascending scores (lower is better)")
    threshold = Field(float, doc="ignore scores below (above, with is_ascend) this")
    topk = Field(int, default=-1, doc="limit on the number of matches (-1: none)")


class BipartiteMatchingProp(FnProp):
    """Greedy bipartite matching of a ``(..., N, M)`` score matrix: the matched column of
    each row and the matched row of each column (-1: none)."""

    param_cls = MatchingParam
    outputs = ("row_marker", "col_marker")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        if len(d) < 2:
            raise self.error("the score matrix must have at least 2 dimensions", shapes)
        return [d[:-1], d[:-2] + (d[-1],)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        p, s = self.param, ins[0]
        r, c = s.shape[-2], s.shape[-1]
        # the batch count explicitly: reshape(-1, 0) is ambiguous for a zero-size matrix
        flat = np.asarray(s.get() if hasattr(s, "get") else s).reshape(int(np.prod(s.shape[:-2])), r * c)
        rows = np.full((flat.shape[0], r), -1, dtype=s.dtype)
        cols = np.full((flat.shape[0], c), -1, dtype=s.dtype)
        for b in range(flat.shape[0]):
            order = np.argsort(flat[b] if p.is_ascend else -flat[b], kind="stable")
            count = 0
            for idx in order:
                i, j = divmod(int(idx), c)
                if rows[b, i] != -1 or cols[b, j] != -1:
                    continue
                v = flat[b, idx]
                if (v > p.threshold) if not p.is_ascend else (v < p.threshold):
                    rows[b, i], cols[b, j] = j, i
                    count += 1
                    if 0 < p.topk < count:
                        break
                else:
                    break
        return [xp.asarray(rows.reshape(s.shape[:-1])), xp.asarray(cols.reshape(s.shape[:-2] + (c,)))]


def register(registry: Any) -> None:
    _register(registry, {"box_iou": BoxIouProp, "box_nms": BoxNMSProp, "box_encode": BoxEncodeProp,
                         "box_decode": BoxDecodeProp, "bipartite_matching": BipartiteMatchingProp},
              aliases={"box_nms": ("_contrib_box_non_maximum_suppression",)})
