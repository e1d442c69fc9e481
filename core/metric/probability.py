"""Metrics of predicted probabilities: perplexity, cross-entropy, negative log-likelihood."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy

from .base import EvalMetric, _np, _wrap, alias, register

__all__ = ["Perplexity", "CrossEntropy", "NegativeLogLikelihood"]


@register
class Perplexity(EvalMetric):
    """``exp(-mean(log p(label)))``; labels equal to ``ignore_label`` are skipped."""

    def __init__(self, ignore_label: int | None, axis: int = -1, name: str = "perplexity",
                 output_names: Sequence[str] | None = None, label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        loss = 0.0
        num = 0.0
        for label, pred in zip(labels, preds):
            pred = _np(pred)
            label = _np(label)
            if label.size != pred.size / pred.shape[-1]:
                raise ValueError(f"shape mismatch: {label.shape} vs. {pred.shape}")
            label = label.reshape((label.size,))
            idx = label.astype("int32")
            axis = self.axis % pred.ndim
            # nd.pick(pred, idx, axis): idx has pred's shape without ``axis``
            picked = numpy.take_along_axis(
                pred, numpy.expand_dims(idx.reshape(pred.shape[:axis] + pred.shape[axis + 1:]), axis),
                axis=axis).squeeze(axis).reshape(-1)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(picked.dtype)
                num -= float(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(numpy.sum(numpy.log(numpy.maximum(picked.dtype.type(1e-10), picked)),
                                    dtype=picked.dtype))
            num += picked.size
        self._add(loss, num)

    def get(self) -> tuple:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


class _PickedLogLoss(EvalMetric):
    """CrossEntropy and NegativeLogLikelihood: the sum over samples of
    ``-log(pred[i, label[i]] + eps)``, counted per sample."""

    _numpy_value = True  # MXNet 1.9.1 returns a numpy float64

    eps: float

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _np(label).ravel()
            pred = _np(pred)
            n = pred.shape[0]
            if label.shape[0] != n:
                raise ValueError(f"{label.shape[0]} labels for {n} predictions")
            prob = pred[numpy.arange(n, dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), n)


@register
@alias("ce")
class CrossEntropy(_PickedLogLoss):
    """Mean of ``-log(p[label] + eps)`` over samples."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps


@register
@alias("nll_loss")
class NegativeLogLikelihood(_PickedLogLoss):
    """Negative log-likelihood (same figure as ``CrossEntropy``, named ``nll-loss``)."""

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps
