"""Estimator: a training loop for Gluon networks driven by event handlers.

``fit`` runs train_begin, then per epoch epoch_begin / (batch_begin, the batch processor's
``fit_batch``, batch_end)* / epoch_end, then train_end. Everything else - the weight
update, metrics, validation, logging, stopping - is a handler (``event_handler.py``),
and ``fit`` adds the default ones the caller did not give. ``evaluate`` runs one epoch's
events over the validation data with ``evaluate_batch``.
"""
from __future__ import annotations

import copy
import logging
import sys
import warnings
from typing import Any, Sequence

from ...data import DataLoader
from ...loss import Loss
from ...trainer import Trainer
from ....context import Context, cpu, gpu, num_gpus
from ....metric import EvalMetric
from ....metric import Loss as metric_loss
from .batch_processor import BatchProcessor, _split_batch
from .event_handler import GradientUpdateHandler, LoggingHandler, MetricHandler, StoppingHandler, ValidationHandler
from .events import Dispatcher, EventHandler, _check_event_handlers, sort_by_priority
from .utils import _check_handler_metric_ref, _check_loss, _check_metrics, _suggest_metric_for_loss

__all__ = ['Estimator']

_NOT_A_LOADER = ("Estimator only support input as Gluon DataLoader. Alternatively, you "
                 "can transform your DataIter or any NDArray into Gluon DataLoader. "
                 "Refer to gluon.data.")


class Estimator:
    """Trains and evaluates a Gluon network with a handler-driven loop.

    Parameters
    ----------
    net : gluon.Block
        The network to train.
    loss : gluon.loss.Loss
        Training objective.
    train_metrics : EvalMetric or list of EvalMetric
        Metrics on the training data. Default: a metric suggested by the loss (accuracy
        for softmax cross-entropy) and the loss itself (a ``metric.Loss`` named after it).
        Names get a 'training ' prefix.
    val_metrics : EvalMetric or list of EvalMetric
        Metrics on validation data; default: copies of the training metrics. Names get a
        'validation ' prefix (or have 'training' replaced).
    initializer : Initializer
        Used if ``net`` is not fully initialized yet (otherwise a warning).
    trainer : Trainer
        Default: SGD with learning rate 0.001 (with a warning).
    context : Context or list of Context
        Devices; default gpu(0) when there is a GPU, else cpu().
    val_net : gluon.Block
        Network for validation (default ``net``), e.g. one sharing ``net``'s parameters
        through ``params=net.collect_params()``.
    val_loss : gluon.loss.Loss
        Validation objective (default ``loss``).
    batch_processor : BatchProcessor
        Supplies ``fit_batch`` and ``evaluate_batch`` (default :py:class:`BatchProcessor`).
    """

    logger: logging.Logger | None = None
    """The estimator's own ``logging.Logger`` (INFO and above to sys.stdout, as it was when
    the estimator was made); every handler logs through it. Add handlers to it to also
    write elsewhere, e.g. ``est.logger.addHandler(logging.FileHandler(path))``."""

    def __init__(self, net: Any, loss: Loss, train_metrics: EvalMetric | Sequence[EvalMetric] | None = None,
                 val_metrics: EvalMetric | Sequence[EvalMetric] | None = None, initializer: Any = None,
                 trainer: Trainer | None = None, context: Context | list[Context] | None = None,
                 val_net: Any = None, val_loss: Loss | None = None, batch_processor: Any = None):
        self.net = net
        self.loss = _check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else _check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net

        # a private Logger, not logging.getLogger: two estimators must not share handlers
        self.logger = logging.Logger(name='Estimator', level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))

        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)

    # ------------------------------------------------------------------ construction

    def _check_loss(self, loss: Any) -> Loss:
        return _check_loss(loss)

    def _check_context(self, context: Context | list[Context] | None) -> list[Context]:
        gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default."
                              "To utilize all your GPUs, specify context as a list of gpus, "
                              "e.g. context=[mx.gpu(0), mx.gpu(1)] ", stacklevel=3)
            return [gpu(0)] if gpus else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, "
                             "for example mx.cpu() or [mx.gpu(0), mx.gpu(1)], "
                             "refer to mxnet.Context:{}".format(context))
        for ctx in context:
            assert ctx in gpus or str(ctx).startswith('cpu'), \
                "%s is not available, please make sure your context is in one of: mx.cpu(), %s" % (
                    ctx, ", ".join(str(g) for g in gpus))
        return context

    def _is_initialized(self) -> bool:
        params = self.net.collect_params()
        try:
            for name in params:
                params[name].list_ctx()
        except RuntimeError:
            return False
        return True

    def _initialize(self, initializer: Any) -> None:
        # only parameters not initialized yet are touched: a partly initialized net keeps
        # what it has
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. "
                          "You don't need to pass initializer if you already "
                          "initialized your net. "
                          "You can use net.initialize(init=your_initializer, force_reinit=True)"
                          "to force re-initialize.", stacklevel=3)

    def _check_trainer(self, trainer: Any) -> Trainer:
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate 0.001 is used.",
                          stacklevel=3)
            return Trainer(self.net.collect_params(), 'sgd', {'learning_rate': 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("Trainer must be a Gluon Trainer instance, refer to gluon.Trainer:{}".format(trainer))
        return trainer

    def _check_batch_processor(self, batch_processor: Any) -> Any:
        if batch_processor is None:
            return BatchProcessor()
        if not all(callable(getattr(batch_processor, m, None)) for m in ('fit_batch', 'evaluate_batch')):
            raise ValueError('Customized Batch Processor must contain fit_batch() and evaluate_batch() methods')
        return batch_processor

    def _add_default_training_metrics(self) -> None:
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            # 'softmaxcrossentropyloss0' -> 'softmaxcrossentropyloss'
            self._train_metrics.append(metric_loss(self.loss.name.rstrip('1234567890')))
        # the prefixes are how handlers (LoggingHandler) tell training and validation apart
        for metric in self._train_metrics:
            metric.name = 'training ' + metric.name

    def _add_validation_metrics(self) -> None:
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(metric) for metric in self._train_metrics]
        for metric in self._val_metrics:
            if 'training' in metric.name:
                metric.name = metric.name.replace('training', 'validation')
            else:
                metric.name = 'validation ' + metric.name

    @property
    def train_metrics(self) -> list[EvalMetric]:
        """The metrics updated during ``fit`` (names start with 'training')."""
        return self._train_metrics

    @property
    def val_metrics(self) -> list[EvalMetric]:
        """The metrics updated by ``evaluate`` (names start with 'validation')."""
        return self._val_metrics

    def _get_data_and_label(self, batch: Sequence[Any], ctx: list[Context], batch_axis: int = 0) -> tuple:
        return _split_batch(batch, ctx, batch_axis)

    # ------------------------------------------------------------------ handlers

    def _with_defaults(self, event_handlers: Any, defaults: list[tuple[type | None, Any]],
                       known_metrics: list[EvalMetric]) -> list[EventHandler]:
        """The caller's handlers plus each default whose type the caller did not supply
        (type None: always added), sorted by priority, in the caller's list if it gave one
        (see ``events._check_event_handlers``). When both kinds are present, every handler
        must refer to the estimator's own metric objects."""
        handlers = _check_event_handlers(event_handlers)
        added = [make() for kind, make in defaults
                 if kind is None or not any(isinstance(h, kind) for h in handlers)]
        mixing = bool(handlers and added)
        handlers.extend(added)
        if mixing:
            known = set(known_metrics)
            for handler in handlers:
                _check_handler_metric_ref(handler, known)
        return sort_by_priority(handlers)

    def _prepare_default_handlers(self, val_data: Any, event_handlers: Any) -> list[EventHandler]:
        """Handlers of a ``fit`` run: the caller's plus the defaults (a StoppingHandler
        always; gradient update, metric update, validation if ``val_data``, logging unless
        given)."""
        defaults: list[tuple[type | None, Any]] = [
            (None, lambda: StoppingHandler(self.max_epoch, self.max_batch)),
            (GradientUpdateHandler, GradientUpdateHandler),
            (MetricHandler, lambda: MetricHandler(metrics=self.train_metrics))]
        if val_data:
            defaults.append((ValidationHandler, lambda: ValidationHandler(val_data=val_data,
                                                                          eval_fn=self.evaluate)))
        defaults.append((LoggingHandler, lambda: LoggingHandler(metrics=self.train_metrics)))
        return self._with_defaults(event_handlers, defaults, self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers: Any) -> list[EventHandler]:
        """Handlers of an ``evaluate`` run: the caller's plus metric update and logging of
        the validation metrics unless given."""
        defaults: list[tuple[type | None, Any]] = [
            (MetricHandler, lambda: MetricHandler(metrics=self.val_metrics)),
            (LoggingHandler, lambda: LoggingHandler(metrics=self.val_metrics))]
        return self._with_defaults(event_handlers, defaults, self.val_metrics)

    def _categorize_handlers(self, event_handlers: Sequence[EventHandler]) -> tuple[list[EventHandler], ...]:
        """(train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end) lists:
        each handler in the lists of the events it subscribes to."""
        return Dispatcher(event_handlers).groups()

    # ------------------------------------------------------------------ loops

    def evaluate(self, val_data: DataLoader, batch_axis: int = 0, event_handlers: Any = None) -> None:
        """Evaluate ``val_net`` on ``val_data``: one pass calling the batch processor's
        ``evaluate_batch`` per batch, with epoch/batch events for the handlers.

        Parameters
        ----------
        val_data : DataLoader
            Validation data and labels.
        batch_axis : int, default 0
            Axis along which batches are split across devices.
        event_handlers : EventHandler or list of EventHandler
            Handlers for this pass; a MetricHandler and a LoggingHandler of the
            validation metrics are added unless given.
        """
        if not isinstance(val_data, DataLoader):
            raise ValueError(_NOT_A_LOADER + "DataLoader")
        for metric in self.val_metrics:
            metric.reset()
        events = Dispatcher(self._prepare_default_validation_handlers(event_handlers))

        events.fire('epoch_begin', self)
        for batch in val_data:
            events.fire('batch_begin', self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            events.fire('batch_end', self, batch=batch, pred=pred, label=label, loss=loss)
        events.fire('epoch_end', self)

    def fit(self, train_data: DataLoader, val_data: DataLoader | None = None, epochs: int | None = None,
            event_handlers: Any = None, batches: int | None = None, batch_axis: int = 0) -> None:
        """Train ``net`` on ``train_data`` for ``epochs`` epochs or ``batches`` batches
        (exactly one of them), calling the batch processor's ``fit_batch`` per batch.

        Parameters
        ----------
        train_data : DataLoader
            Training data and labels.
        val_data : DataLoader, default None
            Validation data; a ValidationHandler evaluating it every epoch is added unless
            one is given.
        epochs : int, default None
            Number of epochs.
        event_handlers : EventHandler or list of EventHandler
            Handlers for this run; a StoppingHandler, GradientUpdateHandler, MetricHandler
            and LoggingHandler are added unless given (a StoppingHandler always).
        batches : int, default None
            Number of batches (an epoch cut short ends with its epoch_end events).
        batch_axis : int, default 0
            Axis along which batches are split across devices.
        """
        if not isinstance(train_data, DataLoader):
            raise ValueError(_NOT_A_LOADER + "dataloader")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, "
                             "train by number of epochs or number of batches."
                             "Please specify one and only one of: epochs or batches.")
        # handlers read these (a resumed CheckpointHandler shortens them at train_begin)
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        events = Dispatcher(self._prepare_default_handlers(val_data, event_handlers))

        events.fire('train_begin', self)
        stop = False
        while not stop:
            events.fire('epoch_begin', self)
            for batch in train_data:
                events.fire('batch_begin', self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                if events.fire('batch_end', self, batch=batch, pred=pred, label=label, loss=loss):
                    break
            # a stop at batch end only ends the epoch; epoch_end handlers decide whether
            # training ends (the StoppingHandler's flag stays up, so it does)
            stop = events.fire('epoch_end', self)
        events.fire('train_end', self)
