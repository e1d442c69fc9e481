"""Training callbacks (MXNet 1.x ``mx.callback``).

Batch-end callbacks receive a ``BatchEndParam(epoch, nbatch, eval_metric, locals)``;
epoch-end callbacks receive ``(epoch, symbol, arg_params, aux_params)``.
"""
from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable

from .model import save_checkpoint

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer", "ProgressBar",
           "LogValidationMetricsCallback"]


def module_checkpoint(mod: Any, prefix: str, period: int = 1,
                      save_optimizer_states: bool = False) -> Callable[..., None]:
    """Epoch-end callback: ``mod.save_checkpoint(prefix, epoch + 1)`` every ``period``
    epochs (optionally with the optimizer states)."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix: str, period: int = 1) -> Callable[..., None]:
    """Epoch-end callback: save ``PREFIX-symbol.json`` and ``PREFIX-%04d.params`` (epoch
    + 1) every ``period`` epochs, atomically (see ``plexnet.model``)."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any, arg: dict, aux: dict) -> None:
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable[[Any], None]:
    """Batch-end callback: log the training metric every ``period`` batches
    (``auto_reset``: then clear its local counters)."""
    def _callback(param: Any) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Batch-end callback: every ``frequent`` batches log the throughput (samples/s) and
    the training metric; ``auto_reset`` clears the metric's local counters after each
    log, so each line covers the last ``frequent`` batches (the epoch-end figures use the
    global counters and still cover the whole epoch)."""

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.auto_reset = auto_reset
        #: the last speed measured (samples/s), for programs that want the figure
        self.last_speed: float | None = None

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if self.init:
            if count % self.frequent == 0:
                try:
                    speed = self.frequent * self.batch_size / (time.time() - self.tic)
                except ZeroDivisionError:
                    speed = float("inf")
                self.last_speed = speed
                if param.eval_metric is not None:
                    name_value = param.eval_metric.get_name_value()
                    if self.auto_reset:
                        param.eval_metric.reset_local()
                        msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec"
                        msg += "\t%s=%f" * len(name_value)
                        logging.info(msg, param.epoch, count - self.frequent, count, speed,
                                     *sum(name_value, ()))
                    else:
                        msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec"
                        msg += "\t%s=%f" * len(name_value)
                        logging.info(msg, param.epoch, count, speed, *sum(name_value, ()))
                else:
                    logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
                self.tic = time.time()
        else:
            self.init = True
            self.tic = time.time()


class ProgressBar:
    """Batch-end callback: a text progress bar in the log."""

    def __init__(self, total: int, length: int = 80) -> None:
        self.bar_len = length
        self.total = total

    def __call__(self, param: Any) -> None:
        count = param.nbatch
        filled_len = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = "=" * filled_len + "-" * (self.bar_len - filled_len)
        logging.info("[%s] %s%s\r", prog_bar, percents, "%")


class LogValidationMetricsCallback:
    """Eval-end callback: log the validation metric."""

    def __call__(self, param: Any) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
