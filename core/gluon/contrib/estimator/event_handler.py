"""The Estimator's built-in event handlers.

The protocol (the six event mixins, priorities, stop requests) is in ``events.py``;
``CheckpointHandler`` is in ``checkpoint.py``. Log lines keep MXNet 1.9.1's wording:
scripts and tests read them.
"""
from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as metric_loss
from .checkpoint import CheckpointHandler
from .events import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, EventHandler, TrainBegin, TrainEnd,
                     _check_event_handlers)
from .utils import _check_metrics, _improvement_op, _worst

__all__ = ['TrainBegin', 'TrainEnd', 'EpochBegin', 'EpochEnd', 'BatchBegin', 'BatchEnd',
           'StoppingHandler', 'MetricHandler', 'ValidationHandler',
           'LoggingHandler', 'CheckpointHandler', 'EarlyStoppingHandler', 'GradientUpdateHandler']

# re-exported for code that imports them from here, as in MXNet
_REEXPORTED = (EventHandler, _check_event_handlers)


def _metric_summary(head: str, metrics: Sequence[EvalMetric]) -> str:
    """``head`` followed by ``name: value`` of each metric, comma separated."""
    for metric in metrics:
        name, value = metric.get()
        head += '%s: %.4f, ' % (name, value)
    return head.rstrip(', ')


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Ends training after ``estimator.max_epoch`` epochs or ``estimator.max_batch``
    batches (read at train begin, so a resumed checkpoint can shorten the run).

    Parameters
    ----------
    max_epoch : int, default None
        Number of maximum epochs to train.
    max_batch : int, default None
        Number of maximum batches to train.
    """

    def __init__(self, max_epoch: int | None = None, max_batch: int | None = None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.max_epoch, self.max_batch = estimator.max_epoch, estimator.max_batch
        self.current_batch = self.current_epoch = 0

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_batch += 1
        # the flag stays up: the epoch_end of the interrupted epoch must stop the loop too
        self.stop_training = self.stop_training or self.current_batch == self.max_batch
        return self.stop_training

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_epoch += 1
        self.stop_training = self.stop_training or self.current_epoch == self.max_epoch
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at each epoch begin and updates them at each batch end: a
    ``metric.Loss`` from the batch's losses, every other metric from labels and
    predictions.

    Parameters
    ----------
    metrics : EvalMetric or list of EvalMetric
        Metrics to update.
    priority : scalar, default -1000
        Runs before the handlers that read the metrics (lower runs earlier).
    """

    def __init__(self, metrics: EvalMetric | Sequence[EvalMetric], priority: float = -1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, kwargs['loss'])
            else:
                metric.update(kwargs['label'], kwargs['pred'])


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn`` on ``val_data`` every ``epoch_period`` epochs and/or every
    ``batch_period`` batches.

    Parameters
    ----------
    val_data : DataLoader
        Validation data.
    eval_fn : callable
        Called as ``eval_fn(val_data=, batch_axis=, event_handlers=)``, usually
        ``estimator.evaluate``.
    epoch_period : int, default 1
        Validate every this many epochs (None: never at epoch end).
    batch_period : int, default None
        Validate every this many batches (None: never at batch end).
    priority : scalar, default -1000
        Runs before the handlers that read the validation metrics.
    event_handlers : EventHandler or list of EventHandler
        Handlers passed on to ``eval_fn``.
    """

    def __init__(self, val_data: Any, eval_fn: Callable[..., Any], epoch_period: int | None = 1,
                 batch_period: int | None = None, priority: float = -1000,
                 event_handlers: EventHandler | Sequence[EventHandler] | None = None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def _validate(self, estimator: Any) -> None:
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_batch = self.current_epoch = 0

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer and learning rate, per-epoch (and optionally per-interval)
    metric values and timings to ``estimator.logger``.

    The same handler serves training and evaluation: it tells them apart by its metrics'
    names ('training ...' versus 'validation ...', given by the Estimator).

    Parameters
    ----------
    log_interval : int or 'epoch', default 'epoch'
        'epoch': log at each epoch end; an integer k: also log every k batches.
    metrics : list of EvalMetric
        Metrics whose values are logged.
    priority : scalar, default np.inf
        Runs last, so that it logs values every other handler has updated.
    """

    def __init__(self, log_interval: int | str = 'epoch', metrics: Sequence[EvalMetric] | None = None,
                 priority: float = np.inf):
        if not isinstance(log_interval, int) and log_interval != 'epoch':
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.log_interval_time = 0.0

    @property
    def _per_batch(self) -> bool:
        return isinstance(self.log_interval, int)

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate %.4f ",
                              type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = self.batch_index = self.processed_samples = 0
        self.log_interval_time = 0.0

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        head = 'Train finished using total %ds with %d epochs. ' % (time.time() - self.train_start,
                                                                    self.current_epoch)
        estimator.logger.info(_metric_summary(head, self.metrics))

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if self._per_batch:
            self.batch_start = time.time()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            self.processed_samples += kwargs['batch'][0].shape[0]
            if self.batch_index % self.log_interval == 0:
                head = '[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs ' % (
                    self.current_epoch, self.batch_index, self.processed_samples, self.log_interval_time)
                self.log_interval_time = 0.0
                estimator.logger.info(_metric_summary(head, self.metrics))
        self.batch_index += 1

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.epoch_start = time.time()
        if any('training' in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        head = '[Epoch %d] Finished in %.3fs, ' % (self.current_epoch, time.time() - self.epoch_start)
        estimator.logger.info(_metric_summary(head, self.metrics))
        self.current_epoch += 1
        self.batch_index = 0


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : EvalMetric
        One of ``estimator.train_metrics`` / ``estimator.val_metrics``.
    min_delta : float, default 0
        Smallest change that counts as an improvement.
    patience : int, default 0
        Epochs without improvement tolerated before stopping.
    mode : {'auto', 'min', 'max'}, default 'auto'
        'min': lower is better; 'max': higher is better; 'auto' means 'max' (MXNet 1.9.1).
    baseline : float, default None
        Starting value to beat (default: the worst possible).
    """

    def __init__(self, monitor: EvalMetric, min_delta: float = 0, patience: int = 0, mode: str = 'auto',
                 baseline: float | None = None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from estimator.train_metrics and "
                             "estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.monitor_op = _improvement_op(mode, monitor, 'EarlyStopping')
        # stored signed, so that one test `op(value - min_delta, best)` serves both modes
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        self.best = self.baseline if self.baseline is not None else _worst(self.monitor_op)

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        name, value = self.monitor.get()
        if np.isnan(value):
            # (MXNet's message, with its arguments left unformatted)
            warnings.warn(RuntimeWarning(
                '%s is not updated, make sure you pass one of the metric objects from'
                'estimator.train_metrics and estimator.val_metrics as monitor.', name), stacklevel=2)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        # (a stop after the first epoch is not reported: MXNet tests stopped_epoch > 0)
        if self.stopped_epoch > 0:
            estimator.logger.info('[Epoch %d] EarlyStoppingHanlder: early stopping due to %s not improving',
                                  self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Applies the gradients (``trainer.step``) at each batch end, normalised by the
    number of samples in the batch's losses.

    Parameters
    ----------
    priority : scalar, default -2000
        Runs first: metrics and checkpoints see the updated weights.
    """

    def __init__(self, priority: float = -2000):
        self.priority = priority

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        losses = kwargs['loss']
        if not isinstance(losses, list):
            losses = [losses]
        estimator.trainer.step(sum(loss.shape[0] for loss in losses))
