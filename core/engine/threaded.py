"""The threaded dependency engines: ``ThreadedEngine`` and ``ThreadedEnginePerDevice``.

Both schedule with MXNet's ``ThreadedVar`` algorithm and run ready operations on worker
threads; they differ in how workers are pooled. The pieces, one module each:

* ``var.py``: the state of one variable and the operation record;
* ``scheduler.py``: dependency bookkeeping under the engine lock (push, grant, finish,
  waits, deletes);
* ``runner.py``: running one operation (observers, errors, skips, async completion);
* ``workers.py``: ready queues and worker threads;
* ``threaded_base.py``: the push API and pool management both engines share;
* ``pooled.py`` (``ThreadedEngine``) and ``per_device.py`` (``ThreadedEnginePerDevice``):
  the pool layouts;
* ``lifecycle.py``: shutdown at exit, reset after ``fork``.

This module keeps the historical import path of the engine classes.
"""
from __future__ import annotations

from .per_device import ThreadedEnginePerDevice
from .pooled import ThreadedEngine
from .threaded_base import ThreadedBase
from .var import ThreadedVar

__all__ = ["ThreadedEngine", "ThreadedEnginePerDevice", "ThreadedVar", "ThreadedBase"]
