"""CheckpointHandler: periodic parameter/trainer-state files, the best model, rotation of
old files and resuming an interrupted run.

Files in ``model_dir`` (MXNet 1.9.1's names, which ``resume_from_checkpoint`` parses):

* ``<prefix>-symbol.json``: the graph, once, after the first batch (hybridized nets only);
* ``<prefix>-epoch<E>batch<B>.params`` / ``.states``: net parameters and trainer states;
* ``<prefix>-best.params`` / ``.states``: the best so far by ``monitor`` (``save_best``).
"""
from __future__ import annotations

import os
import re
import warnings
from typing import Any

import numpy as np

from ....metric import EvalMetric
from .events import BatchEnd, EpochEnd, TrainBegin
from .utils import _improvement_op, _worst

_PARSE_ERROR = ("Error parsing checkpoint file, please check your checkpoints have the format: "
                "{model_name}-epoch{epoch_number}batch{batch_number}.params, "
                "there should also be a .states file for each .params file ")


def _checkpoints_in(model_dir: str, model_prefix: str) -> list[tuple[int, int]]:
    """(epoch, batch) of every ``<prefix>-epoch<E>batch<B>.params`` in ``model_dir``."""
    head = model_prefix + '-epoch'
    pattern = re.compile(re.escape(head) + r'(\d+)batch(\d+)\.params')
    found = []
    for fname in os.listdir(model_dir):
        if fname.startswith(head) and '.params' in fname:
            match = pattern.match(fname)
            if match is None:
                raise ValueError(_PARSE_ERROR)
            found.append((int(match.group(1)), int(match.group(2))))
    return found


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the model every ``epoch_period`` epochs or ``batch_period`` batches.

    Parameters
    ----------
    model_dir : str
        Directory for all files (created if missing).
    model_prefix : str, default 'model'
        Prefix of every file name.
    monitor : EvalMetric, default None
        Metric that decides the best model (required with ``save_best``).
    verbose : int, default 0
        1: log every save.
    save_best : bool, default False
        Also keep ``<prefix>-best.*``, rewritten whenever ``monitor`` improves.
    mode : {'auto', 'min', 'max'}, default 'auto'
        What improving means for ``monitor``; 'auto' means 'max' (MXNet 1.9.1).
    epoch_period : int, default 1
        Save every this many epochs (None: not by epoch).
    batch_period : int, default None
        Save every this many batches (None: not by batch).
    max_checkpoints : int, default 5
        Checkpoints of this run kept; older ones are deleted (the best is not counted).
    resume_from_checkpoint : bool, default False
        At train begin, load the latest checkpoint in ``model_dir`` and train only the
        remaining epochs (or batches); the period must be of the same kind as the run's.
    """

    def __init__(self, model_dir: str, model_prefix: str = 'model', monitor: EvalMetric | None = None,
                 verbose: int = 0, save_best: bool = False, mode: str = 'auto', epoch_period: int | None = 1,
                 batch_period: int | None = None, max_checkpoints: int = 5, resume_from_checkpoint: bool = False):
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric objects "
                             "from estimator.train_metrics and estimator.val_metrics as monitor.")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = 0
        self.current_epoch = 0
        # prefixes written by this handler, oldest first (files of earlier runs are left alone)
        self.saved_checkpoints: list[str] = []
        # added to (current_epoch, current_batch) in file names; set at train begin
        self._offset = (0, 0)
        if save_best:
            assert isinstance(monitor, EvalMetric)
            self.monitor_op = _improvement_op(mode, monitor, 'ModelCheckpoint')
            self.best = _worst(self.monitor_op)

    # -------------------------------------------------------------- events

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_epoch = self.current_batch = 0
        if self.save_best:
            self.best = _worst(self.monitor_op)
        self._offset = (0, 0)
        if self.resume_from_checkpoint:
            self._check_periods(estimator)
            self._resume_from_checkpoint(estimator)
            # file numbers continue the earlier run's. (The batch number at an epoch end is
            # a count, at a batch end an index; MXNet 1.9.1's numbering, kept as is.)
            self._offset = (self.trained_epoch + 1,
                            self.trained_batch + (0 if estimator.max_epoch else 1))

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    # -------------------------------------------------------------- saving

    def _save_checkpoint(self, estimator: Any) -> None:
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, self.current_epoch + self._offset[0],
                                        self.current_batch + self._offset[1])
        self._save_params_and_trainer(estimator, prefix)
        self._rotate(prefix)
        if self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: trained total %d batches, '
                                  'saving model at %s with prefix: %s',
                                  self.current_epoch, self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            self._update_best(estimator)

    def _update_best(self, estimator: Any) -> None:
        assert self.monitor is not None  # checked in __init__ (save_best)
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                'Skipping save best because %s is not updated, make sure you pass one of the '
                'metric objects estimator.train_metrics and estimator.val_metrics as monitor',
                name), stacklevel=3)
            return
        if self.monitor_op(value, self.best):
            prefix = self.model_prefix + '-best'
            self._save_params_and_trainer(estimator, prefix)
            self.best = value
            if self.verbose > 0:
                # (MXNet 1.9.1 logs the new value twice: `best` is already updated)
                estimator.logger.info('[Epoch %d] CheckpointHandler: %s improved from %0.5f to %0.5f, '
                                      'updating best model at %s with prefix: %s',
                                      self.current_epoch, name, self.best, value, self.model_dir, prefix)
        elif self.verbose > 0:
            # (the "epoch" shown is the batch counter, as in MXNet 1.9.1)
            estimator.logger.info('[Epoch %d] CheckpointHandler: %s did not improve from %0.5f, '
                                  'skipping updating best model', self.current_batch, name, self.best)

    def _save_symbol(self, estimator: Any) -> None:
        symbol_file = os.path.join(self.model_dir, self.model_prefix + '-symbol.json')
        cached = getattr(estimator.net, '_cached_graph', None)
        if cached:
            cached[1].save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock "
                "to construct your model, and call net.hybridize() before passing to "
                "Estimator in order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator: Any, file_prefix: str) -> None:
        path = os.path.join(self.model_dir, file_prefix)
        estimator.net.save_parameters(path + '.params')
        estimator.trainer.save_states(path + '.states')

    def _rotate(self, prefix: str) -> None:
        """Record a new checkpoint; delete the oldest beyond ``max_checkpoints``."""
        self.saved_checkpoints.append(prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            oldest = os.path.join(self.model_dir, self.saved_checkpoints.pop(0))
            for ext in ('.params', '.states'):
                if os.path.exists(oldest + ext):
                    os.remove(oldest + ext)

    # -------------------------------------------------------------- resuming

    def _check_periods(self, estimator: Any) -> None:
        error_msg = ("To use resume from checkpoint, you must only specify the same type of period you used "
                     "for training.For example, if you are training based on number of epochs,you must save "
                     "only based on epochs, and set batch_period to None.")
        if estimator.max_batch:
            assert self.batch_period and not self.epoch_period, error_msg
        if estimator.max_epoch:
            assert self.epoch_period and not self.batch_period, error_msg

    def _resume_from_checkpoint(self, estimator: Any) -> None:
        """Load the latest checkpoint and shorten ``estimator.max_epoch``/``max_batch`` to
        what remains; sets ``trained_epoch``/``trained_batch`` (-1: none found)."""
        found = _checkpoints_in(self.model_dir, self.model_prefix)
        self.trained_epoch = max((e for e, _ in found), default=-1)
        self.trained_batch = max((b for e, b in found if e == self.trained_epoch), default=-1)
        if self.trained_epoch == -1:
            remaining = ("%d batches" % estimator.max_batch if estimator.max_batch
                         else "%d epochs" % estimator.max_epoch)
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from scratch for " + remaining)
            return

        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to train for "
               % (self.trained_epoch, self.trained_batch))
        # a run counts epochs or batches; the other limit is None. (MXNet's two refusals
        # differ: the batch one shows the trained batch and lacks a space; kept.)
        for unit, plural, trained, space in (("epoch", "epochs", self.trained_epoch, " "),
                                             ("batch", "batches", self.trained_batch, "")):
            limit = getattr(estimator, "max_" + unit)
            if not limit:
                continue
            if trained >= limit - 1:
                raise ValueError("Found checkpoint with maximum number of %s %d reached, please specify%s"
                                 "resume_from_checkpoint=False (default value) if you wan to train from scratch."
                                 % (unit, limit if unit == "epoch" else trained, space))
            setattr(estimator, "max_" + unit, limit - trained - 1)
            msg += "%d %s " % (limit - trained - 1, plural)

        path = os.path.join(self.model_dir, "%s-epoch%dbatch%d" % (self.model_prefix, self.trained_epoch,
                                                                   self.trained_batch))
        for ext in ('.params', '.states'):
            assert os.path.exists(path + ext), "Failed to load checkpoint, %s does not exist" % (path + ext)
        estimator.net.load_parameters(path + '.params', ctx=estimator.context)
        estimator.trainer.load_states(path + '.states')
        estimator.logger.warning(msg)
