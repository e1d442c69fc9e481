"""Dynamic loss scaling for AMP (MXNet 1.9.1's ``LossScaler``)."""
from __future__ import annotations

import logging
from typing import Any, Sequence

from ... import autograd
from ... import ndarray as nd

__all__ = ["LossScaler"]

#: gradients checked per multi_all_finite call (MXNet's chunk size)
_CHUNK = 200


class LossScaler:
    """The loss scale starts at 2**16; an overflow halves it (for the next step), 2000
    overflow-free steps in a row double it, up to 2**24. The scale a step uses is the one
    decided by the previous check, as MXNet's."""

    def __init__(self) -> None:
        self._loss_scale = 2.0 ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.0 ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self) -> float:
        """The current loss scale."""
        return self._loss_scale

    def has_overflow(self, params: Sequence[Any]) -> bool:
        """True when a gradient of ``params`` (Parameters) holds an inf or a nan; updates
        the scale as described in the class docstring."""
        grads = [g for p in params if p.grad_req != "null" and p._grad is not None for g in p.list_grad()]
        finite = True
        if grads:
            with autograd.pause():
                ok = nd.ones((1,), ctx=grads[0].context)
                for i in range(0, len(grads), _CHUNK):
                    chunk = grads[i:i + _CHUNK]
                    nd.multi_all_finite(*chunk, num_arrays=len(chunk), init_output=False, out=ok)
                finite = bool(ok.asnumpy()[0])
        overflow = not finite
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
