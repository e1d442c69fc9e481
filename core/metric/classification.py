"""Classification metrics: accuracy, top-k accuracy, F1, MCC, PCC."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy

from .base import EvalMetric, _np, _wrap, alias, check_label_shapes, register

__all__ = ["Accuracy", "TopKAccuracy", "F1", "MCC", "PCC"]


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of samples whose predicted class (argmax over ``axis``, or the
    prediction itself when it has the label's shape) equals the label."""

    _numpy_value = True  # MXNet 1.9.1 returns a numpy float64

    def __init__(self, axis: int = 1, name: str = "accuracy", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred_label in zip(labels, preds):
            pred = _np(pred_label)
            label = _np(label)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = label.astype("int32").ravel()
            check_label_shapes(label, pred)
            num_correct = int((pred == label).sum())
            self._add(num_correct, len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest predictions."""

    _numpy_value = True  # MXNet 1.9.1 returns a numpy float64

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        assert self.top_k > 1, "Please use Accuracy if top_k is no more than 1"  # MXNet's AssertionError
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred_label in zip(labels, preds):
            pred = _np(pred_label).astype("float32")
            if pred.ndim > 2:
                raise ValueError("Predictions should be no more than 2 dims")
            label = _np(label).astype("int32")
            check_label_shapes(label, pred)
            num_samples = pred.shape[0]
            if pred.ndim == 1:
                n = int(numpy.count_nonzero(numpy.argpartition(pred, -self.top_k).flat == label.flat))
                self._add(n, 0)
            else:
                num_classes = pred.shape[1]
                top_k = min(num_classes, self.top_k)
                # argpartition as MXNet: only membership in the top k matters
                part = numpy.argpartition(pred, -top_k)
                for j in range(top_k):
                    n = int(numpy.count_nonzero(part[:, num_classes - 1 - j].flat == label.flat))
                    self._add(n, 0)
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics:
    """True/false positive/negative counts over batches (for F1 and MCC)."""

    def __init__(self) -> None:
        self.reset_stats()

    def update_binary_stats(self, label: Any, pred: Any) -> None:
        pred = _np(pred)
        label = _np(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{self.__class__.__name__} currently only supports binary classification.")
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        tp = (pred_true * label_true).sum()
        fp = (pred_true * label_false).sum()
        fn = (pred_false * label_true).sum()
        tn = (pred_false * label_false).sum()
        self.true_positives += tp
        self.global_true_positives += tp
        self.false_positives += fp
        self.global_false_positives += fp
        self.false_negatives += fn
        self.global_false_negatives += fn
        self.true_negatives += tn
        self.global_true_negatives += tn

    @staticmethod
    def _ratio(a: Any, b: Any) -> float:
        return float(a) / (a + b) if a + b > 0 else 0.0

    @property
    def precision(self) -> float:
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self) -> float:
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self) -> float:
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self) -> float:
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def global_fscore(self) -> float:
        p, r = self.global_precision, self.global_recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    def matthewscc(self, use_global: bool = False) -> float:
        if use_global:
            if not self.global_total_examples:
                return 0.0
            tp, fp = float(self.global_true_positives), float(self.global_false_positives)
            fn, tn = float(self.global_false_negatives), float(self.global_true_negatives)
        else:
            if not self.total_examples:
                return 0.0
            tp, fp = float(self.true_positives), float(self.false_positives)
            fn, tn = float(self.false_negatives), float(self.true_negatives)
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return ((tp * tn) - (fp * fn)) / math.sqrt(denom)

    @property
    def total_examples(self) -> Any:
        return self.false_negatives + self.false_positives + self.true_negatives + self.true_positives

    @property
    def global_total_examples(self) -> Any:
        return (self.global_false_negatives + self.global_false_positives + self.global_true_negatives
                + self.global_true_positives)

    def local_reset_stats(self) -> None:
        self.false_positives = self.false_negatives = self.true_positives = self.true_negatives = 0

    def reset_stats(self) -> None:
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class _BinaryStatsMetric(EvalMetric):
    """F1 and MCC: a score of the binary counts, the mean of per-batch scores
    (``average='macro'``) or one score over all batches (``'micro'``).

    Subclasses keep MXNet's attribute names (F1: ``metrics`` / ``average``, MCC:
    ``_metrics`` / ``_average``) and give them to this class through ``_stats``,
    ``_per_batch`` and ``_score``."""

    _stats: _BinaryClassificationMetrics
    _per_batch: bool

    #: what a macro-averaged batch adds to ``num_inst`` (MXNet: F1 ``1``, MCC ``1.``)
    _batch_count: int | float = 1

    def _score(self, use_global: bool) -> float:
        raise NotImplementedError()

    def update(self, labels: Any, preds: Any) -> None:
        stats = self._stats
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            stats.update_binary_stats(label, pred)
        if self._per_batch:
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += self._batch_count
            self.global_num_inst += self._batch_count
            stats.reset_stats()
        else:
            self.sum_metric = self._score(False) * stats.total_examples
            self.global_sum_metric = self._score(True) * stats.global_total_examples
            self.num_inst = stats.total_examples
            self.global_num_inst = stats.global_total_examples

    def reset(self) -> None:
        super().reset()
        self._stats.reset_stats()

    def reset_local(self) -> None:
        super().reset_local()
        self._stats.local_reset_stats()


@register
class F1(_BinaryStatsMetric):
    """F1 score of a binary classification (``average='macro'``: mean of per-batch
    scores; ``'micro'``: one score over all batches)."""

    def __init__(self, name: str = "f1", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, average: str = "macro") -> None:
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    _stats = property(lambda self: self.metrics)  # type: ignore[assignment]
    _per_batch = property(lambda self: self.average == "macro")  # type: ignore[assignment]

    def _score(self, use_global: bool) -> float:
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryStatsMetric):
    """Matthews correlation coefficient of a binary classification."""

    def __init__(self, name: str = "mcc", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, average: str = "macro") -> None:
        self._average = average
        self._metrics = _BinaryClassificationMetrics()
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    _stats = property(lambda self: self._metrics)  # type: ignore[assignment]
    _per_batch = property(lambda self: self._average == "macro")  # type: ignore[assignment]
    _batch_count = 1.0

    def _score(self, use_global: bool) -> float:
        return self._metrics.matthewscc(use_global=use_global)


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (from the confusion matrix)."""

    lcm: numpy.ndarray  # local and global confusion matrices, k x k
    gcm: numpy.ndarray

    def __init__(self, name: str = "pcc", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, has_global_stats: bool = True) -> None:
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc: int) -> None:
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat: numpy.ndarray) -> float:
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _np(label).astype("int32")
            pred = _np(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype("int32")
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            for i, j in zip(pred, label):
                bcm[i, j] += 1
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self) -> float:  # type: ignore[override]
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, v: Any) -> None:
        pass

    @property
    def global_sum_metric(self) -> float:  # type: ignore[override]
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, v: Any) -> None:
        pass

    def reset(self) -> None:
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))
