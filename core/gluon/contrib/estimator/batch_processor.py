"""BatchProcessor: what the Estimator does with one batch.

Subclass it and override ``fit_batch`` / ``evaluate_batch`` to change the step (several
losses, teacher forcing, gradient clipping ...) while keeping the Estimator's loop and
handlers. Both return ``(data, label, pred, loss)``, each a list with one entry per
device; the handlers receive them as ``batch_end`` keywords.
"""
from __future__ import annotations

from typing import Any, Sequence

from .... import autograd
from ...utils import split_and_load

__all__ = ['BatchProcessor']


def _split_batch(batch: Sequence[Any], ctx: list, batch_axis: int = 0) -> tuple[list, list]:
    """Data and label of a ``(data, label, ...)`` batch, each split across ``ctx``."""
    return (split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis),
            split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis))


class BatchProcessor:
    """The default training and evaluation step of :py:class:`Estimator`."""

    def __init__(self) -> None:
        """Stateless; subclasses may keep state of their own."""

    def _get_data_and_label(self, batch: Sequence[Any], ctx: list, batch_axis: int = 0) -> tuple[list, list]:
        """Split a ``(data, label, ...)`` batch across the devices in ``ctx``."""
        return _split_batch(batch, ctx, batch_axis)

    def evaluate_batch(self, estimator: Any, val_batch: Sequence[Any], batch_axis: int = 0) -> tuple:
        """Run ``estimator.val_net`` and ``estimator.val_loss`` on one validation batch.

        Parameters
        ----------
        estimator : Estimator
            The estimator being evaluated.
        val_batch : tuple
            Data and label of one batch from the validation DataLoader.
        batch_axis : int, default 0
            Axis along which the batch is split across devices.

        Returns
        -------
        (data, label, pred, loss), lists of NDArray, one entry per device.
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator: Any, train_batch: Sequence[Any], batch_axis: int = 0) -> tuple:
        """Forward and backward of ``estimator.net`` and ``estimator.loss`` on one batch.

        The weights are not updated here: the ``GradientUpdateHandler`` does that at batch
        end, so that a handler can inspect or change the gradients first.

        Parameters
        ----------
        estimator : Estimator
            The estimator being trained.
        train_batch : tuple
            Data and label of one batch from the training DataLoader.
        batch_axis : int, default 0
            Axis along which the batch is split across devices (``split_and_load``).

        Returns
        -------
        (data, label, pred, loss), lists of NDArray, one entry per device.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for device_loss in loss:
            device_loss.backward()
        return data, label, pred, loss
