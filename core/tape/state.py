"""Per-thread autograd flags: recording (build the tape) and training (``is_train``).

A ``threading.local`` subclass with class defaults, so that reading a flag on the hot
path (every imperative operator call) is one attribute lookup.
"""
from __future__ import annotations

import threading

__all__ = ["STATE"]


class _State(threading.local):
    recording = False
    training = False


STATE = _State()
