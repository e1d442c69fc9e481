"""Regression metrics: MAE, MSE, RMSE, Pearson correlation."""
from __future__ import annotations

from typing import Any, Sequence

import numpy

from .base import EvalMetric, _np, _wrap, alias, check_label_shapes, register

__all__ = ["MAE", "MSE", "RMSE", "PearsonCorrelation"]


class _RegressionMetric(EvalMetric):
    """MAE, MSE, RMSE: ``_batch_error(label, pred)`` of each batch (1-d arrays as
    columns), averaged over batches as MXNet does."""

    _numpy_value = True  # MXNet 1.9.1 returns a numpy float64

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        raise NotImplementedError()

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _np(label), _np(pred)
            if label.ndim == 1:
                label = label.reshape(label.shape[0], 1)
            if pred.ndim == 1:
                pred = pred.reshape(pred.shape[0], 1)
            self._add(self._batch_error(label, pred), 1)


@register
class MAE(_RegressionMetric):
    """Mean absolute error (averaged per batch, as MXNet)."""

    def __init__(self, name: str = "mae", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return numpy.abs(label - pred).mean()


@register
class MSE(_RegressionMetric):
    """Mean squared error (averaged per batch, as MXNet)."""

    def __init__(self, name: str = "mse", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_RegressionMetric):
    """Root mean squared error (per batch, averaged over batches, as MXNet)."""

    def __init__(self, name: str = "rmse", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return numpy.sqrt(((label - pred) ** 2.0).mean())


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels (``average='macro'``: mean of
    per-batch coefficients; ``'micro'``: one over all batches)."""

    _numpy_value = True  # MXNet 1.9.1 returns a numpy float64

    def __init__(self, name: str = "pearsonr", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, average: str = "macro") -> None:
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def reset_micro(self) -> None:
        self._sse_p = 0
        self._mean_p = 0
        self._sse_l = 0
        self._mean_l = 0
        self._pred_nums = 0
        self._label_nums = 0
        self._conv = 0

    def reset(self) -> None:
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values: numpy.ndarray, *aggregate: Any) -> tuple:
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label: numpy.ndarray, pred: numpy.ndarray) -> None:
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _np(label).ravel().astype(numpy.float64)
            pred = _np(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                    label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                    pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self) -> tuple:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self._value(self.sum_metric / self.num_inst))
        n = self._label_nums
        r = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1)) * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, r)
