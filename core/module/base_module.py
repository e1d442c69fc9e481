"""``BaseModule``: the training front end shared by every module (MXNet 1.x API).

A module goes through ``bind`` (allocate executors for given input shapes) ->
``init_params`` -> ``init_optimizer`` and then ``forward`` / ``backward`` / ``update``;
``fit``, ``score``, ``predict`` and ``iter_predict`` drive those over data iterators.

Differences from MXNet, on purpose:

* ``fit`` shows a progress bar per epoch (tqdm, when installed and the output is a
  terminal; ``progress=True/False`` forces it) and logs the epoch's throughput
  (``Epoch[0] Speed=... samples/sec``) at DEBUG level, after MXNet's ``Train-...`` and
  ``Time cost`` lines (so the INFO log is MXNet's, line for line). The figures of the
  last ``fit`` are kept in ``last_fit_stats``.
* Errors say what to do: a missing ``num_epoch``, inputs whose names do not match the
  symbol, parameters missing from ``arg_params``.
"""
from __future__ import annotations

import logging
import math
import os
import sys
import time
import warnings
from typing import Any, Iterator, Sequence

import numpy as np

from .. import metric
from ..initializer import Uniform
from ..model import BatchEndParam

__all__ = ["BaseModule", "BatchEndParam", "ModuleStateError"]


def _as_list(obj: Any) -> list:
    if isinstance(obj, (list, tuple)):
        return list(obj)
    return [obj]


def _check_input_names(symbol: Any, names: Sequence[str], typename: str, throw: bool) -> None:
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = (f"You created Module with Module(..., {typename}_names={list(names)}) but input with name "
               f"{name!r} is not found in symbol.list_arguments(). Did you mean one of:\n\t"
               + "\n\t".join(candidates))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _check_names_match(data_names: Sequence[str], data_shapes: Sequence[Any], name: str, throw: bool) -> None:
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = (f"Data provided by {name}_shapes don't match names specified by {name}_names "
               f"({list(data_shapes)} vs. {list(data_names)})")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _parse_data_desc(data_names: Sequence[str], label_names: Sequence[str], data_shapes: Sequence[Any],
                     label_shapes: Sequence[Any] | None) -> tuple[list, list | None]:
    from ..io import DataDesc
    data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _num_batches(data_iter: Any) -> int | None:
    """How many batches one pass of ``data_iter`` yields, when it can tell."""
    for attr in ("num_batches", "num_batch"):
        v = getattr(data_iter, attr, None)
        if isinstance(v, int) and v > 0:
            return v
    n = getattr(data_iter, "num_data", None)
    bs = getattr(data_iter, "batch_size", None)
    if isinstance(n, int) and isinstance(bs, int) and bs > 0:
        handle = getattr(data_iter, "last_batch_handle", "pad")
        return n // bs if handle == "discard" else int(math.ceil(n / bs))
    try:
        return len(data_iter)
    except TypeError:
        return None


def _batch_samples(batch: Any) -> int:
    if isinstance(batch, list):
        return sum(_batch_samples(b) for b in batch)
    data = getattr(batch, "data", None) or []
    n = int(data[0].shape[0]) if data else 0
    return max(n - int(getattr(batch, "pad", 0) or 0), 0)


class ModuleStateError(RuntimeError, AssertionError):
    """A module method called before what it needs (bind, init_params, init_optimizer):
    MXNet checks these with ``assert``, so this is an AssertionError too."""


class _Progress:
    """A per-epoch tqdm bar, or nothing (plain logging only)."""

    def __init__(self, enabled: Any, epoch: int, total: int | None) -> None:
        self.bar = None
        if enabled is False:
            return
        if enabled is None:
            env = os.environ.get("PLEXNET_PROGRESS", "").strip().lower()
            if env in ("0", "false", "no", "off"):
                return
            if env not in ("1", "true", "yes", "on") and not _isatty(sys.stderr):
                return
        try:
            from tqdm import tqdm  # the training front end's optional dependency
        except ImportError:
            return
        self.bar = tqdm(total=total, desc=f"Epoch {epoch}", unit="batch", leave=False, dynamic_ncols=True,
                        file=sys.stderr)
        self._last = 0.0

    def update(self, samples_per_sec: float, eval_metric: Any) -> None:
        if self.bar is None:
            return
        self.bar.update(1)
        now = time.time()
        if now - self._last > 0.25:
            self._last = now
            post = {"samples/s": f"{samples_per_sec:.0f}"}
            try:
                for name, val in eval_metric.get_global_name_value():
                    post[str(name)] = f"{val:.4f}"
            except Exception:  # noqa: BLE001 - a progress bar must not break training
                pass
            self.bar.set_postfix(post, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _isatty(f: Any) -> bool:
    try:
        return bool(f.isatty())
    except (AttributeError, ValueError):
        return False


class BaseModule:
    """The module interface (see the module docstring)."""

    def __init__(self, logger: Any = logging) -> None:
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol: Any = None
        self._total_exec_bytes = 0
        #: figures of the last ``fit``: epochs, samples, seconds, samples_per_sec, per-epoch list
        self.last_fit_stats: dict[str, Any] = {}

    # -- high level --------------------------------------------------------------------------
    def forward_backward(self, data_batch: Any) -> None:
        """``forward(is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data: Any, eval_metric: Any, num_batch: int | None = None,
              batch_end_callback: Any = None, score_end_callback: Any = None, reset: bool = True,
              epoch: int = 0, sparse_row_id_fn: Any = None) -> list[tuple[str, float]]:
        """Evaluate ``eval_metric`` over ``eval_data``; returns ``[(name, value)]``.

        As in MXNet, a padded last batch is scored whole (its padding included); use
        ``predict`` (which drops padding) for exact figures on such iterators."""
        assert self.binded and self.params_initialized, "bind and init_params before score"
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch], pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch, eval_metric=eval_metric,
                                   locals=locals())
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data: Any, num_batch: int | None = None, reset: bool = True,
                     sparse_row_id_fn: Any = None) -> Iterator[tuple[list, int, Any]]:
        """Yield ``(outputs, nbatch, batch)`` per batch, padding removed."""
        assert self.binded and self.params_initialized, "bind and init_params before iter_predict"
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield (outputs, nbatch, eval_batch)

    def predict(self, eval_data: Any, num_batch: int | None = None, merge_batches: bool = True,
                reset: bool = True, always_output_list: bool = False, sparse_row_id_fn: Any = None) -> Any:
        """Outputs over ``eval_data`` (a DataIter, NDArray or numpy array): batches are
        concatenated (``merge_batches``) and padding removed."""
        from .. import nd
        from ..io import DataBatch, DataIter
        assert self.binded and self.params_initialized, "bind and init_params before predict"
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("eval_data must be of type NDArray or DataIter")
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad].copy() for out in self.get_outputs()]
            output_list.append(outputs)
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            for out in output_list:
                if len(out) != num_outputs:
                    raise ValueError("Cannot merge batches, as num of outputs is not the same in mini-batches. "
                                     "Maybe bucketing is used?")
            merged = [_concat([out[i] for out in output_list]) for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data: Any, eval_data: Any = None, eval_metric: Any = "acc",
            epoch_end_callback: Any = None, batch_end_callback: Any = None, kvstore: Any = "local",
            optimizer: Any = "sgd", optimizer_params: Any = (("learning_rate", 0.01),),
            eval_end_callback: Any = None, eval_batch_end_callback: Any = None,
            initializer: Any = Uniform(0.01), arg_params: dict | None = None, aux_params: dict | None = None,
            allow_missing: bool = False, force_rebind: bool = False, force_init: bool = False,
            begin_epoch: int = 0, num_epoch: int | None = None, validation_metric: Any = None,
            monitor: Any = None, sparse_row_id_fn: Any = None, *, progress: Any = None) -> None:
        """Train on ``train_data`` for epochs ``begin_epoch .. num_epoch - 1`` (MXNet's
        ``Module.fit``). ``progress``: ``None`` shows a tqdm bar when stderr is a
        terminal (or ``PLEXNET_PROGRESS=1``), ``True`` always (when tqdm is installed),
        ``False`` never."""
        if num_epoch is None:
            raise ValueError("fit: please specify the number of epochs (num_epoch=...)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        stats: dict[str, Any] = {"epochs": [], "samples": 0, "seconds": 0.0}
        self.last_fit_stats = stats
        total_batches = _num_batches(train_data)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            samples = 0
            bar = _Progress(progress, epoch, total_batches)
            try:
                data_iter = iter(train_data)
                end_of_batch = False
                try:
                    next_data_batch = next(data_iter)
                except StopIteration:
                    raise ValueError(f"fit: the training iterator yielded no batch in epoch {epoch} "
                                     f"(was it reset?)") from None
                eval_name_vals: list = []
                while not end_of_batch:
                    data_batch = next_data_batch
                    if monitor is not None:
                        monitor.tic()
                    self.forward_backward(data_batch)
                    self.update()
                    if isinstance(data_batch, list):
                        self.update_metric(eval_metric, [db.label for db in data_batch], pre_sliced=True)
                    else:
                        self.update_metric(eval_metric, data_batch.label)
                    samples += _batch_samples(data_batch)
                    try:
                        next_data_batch = next(data_iter)
                        self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                    except StopIteration:
                        end_of_batch = True
                    if monitor is not None:
                        monitor.toc_print()
                    if end_of_batch:
                        eval_name_vals = eval_metric.get_global_name_value()
                    if batch_end_callback is not None:
                        params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                               locals=locals())
                        for callback in _as_list(batch_end_callback):
                            callback(params)
                    nbatch += 1
                    bar.update(samples / max(time.time() - tic, 1e-9), eval_metric)
            finally:
                bar.close()
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            toc = time.time()
            speed = samples / max(toc - tic, 1e-9)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, (toc - tic))
            self.logger.debug("Epoch[%d] Speed=%.2f samples/sec", epoch, speed)
            ep = {"epoch": epoch, "seconds": toc - tic, "samples": samples, "samples_per_sec": speed,
                  "train": dict(eval_name_vals)}
            stats["samples"] += samples
            stats["seconds"] += toc - tic

            arg_params_, aux_params_ = self.get_params()
            self.set_params(arg_params_, aux_params_)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params_, aux_params_)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
                ep["validation"] = dict(res)
            stats["epochs"].append(ep)
            train_data.reset()
        stats["samples_per_sec"] = stats["samples"] / max(stats["seconds"], 1e-9)

    # -- the interface -----------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        raise NotImplementedError()

    @property
    def output_names(self) -> list[str]:
        raise NotImplementedError()

    @property
    def data_shapes(self) -> list:
        raise NotImplementedError()

    @property
    def label_shapes(self) -> list | None:
        raise NotImplementedError()

    @property
    def output_shapes(self) -> list:
        raise NotImplementedError()

    def get_params(self) -> tuple[dict, dict]:
        raise NotImplementedError()

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        raise NotImplementedError()

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)

    def save_params(self, fname: str) -> None:
        """Save ``arg:``/``aux:`` parameters to ``fname`` (MXNet format, atomically)."""
        from ..model import save_params
        arg_params, aux_params = self.get_params()
        save_params(fname, arg_params, aux_params)

    def load_params(self, fname: str) -> None:
        from .. import nd
        save_dict = nd.load(fname)
        arg_params: dict = {}
        aux_params: dict = {}
        for k, value in save_dict.items():
            arg_type, _, name = k.partition(":")
            if arg_type == "arg":
                arg_params[name] = value
            elif arg_type == "aux":
                aux_params[name] = value
            else:
                raise ValueError(f"Invalid param file {fname}: key {k!r} is neither arg:NAME nor aux:NAME")
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        assert not merge_multi_context
        return []

    def set_states(self, states: Any = None, value: Any = None) -> None:
        assert self.binded and self.params_initialized
        assert not states and not value

    def install_monitor(self, mon: Any) -> None:
        raise NotImplementedError()

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("sparse_row_id_fn is not invoked for BaseModule."), stacklevel=2)

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        raise NotImplementedError()

    def backward(self, out_grads: Any = None) -> None:
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        raise NotImplementedError()

    def update(self) -> None:
        raise NotImplementedError()

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        raise NotImplementedError()

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        raise NotImplementedError()

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        raise NotImplementedError()

    @property
    def symbol(self) -> Any:
        return self._symbol


def _concat(arrays: list) -> Any:
    from .. import nd
    if len(arrays) == 1:
        return arrays[0]
    return nd.concat(*arrays, dim=0)
