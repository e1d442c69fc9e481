"""Training-mode switch for imperative calls (``is_train`` of ``OpContext``).

Full imperative autograd (MXNet's Gluon ``record``/``backward``) is not part of plexnet;
this module provides the mode flags that operators like Dropout and BatchNorm read when
called through ``plexnet.nd``.
"""
from __future__ import annotations

import threading
from typing import Any

__all__ = ["is_training", "set_training", "train_mode", "predict_mode"]

_state = threading.local()


def is_training() -> bool:
    return getattr(_state, "training", False)


def set_training(train_mode: bool) -> bool:
    """Set the mode for this thread; returns the previous one."""
    prev = is_training()
    _state.training = bool(train_mode)
    return prev


class _Mode:
    def __init__(self, training: bool) -> None:
        self.training = training

    def __enter__(self) -> None:
        self.prev = set_training(self.training)

    def __exit__(self, *exc: Any) -> None:
        set_training(self.prev)


def train_mode() -> _Mode:
    """``with autograd.train_mode():`` imperative operators run in training mode."""
    return _Mode(True)


def predict_mode() -> _Mode:
    return _Mode(False)
