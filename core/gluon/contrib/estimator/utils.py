"""Argument checks shared by the Estimator and its handlers."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable

import numpy as np

from ...loss import Loss, SoftmaxCrossEntropyLoss
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics: EvalMetric | Iterable[EvalMetric] | None) -> list[EvalMetric]:
    """A metric, a list of metrics or None as a flat list of simple metrics (composites
    are opened, so that every handler sees the same metric objects). A list given by the
    caller is returned as is: handlers built from ``estimator.train_metrics`` share it."""
    if isinstance(metrics, CompositeEvalMetric):
        return [leaf for child in metrics.metrics for leaf in _check_metrics(child)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = metrics or []
    if not isinstance(metrics, list):
        metrics = list(metrics)
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, "
                         "refer to mxnet.metric.EvalMetric: {}".format(metrics))
    return metrics


def _check_loss(loss: Any) -> Loss:
    if not isinstance(loss, Loss):
        raise ValueError("loss must be a Loss, refer to gluon.loss.Loss:{}".format(loss))
    return loss


def _suggest_metric_for_loss(loss: Loss) -> EvalMetric | None:
    """The metric a loss usually goes with (accuracy for classification), or None."""
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None


def _check_metric_known(handler: Any, metric: Any, known_metrics: set) -> None:
    if metric not in known_metrics:
        raise ValueError(
            "Event handler {} refers to a metric instance {} outside of the known training and "
            "validation metrics. Please use the metrics from estimator.train_metrics and "
            "estimator.val_metrics instead.".format(type(handler).__name__, metric))


def _check_handler_metric_ref(handler: Any, known_metrics: set) -> None:
    """Every attribute of ``handler`` whose name mentions 'metric' must hold the
    estimator's own metric objects: a handler with private copies would report values
    that the MetricHandler never updates."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference:
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            _check_metric_known(handler, metric, known_metrics)


def _improvement_op(mode: str, monitor: EvalMetric, owner: str) -> Callable[[Any, Any], Any]:
    """The comparison (np.less / np.greater) that says a monitored value improved.

    Unknown modes fall back to 'auto' with a RuntimeWarning naming ``owner``. 'auto' is
    meant to pick by the metric's name, but MXNet 1.9.1 always picks ``greater`` there
    (its name test is always true); kept, with MXNet's warning, so that a script behaves
    the same on both libraries."""
    if mode not in ("auto", "min", "max"):
        warnings.warn("%s mode %s is unknown, fallback to auto mode. CheckpointHandler will use"
                      "max mode for f1 and accuracy metric comparison and use min mode other wise"
                      % (owner, mode), RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    warnings.warn("`greater` operator will be used to determine if {} has improved. "
                  "Please specify `mode='min'` to use the `less` operator. "
                  "Specify `mode='max' to disable this warning.`".format(monitor.get()[0]), stacklevel=3)
    return np.greater


def _worst(op: Callable[[Any, Any], Any]) -> float:
    """The starting 'best' value for a comparison: anything beats it."""
    return np.inf if op is np.less else -np.inf
