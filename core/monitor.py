"""``mx.monitor``: statistics of an executor's arrays while it runs (MXNet 1.x's
``Monitor``).

``Monitor(interval, stat_func, pattern, sort, monitor_all)`` installs a callback on
executors (``install``); between ``tic()`` and ``toc()`` of every ``interval``-th batch
it collects ``stat_func`` of each node output (and inputs with ``monitor_all``, and input
gradients during backward) whose name matches ``pattern``, then of the arguments and
auxiliary states. ``toc()`` returns ``(batch, name, text)`` triples; ``toc_print()`` logs
them. The default statistic is ``norm(x) / sqrt(x.size)``.
"""
from __future__ import annotations

import logging
import re
from math import sqrt
from typing import Any, Callable

from .base import py_str
from .ndarray import NDArray, op_function

__all__ = ["Monitor", "sqrt"]


def _default_stat(x: NDArray) -> NDArray:
    """``|x| / sqrt(size)`` (computed asynchronously)."""
    return op_function("norm")(x) / sqrt(x.size)  # type: ignore[misc]


class Monitor:
    """Monitor inputs, outputs, weights and gradients of executors for debugging.

    ``interval``: batches between collections; ``stat_func``: NDArray -> NDArray (or a
    list of them); ``pattern``: regular expression the names must match (``re.match``);
    ``sort``: sort the results by name; ``monitor_all``: node inputs as well as outputs.
    """

    def __init__(self, interval: int, stat_func: Callable[[NDArray], Any] | None = None, pattern: str = ".*",
                 sort: bool = False, monitor_all: bool = False) -> None:
        if int(interval) < 1:
            raise ValueError(f"Monitor: interval must be >= 1, got {interval}")
        self.stat_func = stat_func if stat_func is not None else _default_stat
        self.interval = int(interval)
        self.activated = False
        self.queue: list[tuple[int, str, Any]] = []
        self.step = 0
        self.exes: list[Any] = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name: Any, array: NDArray) -> None:
        """The executor callback: queue the statistic of ``array`` when collecting."""
        name = py_str(name)
        if not self.activated or not self.re_prog.match(name):
            return
        self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe: Any) -> None:
        """Install the callback on executor ``exe`` (several executors may share one
        monitor)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait_params(self) -> None:
        for exe in self.exes:
            for array in list(exe.arg_arrays) + list(exe.aux_arrays):
                array.wait_to_read()

    def tic(self) -> None:
        """Start collecting for the current batch (call before ``forward``)."""
        if self.step % self.interval == 0:
            self._wait_params()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """Stop collecting; ``(batch, name, statistic text)`` for every collected array,
        then for every argument and auxiliary state matching the pattern."""
        if not self.activated:
            return []
        self._wait_params()
        for exe in self.exes:
            sym = exe._symbol
            for name, array in zip(sym.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(sym.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, v_list in self.queue:
            if isinstance(v_list, NDArray):
                v_list = [v_list]
            if not isinstance(v_list, list) or not all(isinstance(v, NDArray) for v in v_list):
                raise TypeError(f"Monitor: stat_func must return an NDArray or a list of NDArrays, got "
                                f"{type(v_list).__name__} for {k!r}")
            s = ""
            for v in v_list:
                s += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
            res.append((n, k, s))
        self.queue = []
        return res

    def toc_print(self) -> None:
        """``toc()`` and log each result at INFO level, as MXNet."""
        for n, k, v in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(n, k, v))
