"""The autograd tape, below the arrays: what NDArray calls record and autograd replays.

``plexnet.ndarray`` records every operator call made under ``autograd.record()`` here
(``record_op``, ``record_simple``, ``record_view``) and reads the per-thread flags
(``STATE``); ``plexnet.autograd`` sits above the arrays and walks the tape backwards.
The one thing an array needs from that upper layer, running the backward pass
(``NDArray.backward``), is an up-call (``plexnet.upcalls.BACKWARD``).
"""
from __future__ import annotations

from .nodes import (Leaf, OpNode, SimpleNode, TapeNode, ViewNode, check_inplace, copy_into, describe, fill,
                    grad_of, mark_variable, record_op, record_simple, record_view, small_prop)
from .state import STATE

__all__ = [
    "STATE", "Leaf", "OpNode", "SimpleNode", "TapeNode", "ViewNode", "check_inplace", "copy_into", "describe",
    "fill", "grad_of", "mark_variable", "record_op", "record_simple", "record_view", "small_prop",
]
