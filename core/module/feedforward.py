"""MXNet's legacy training API, ``mx.model.FeedForward`` (and the executor manager it
used), on top of ``Module``.

``FeedForward(symbol, ctx, num_epoch, optimizer, initializer, numpy_batch_size, ...,
**optimizer_kwargs)`` trains with ``fit(X, y)`` where ``X`` is a ``DataIter`` or numpy
data (batched by ``numpy_batch_size``, shuffled for training), predicts with
``predict`` and evaluates with ``score``; ``save``/``load`` use MXNet's checkpoint files.
``mx.model.FeedForward`` resolves here lazily (``plexnet.model`` stays below ``module``).
"""
from __future__ import annotations

import logging
import time
import warnings
from typing import Any, Sequence

import numpy as np

from .. import metric as _metric
from ..callback import LogValidationMetricsCallback
from ..context import Context, cpu
from ..initializer import Uniform
from ..io import DataIter, NDArrayIter
from ..model import BatchEndParam, load_checkpoint, save_checkpoint
from ..symbol import Symbol
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module

__all__ = ["FeedForward", "DataParallelExecutorManager"]

try:  # MXNet's estimators derive from scikit-learn's when it is installed
    from sklearn.base import BaseEstimator as BASE_ESTIMATOR  # type: ignore[import-not-found]
    SKLEARN_INSTALLED = True
except ImportError:  # pragma: no cover - depends on the environment
    BASE_ESTIMATOR = object
    SKLEARN_INSTALLED = False


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _callbacks(callbacks: Any, param: BatchEndParam) -> None:
    if callbacks is not None:
        for cb in _as_list(callbacks):
            cb(param)


class FeedForward(BASE_ESTIMATOR):  # type: ignore[misc,valid-type]
    """A feed-forward model trained on one or more devices (MXNet 1.x legacy API)."""

    def __init__(self, symbol: Any, ctx: Any = None, num_epoch: int | None = None, epoch_size: int | None = None,
                 optimizer: Any = "sgd", initializer: Any = Uniform(0.01), numpy_batch_size: int = 128,
                 arg_params: dict | None = None, aux_params: dict | None = None, allow_extra_params: bool = False,
                 begin_epoch: int = 0, **kwargs: Any) -> None:
        warnings.warn("plexnet.model.FeedForward has been deprecated. Please use plexnet.mod.Module instead.",
                      DeprecationWarning, stacklevel=2)
        # MXNet 1.x: a callable is a bucketing sym_gen (bucket key -> Symbol); the symbol
        # is then the default bucket's, made when fit sees the data
        self.symbol: Symbol | None
        self.sym_gen: Any
        if isinstance(symbol, Symbol):
            self.symbol, self.sym_gen = symbol, None
        elif callable(symbol):
            self.symbol, self.sym_gen = None, symbol
        else:
            raise TypeError(f"FeedForward: symbol must be a Symbol or a callable sym_gen, got {type(symbol).__name__}")
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = list(ctx)
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = dict(kwargs)
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self._pred_exec: Module | BucketingModule | None = None

    # -- data ---------------------------------------------------------------------------------------
    def _init_iter(self, X: Any, y: Any, is_train: bool) -> DataIter:  # noqa: N803 - MXNet's names
        if isinstance(X, (np.ndarray,)) or hasattr(X, "asnumpy"):
            if y is None:
                if is_train:
                    raise ValueError("y must be specified when X is numpy.ndarray")
                y = np.zeros(X.shape[0])
            y = y.asnumpy() if hasattr(y, "asnumpy") else np.asarray(y)
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.ravel()
            if X.shape[0] != y.shape[0]:
                raise ValueError("The numbers of data points and labels not equal")
            batch = min(X.shape[0], self.numpy_batch_size)
            return NDArrayIter(X, y, batch, shuffle=is_train, last_batch_handle="roll_over" if is_train else "pad")
        if not isinstance(X, DataIter):
            raise TypeError("X must be DataIter, NDArray or numpy.ndarray")
        return X

    def _module(self, it: DataIter) -> Module | BucketingModule:
        data_names = [d[0] if isinstance(d, tuple) else d.name for d in it.provide_data]
        label_names = [d[0] if isinstance(d, tuple) else d.name for d in it.provide_label]
        if self.sym_gen is None:
            return Module(self.symbol, data_names=data_names, label_names=label_names, context=self.ctx)
        key = getattr(it, "default_bucket_key", None)
        if key is None:
            raise ValueError("FeedForward: a sym_gen needs a bucketing iterator (one with default_bucket_key)")
        self.symbol = self.sym_gen(key)
        sym_gen = self.sym_gen
        return BucketingModule(lambda k: (sym_gen(k), data_names, label_names), default_bucket_key=key,
                               context=self.ctx)

    # -- training and inference -------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None, eval_data: Any = None, eval_metric: Any = "acc",  # noqa: N803
            epoch_end_callback: Any = None, batch_end_callback: Any = None, kvstore: Any = "local",
            logger: Any = None, work_load_list: Sequence[float] | None = None, monitor: Any = None,
            eval_end_callback: Any = LogValidationMetricsCallback(), eval_batch_end_callback: Any = None) -> None:
        """Train for ``num_epoch`` epochs (``X``: a ``DataIter`` or numpy data with labels
        ``y``; ``eval_data``: an iterator or an ``(X, y)`` pair).

        The loop is MXNet's ``_train_multi_device`` on a ``Module``: the same log lines
        (``Start training with [cpu(0)]``, ``Epoch[i] Resetting Data Iterator``,
        ``Epoch[i] Time cost``; validation through ``eval_end_callback``, no ``Train-``
        line), ``nbatch`` counted from 1 in ``batch_end_callback`` and ``epoch_size``
        batches per epoch continuing the iterator across epochs."""
        if self.num_epoch is None:
            raise ValueError("FeedForward.fit needs num_epoch")
        data = self._init_iter(X, y, is_train=True)
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            eval_data = self._init_iter(eval_data[0], eval_data[1], is_train=False)
        logger = logger if logger is not None else logging
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        mod = self._module(data)
        mod.logger = logger
        mod.bind(data_shapes=data.provide_data, label_shapes=data.provide_label or None, for_training=True)
        if monitor is not None:
            mod.install_monitor(monitor)
        mod.init_params(initializer=self.initializer, arg_params=self.arg_params, aux_params=self.aux_params,
                        allow_missing=True, allow_extra=self.allow_extra_params)
        params = dict(self.kwargs)
        if isinstance(self.optimizer, str) and "rescale_grad" not in params:
            params["rescale_grad"] = 1.0 / data.batch_size
        mod.init_optimizer(kvstore=kvstore, optimizer=self.optimizer,
                           optimizer_params=params if isinstance(self.optimizer, str) else ())
        logger.info("Start training with %s", str(self.ctx))
        data.reset()
        for epoch in range(self.begin_epoch, self.num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            while True:
                do_reset = True
                for data_batch in data:
                    if monitor is not None:
                        monitor.tic()
                    mod.forward_backward(data_batch)
                    mod.update()
                    if monitor is not None:
                        monitor.toc_print()
                    mod.update_metric(eval_metric, data_batch.label)
                    nbatch += 1
                    _callbacks(batch_end_callback, BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                                 eval_metric=eval_metric, locals=locals()))
                    if self.epoch_size is not None and nbatch >= self.epoch_size:
                        do_reset = False
                        break
                if do_reset:
                    logger.info("Epoch[%d] Resetting Data Iterator", epoch)
                    data.reset()
                if self.epoch_size is None or nbatch >= self.epoch_size:
                    break
            logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            self.arg_params, self.aux_params = mod.get_params()
            if epoch_end_callback is not None:
                for cb in _as_list(epoch_end_callback):
                    cb(epoch, self.symbol, self.arg_params, self.aux_params)
            if eval_data:
                eval_metric.reset()
                eval_data.reset()
                total_num_batch = 0
                for i, eval_batch in enumerate(eval_data):
                    mod.forward(eval_batch, is_train=False)
                    mod.update_metric(eval_metric, eval_batch.label)
                    _callbacks(eval_batch_end_callback, BatchEndParam(epoch=epoch, nbatch=i,
                                                                      eval_metric=eval_metric, locals=locals()))
                    total_num_batch += 1
                _callbacks(eval_end_callback, BatchEndParam(epoch=epoch, nbatch=total_num_batch,
                                                            eval_metric=eval_metric, locals=locals()))
                eval_data.reset()
        self.arg_params, self.aux_params = mod.get_params()
        self._pred_exec = None

    def _predictor(self, it: DataIter, labels: bool = True) -> Module | BucketingModule:
        if self.arg_params is None:
            raise RuntimeError("FeedForward: the model has no parameters yet (fit or load first)")
        shapes = (tuple(tuple(d.shape) for d in it.provide_data),
                  tuple(tuple(d.shape) for d in it.provide_label) if labels else None)
        if self._pred_exec is None or getattr(self, "_pred_shapes", None) != shapes:
            mod = self._module(it)
            if labels:
                mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label or None, for_training=False)
            else:
                # predict, as MXNet's _init_predictor: data shapes only. An iterator's label
                # may not fit the loss (CSVIter without label_csv gives (batch,) for a
                # (batch, 600) output; example/kaggle-ndsb2); the loss infers its own
                with warnings.catch_warnings():  # Module's "label_shapes don't match label_names"
                    warnings.simplefilter("ignore", UserWarning)
                    mod.bind(data_shapes=it.provide_data, label_shapes=None, for_training=False)
            mod.set_params(self.arg_params, self.aux_params or {}, allow_missing=False,
                           allow_extra=self.allow_extra_params)
            self._pred_exec, self._pred_shapes = mod, shapes
        return self._pred_exec

    def predict(self, X: Any, num_batch: int | None = None, return_data: bool = False,  # noqa: N803
                reset: bool = True) -> Any:
        """Outputs (numpy; a list for several outputs); with ``return_data`` also the data
        and labels, as ``(outputs, data, label)``."""
        it = self._init_iter(X, None, is_train=False)
        if reset:
            it.reset()
        mod = self._predictor(it, labels=False)
        outs: list[list[np.ndarray]] = []
        data_list: list[list[np.ndarray]] = []
        label_list: list[list[np.ndarray]] = []
        for i, batch in enumerate(it):
            if num_batch is not None and i == num_batch:
                break
            mod.forward(batch, is_train=False)
            keep = batch.data[0].shape[0] - (batch.pad or 0)
            outs.append([o.asnumpy()[:keep] for o in mod.get_outputs()])
            if return_data:
                data_list.append([d.asnumpy()[:keep] for d in batch.data])
                label_list.append([lab.asnumpy()[:keep] for lab in (batch.label or [])])
        outputs = [np.concatenate(x) for x in zip(*outs)]
        result: Any = outputs[0] if len(outputs) == 1 else outputs
        if return_data:
            data = [np.concatenate(x) for x in zip(*data_list)]
            label = [np.concatenate(x) for x in zip(*label_list)]
            return result, (data[0] if len(data) == 1 else data), (label[0] if len(label) == 1 else label)
        return result

    def score(self, X: Any, eval_metric: Any = "acc", num_batch: int | None = None,  # noqa: N803
              batch_end_callback: Any = None, reset: bool = True) -> float:
        """The value of ``eval_metric`` over ``X`` (a single number, as MXNet returns)."""
        it = self._init_iter(X, None, is_train=False)
        if reset:
            it.reset()
        mod = self._predictor(it)
        m = _metric.create(eval_metric)
        res = mod.score(it, m, num_batch=num_batch, batch_end_callback=batch_end_callback, reset=False)
        return res[0][1]

    # -- checkpoints ---------------------------------------------------------------------------------------
    def save(self, prefix: str, epoch: int | None = None, remove_amp_cast: bool = True) -> None:
        """``PREFIX-symbol.json`` and ``PREFIX-EPOCH.params`` (epoch: ``num_epoch``)."""
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("FeedForward.save needs an epoch")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params or {}, self.aux_params or {},
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix: str, epoch: int, ctx: Any = None, **kwargs: Any) -> "FeedForward":
        """A model from MXNet's checkpoint files (training would continue from ``epoch``)."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params, begin_epoch=epoch,
                           **kwargs)

    @staticmethod
    def create(symbol: Any, X: Any, y: Any = None, ctx: Any = None, num_epoch: int | None = None,  # noqa: N803
               epoch_size: int | None = None, optimizer: Any = "sgd", initializer: Any = Uniform(0.01),
               eval_data: Any = None, eval_metric: Any = "acc", epoch_end_callback: Any = None,
               batch_end_callback: Any = None, kvstore: Any = "local", logger: Any = None,
               work_load_list: Any = None, eval_end_callback: Any = LogValidationMetricsCallback(),
               eval_batch_end_callback: Any = None, **kwargs: Any) -> "FeedForward":
        """Construct and ``fit`` in one call."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size, optimizer=optimizer,
                            initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric, epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback, kvstore=kvstore, logger=logger,
                  work_load_list=work_load_list, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model


class DataParallelExecutorManager:
    """MXNet's legacy executor manager: executors over ``ctx`` for ``train_data``'s
    shapes, with ``load_data_batch``/``forward``/``backward``/``update_metric`` and the
    parameter arrays per device (on ``DataParallelExecutorGroup``)."""

    def __init__(self, symbol: Any, ctx: Sequence[Any], train_data: DataIter, arg_names: Sequence[str],
                 param_names: Sequence[str], aux_names: Sequence[str], work_load_list: Sequence[float] | None = None,
                 logger: Any = None, sym_gen: Any = None) -> None:
        self.logger = logger or logging
        self.ctx = list(ctx)
        work_load_list = list(work_load_list) if work_load_list is not None else [1] * len(self.ctx)
        if len(work_load_list) != len(self.ctx):
            raise ValueError("Invalid settings for work load.")
        self.arg_names, self.param_names, self.aux_names = list(arg_names), list(param_names), list(aux_names)
        self.symbol, self.sym_gen = symbol, sym_gen
        self._work_load = work_load_list
        self.execgrp = self._group(symbol, train_data.provide_data, train_data.provide_label, None)
        self.execgrp_bucket = {getattr(train_data, "default_bucket_key", None): self.execgrp}
        self.curr_execgrp: DataParallelExecutorGroup | None = None

    def _group(self, symbol: Any, data: Any, label: Any, shared: Any) -> DataParallelExecutorGroup:
        return DataParallelExecutorGroup(symbol, self.ctx, self._work_load, data, label, self.param_names, True,
                                         False, shared, logger=self.logger)

    def install_monitor(self, monitor: Any) -> None:
        if self.sym_gen is not None:
            raise NotImplementedError("Monitoring is not implemented for bucketing")
        self.execgrp.install_monitor(monitor)

    def set_params(self, arg_params: dict, aux_params: dict) -> None:
        self.execgrp.set_params(arg_params, aux_params)

    def copy_to(self, arg_params: dict, aux_params: dict) -> None:
        """Average the devices' parameters into ``arg_params``/``aux_params``."""
        self.execgrp.get_params(arg_params, aux_params)

    @property
    def param_arrays(self) -> list:
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self) -> list:
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self) -> list:
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch: Any) -> None:
        key = getattr(data_batch, "bucket_key", None)
        if self.sym_gen is not None and key not in self.execgrp_bucket:
            self.execgrp_bucket[key] = self._group(self.sym_gen(key), data_batch.provide_data,
                                                   data_batch.provide_label, self.execgrp)
        self.curr_execgrp = self.execgrp_bucket.get(key, self.execgrp) if self.sym_gen is not None else self.execgrp
        self._batch = data_batch

    def forward(self, is_train: bool = False) -> None:
        assert self.curr_execgrp is not None, "load_data_batch first"
        self.curr_execgrp.forward(self._batch, is_train=is_train)

    def backward(self) -> None:
        assert self.curr_execgrp is not None, "load_data_batch first"
        self.curr_execgrp.backward()

    def update_metric(self, metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        assert self.curr_execgrp is not None, "load_data_batch first"
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)
