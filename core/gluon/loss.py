"""Gluon losses (MXNet 1.x ``gluon.loss``): each a HybridBlock returning one loss per
sample (the mean over every axis but ``batch_axis``), with the same formulas as
MXNet (numerically stable forms included)."""
from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from .. import ndarray
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss", "SoftmaxCrossEntropyLoss",
           "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss", "HingeLoss", "SquaredHingeLoss", "LogisticLoss",
           "TripletLoss", "PoissonNLLLoss", "CosineEmbeddingLoss", "SDMLLoss"]

numeric_types = (Number, np.generic)


def _apply_weighting(F: Any, loss: Any, weight: Any = None, sample_weight: Any = None) -> Any:
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, numeric_types):
            raise TypeError("weight must be a number")
        loss = loss * weight
    return loss


def _reshape_like(F: Any, x: Any, y: Any) -> Any:
    if F is ndarray:
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


class Loss(HybridBlock):
    """Base class: ``weight`` scales the loss, ``batch_axis`` is kept."""

    def __init__(self, weight: Any, batch_axis: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class L2Loss(Loss):
    """``weight/2 * (label - pred)^2``."""

    def __init__(self, weight: float = 1., batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L1Loss(Loss):
    """``|label - pred|``."""

    def __init__(self, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = _apply_weighting(F, F.abs(label - pred), self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy on logits (stable form) or probabilities (``from_sigmoid``)."""

    def __init__(self, from_sigmoid: bool = False, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None, pos_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (F.Activation(-F.abs(pred), act_type="softrelu")
                                                           + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Cross-entropy of ``softmax(pred)`` against class indices (``sparse_label``) or
    a distribution."""

    def __init__(self, axis: int = -1, sparse_label: bool = True, from_logits: bool = False, weight: Any = None,
                 batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)`` with ``pred`` log-probabilities."""

    def __init__(self, from_logits: bool = True, axis: int = -1, weight: Any = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification loss (needs the ``CTCLoss`` operator)."""

    def __init__(self, layout: str = "NTC", label_layout: str = "NT", weight: Any = None, **kwargs: Any) -> None:
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"Only 'NTC' and 'TNC' layouts for pred are supported. Got: {layout}")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"Only 'NT' and 'TN' layouts for label are supported. Got: {label_layout}")
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, pred_lengths: Any = None, label_lengths: Any = None,
                       sample_weight: Any = None) -> Any:
        if self._layout == "NTC":
            pred = F.swapaxes(pred, dim1=0, dim2=1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, dim1=0, dim2=1)
        args = [pred, label] + [a for a in (pred_lengths, label_lengths) if a is not None]
        loss = F.CTCLoss(*args, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smoothed L1: quadratic below ``rho``, linear above."""

    def __init__(self, rho: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho, (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` with labels in {-1, 1}."""

    def __init__(self, margin: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = _apply_weighting(F, F.relu(self._margin - pred * label), self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label)^2``."""

    def __init__(self, margin: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` (labels 'signed' {-1, 1} or 'binary' {0, 1})."""

    def __init__(self, weight: Any = None, batch_axis: int = 0, label_format: str = "signed", **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ("signed", "binary"):
            raise ValueError(f"label_format can only be signed or binary, recieved {label_format}.")

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class TripletLoss(Loss):
    """``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)``."""

    def __init__(self, margin: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, positive: Any, negative: Any) -> Any:
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred), axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of a Poisson distribution (mean over everything)."""

    def __init__(self, weight: Any = None, from_logits: bool = True, batch_axis: int = 0, compute_full: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F: Any, pred: Any, target: Any, sample_weight: Any = None,
                       epsilon: float = 1e-08) -> Any:
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(x1, x2)`` for label 1, ``max(0, cos(x1, x2) - margin)`` for label -1."""

    def __init__(self, weight: Any = None, batch_axis: int = 0, margin: float = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, input1: Any, input2: Any, label: Any, sample_weight: Any = None) -> Any:
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        y_1 = label == 1
        y_minus_1 = label == -1
        cos_sim_a = (1 - cos_sim) * y_1
        z = F.array([0]) if F is ndarray else F.zeros((1, 1))
        cos_sim_b = F.broadcast_maximum(z, y_minus_1 * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F: Any, x: Any, y: Any, axis: int = -1) -> Any:
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        eps = F.array([1e-12]) if F is ndarray else F.ones((1, 1)) * 1e-12
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, eps)


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss over a batch of aligned pairs (x1[i], x2[i])."""

    def __init__(self, smoothing_parameter: float = 0.3, weight: float = 1., batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, x1: Any, x2: Any) -> Any:
        if x1.shape != x2.shape:
            raise ValueError(f"SDMLLoss: x1 {x1.shape} and x2 {x2.shape} must have the same shape")
        batch_size, dim = x1.shape
        x1_ = x1.expand_dims(1).broadcast_to([batch_size, batch_size, dim])
        x2_ = x2.expand_dims(0).broadcast_to([batch_size, batch_size, dim])
        return ((x1_ - x2_) ** 2).sum(axis=2)

    def _compute_labels(self, F: Any, batch_size: int) -> Any:
        gold = np.eye(batch_size, dtype=np.float32)
        labels = gold * (1 - self.smoothing_parameter) + (1 - gold) * self.smoothing_parameter / (batch_size - 1)
        return ndarray.array(labels)

    def hybrid_forward(self, F: Any, x1: Any, x2: Any) -> Any:
        labels = self._compute_labels(F, x1.shape[0])
        distances = self._compute_distances(x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels.as_in_context(distances.context))
