"""``Proposal`` and ``MultiProposal``: Faster R-CNN region proposals from RPN scores and
box deltas, MXNet 1.9.1's algorithm in float32: anchors from ``ratios`` x ``scales`` around
a ``feature_stride`` base box (ratio-major), shifted over the feature map; deltas applied
(or added, with ``iou_loss``) and clipped to the image; positions beyond ``im_info``'s
size and boxes smaller than ``rpn_min_size * scale`` get score -1; the best
``rpn_pre_nms_top_n`` go through greedy NMS (IoU > ``threshold``, +1 pixel areas) and the
first ``rpn_post_nms_top_n`` kept ones are output, repeated cyclically when fewer survive.
``Proposal`` reads the first image only (as MXNet's); ``MultiProposal`` every image. No
gradient (MXNet's backward writes zeros)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FnProp, register as _register
from .multibox import _Floats

__all__ = ["register"]

F32 = np.float32


class ProposalParam(Params):
    rpn_pre_nms_top_n = Field(int, default=6000, doc="boxes kept before nms")
    rpn_post_nms_top_n = Field(int, default=300, doc="boxes kept after nms")
    threshold = Field(float, default=0.7, doc="nms IoU threshold")
    rpn_min_size = Field(int, default=16, doc="minimum box side (times the image scale)")
    scales = Field(_Floats, default=_Floats((4.0, 8.0, 16.0, 32.0)), doc="anchor scales")
    ratios = Field(_Floats, default=_Floats((0.5, 1.0, 2.0)), doc="anchor aspect ratios")
    feature_stride = Field(int, default=16, doc="stride of the feature map in image pixels")
    output_score = Field(bool, default=False, doc="also output the scores")
    iou_loss = Field(bool, default=False, doc="deltas are corner offsets (IoU loss)")


def _anchors(p: ProposalParam) -> np.ndarray:
    base = F32(p.feature_stride)
    w = h = base
    cx = cy = F32(0.5) * (base - F32(1))
    out = []
    for r in p.ratios:
        size_ratio = np.floor(F32(w * h) / F32(r))
        for s in p.scales:
            nw = np.floor(np.sqrt(size_ratio) + F32(0.5)) * F32(s)
            nh = np.floor(nw / F32(s) * F32(r) + F32(0.5)) * F32(s)
            out.append([cx - F32(0.5) * (nw - 1), cy - F32(0.5) * (nh - 1),
                        cx + F32(0.5) * (nw - 1), cy + F32(0.5) * (nh - 1)])
    return np.asarray(out, dtype=F32)


def _nms(dets: np.ndarray, thresh: float, limit: int) -> list[int]:
    x1, y1, x2, y2 = dets[:, 0], dets[:, 1], dets[:, 2], dets[:, 3]
    area = (x2 - x1 + 1) * (y2 - y1 + 1)
    suppressed = np.zeros(len(dets), dtype=bool)
    keep: list[int] = []
    for i in range(len(dets)):
        if len(keep) >= limit:
            break
        if suppressed[i]:
            continue
        keep.append(i)
        w = np.maximum(F32(0), np.minimum(x2[i], x2[i + 1:]) - np.maximum(x1[i], x1[i + 1:]) + 1)
        h = np.maximum(F32(0), np.minimum(y2[i], y2[i + 1:]) - np.maximum(y1[i], y1[i + 1:]) + 1)
        inter = w * h
        suppressed[i + 1:] |= inter / (area[i] + area[i + 1:] - inter) > thresh
    return keep


def propose(p: ProposalParam, cls: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One image: ``(rpn_post_nms_top_n, 4)`` boxes and their scores."""
    anchors = _anchors(p)
    na = len(anchors)
    _, hgt, wid = cls.shape
    fs = F32(p.feature_stride)
    shift = np.stack(np.meshgrid(np.arange(wid, dtype=F32) * fs, np.arange(hgt, dtype=F32) * fs), axis=-1)  # (H,W,2)
    boxes = anchors[None, None] + np.concatenate([shift, shift], axis=-1)[:, :, None, :]  # (H, W, A, 4)
    scores = cls[na:].transpose(1, 2, 0).copy()  # foreground (H, W, A)
    d = deltas.reshape(na, 4, hgt, wid).transpose(2, 3, 0, 1)  # (H, W, A, 4)
    im_h, im_w, im_scale = F32(info[0]), F32(info[1]), F32(info[2])
    if p.iou_loss:
        pred = boxes + d
    else:
        bw = boxes[..., 2] - boxes[..., 0] + F32(1)
        bh = boxes[..., 3] - boxes[..., 1] + F32(1)
        cx, cy = boxes[..., 0] + F32(0.5) * (bw - F32(1)), boxes[..., 1] + F32(0.5) * (bh - F32(1))
        pcx, pcy = d[..., 0] * bw + cx, d[..., 1] * bh + cy
        pw, ph = np.exp(d[..., 2]) * bw, np.exp(d[..., 3]) * bh
        pred = np.stack([pcx - F32(0.5) * (pw - F32(1)), pcy - F32(0.5) * (ph - F32(1)),
                         pcx + F32(0.5) * (pw - F32(1)), pcy + F32(0.5) * (ph - F32(1))], axis=-1)
    pred = pred.astype(F32)
    pred[..., 0::2] = np.clip(pred[..., 0::2], F32(0), im_w - F32(1))
    pred[..., 1::2] = np.clip(pred[..., 1::2], F32(0), im_h - F32(1))
    real_h, real_w = int(im_h / fs), int(im_w / fs)
    scores[real_h:, :, :] = -1
    scores[:, real_w:, :] = -1
    dets = np.concatenate([pred.reshape(-1, 4), scores.reshape(-1, 1)], axis=1).astype(F32)
    min_size = F32(p.rpn_min_size) * im_scale
    small = ((dets[:, 2] - dets[:, 0] + 1) < min_size) | ((dets[:, 3] - dets[:, 1] + 1) < min_size)
    dets[small, :2] -= min_size / 2
    dets[small, 2:4] += min_size / 2
    dets[small, 4] = -1
    count = len(dets)
    pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
    post = min(p.rpn_post_nms_top_n, pre)
    ordered = dets[np.argsort(-dets[:, 4], kind="stable")[:pre]]
    keep = _nms(ordered, p.threshold, post)
    rows = [keep[i % len(keep)] for i in range(p.rpn_post_nms_top_n)]
    return ordered[rows, :4], ordered[rows, 4]


class _ProposalBase(FnProp):
    param_cls = ProposalParam
    arguments = ("cls_prob", "bbox_pred", "im_info")
    outputs = ("output", "score")
    images_all = False

    def num_visible_outputs(self):  # type: ignore[no-untyped-def]
        return 2 if self.param.output_score else 1

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        # zero gradients (MXNet's MakeZeroGradNodes): the head gradient is never read, so
        # MXNet accepts one of any shape there (its test_multi_proposal_op passes one)
        return list(in_data)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        c, b, info = shapes
        na = len(self.param.ratios) * len(self.param.scales)
        if len(c) != 4 or c[1] != 2 * na or tuple(b) != (c[0], 4 * na) + tuple(c[2:]):
            raise self.error(f"expected cls_prob (N, 2*{na}, H, W) and bbox_pred (N, 4*{na}, H, W) for "
                             f"{len(self.param.ratios)} ratios x {len(self.param.scales)} scales", shapes)
        if len(info) != 2 or info[1] < 3:
            raise self.error("im_info must have shape (N, 3): height, width, scale", shapes)
        n = (c[0] if self.images_all else 1) * self.param.rpn_post_nms_top_n
        return [(n, 5), (n, 1)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        cls, deltas, info = (np.asarray(a.get() if hasattr(a, "get") else a, dtype=F32) for a in ins)
        rois, scores = [], []
        for i in range(cls.shape[0] if self.images_all else 1):
            boxes, sc = propose(self.param, cls[i], deltas[i], info[i])
            rois.append(np.concatenate([np.full((len(boxes), 1), i, dtype=F32), boxes], axis=1))
            scores.append(sc[:, None])
        dt = ins[0].dtype
        return [xp.asarray(np.concatenate(rois).astype(dt)), xp.asarray(np.concatenate(scores).astype(dt))]


class ProposalProp(_ProposalBase):
    """Region proposals of the first image: ``(rpn_post_nms_top_n, 5)`` rows ``[0, x1, y1, x2, y2]``."""


class MultiProposalProp(_ProposalBase):
    """Region proposals of every image: ``(N * rpn_post_nms_top_n, 5)`` rows ``[image, x1, y1, x2, y2]``."""

    images_all = True


def register(registry: Any) -> None:
    _register(registry, {"Proposal": ProposalProp, "MultiProposal": MultiProposalProp})
