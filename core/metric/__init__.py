"""Online evaluation metrics (``plexnet.metric``, MXNet 1.x ``mx.metric``).

Every metric accumulates ``sum_metric`` and ``num_inst`` over ``update(labels, preds)``
calls and reports ``sum_metric / num_inst`` from ``get()``. The values are the same as
MXNet 1.9's on the same inputs (the arithmetic is done in numpy in the same dtypes and
order as MXNet's Python code; ``tests/metric`` checks figures computed with MXNet).

``labels`` and ``preds`` are lists of NDArrays (a single NDArray is wrapped); numpy
arrays are accepted as well. ``create`` builds a metric from a name (``'acc'``,
``'top_k_accuracy'``, ``'ce'``, ``'mse'`` ...), a config dict or JSON string, a list
(a ``CompositeEvalMetric``) or a function ``feval(label, pred)`` (a ``CustomMetric``).

Global statistics (``get_global``): ``reset_local()`` (what ``Speedometer`` calls with
``auto_reset=True``) clears the local counters only, so the epoch-end figures that
``Module.fit`` logs cover the whole epoch.

The package is split by metric family: ``base`` (``EvalMetric``, the registry),
``classification``, ``regression``, ``probability``, ``custom`` and ``composite``
(``CompositeEvalMetric``, ``create``); the names are the same as in one module.
"""
from __future__ import annotations

from .base import _REGISTRY, EvalMetric, _classes, alias, check_label_shapes, register  # noqa: F401
from .classification import F1, MCC, PCC, Accuracy, TopKAccuracy
from .composite import CompositeEvalMetric, create
from .custom import Caffe, CustomMetric, Loss, Torch, np
from .probability import CrossEntropy, NegativeLogLikelihood, Perplexity
from .regression import MAE, MSE, RMSE, PearsonCorrelation

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "PCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "Loss", "Torch", "Caffe", "CustomMetric", "np", "create",
           "register", "alias", "check_label_shapes"]
