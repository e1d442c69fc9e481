"""DataLoader worker processes and the shared-memory transport of their batches.

Each worker is a forked process with its own task pipe and result pipe. A batch is
built in the worker (``batchify_fn`` over ``dataset[i]``), its arrays are written into
one ``multiprocessing.shared_memory`` block, and only a small descriptor (block name,
offsets, shapes, dtypes and the nesting) goes through the pipe. The main process copies
the arrays out into NDArrays and unlinks the block at once.

The main process waits with ``multiprocessing.connection.wait`` on the result pipes
*and the workers' sentinels*, so a worker that crashes, calls ``os._exit`` or is
killed (SIGKILL) is noticed as soon as it dies, and the error names it.
"""
from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.connection as mpc
import os
import pickle
import random
import signal
import traceback
import weakref
from multiprocessing import resource_tracker, shared_memory
from typing import Any, Callable

import numpy as np

from ...ndarray import NDArray
from ...ndarray import array as nd_array

_ALIGN = 64


class WorkerError(RuntimeError):
    """A DataLoader worker failed (exception in the worker, death, or timeout)."""


class NDSlot:
    """Samples stacked straight into the transport and received as one NDArray (the
    default collation in a worker: no intermediate ``numpy.stack`` copy)."""

    __slots__ = ("items", "shape", "dtype")

    def __init__(self, items: list) -> None:
        self.items = [np.asarray(i) for i in items]
        self.shape = (len(self.items), *self.items[0].shape)
        self.dtype = np.result_type(*self.items)
        if any(i.shape != self.items[0].shape for i in self.items):
            shapes = sorted({i.shape for i in self.items})
            raise ValueError(f"DataLoader default batchify: samples of different shapes {shapes} cannot be stacked; "
                             f"pass batchify_fn=gluon.data.batchify.Pad() or another batchify_fn")


def _collect(obj: Any, arrays: list) -> Any:
    """The nesting template of ``obj`` with its arrays moved to ``arrays``."""
    if isinstance(obj, NDArray):
        arrays.append(obj.asnumpy())
        return ("nd", len(arrays) - 1)
    if isinstance(obj, NDSlot):
        arrays.append(obj)
        return ("nd", len(arrays) - 1)
    if isinstance(obj, np.ndarray):
        arrays.append(obj)
        return ("np", len(arrays) - 1)
    if isinstance(obj, list):
        return ("list", [_collect(o, arrays) for o in obj])
    if isinstance(obj, tuple):
        return ("tuple", [_collect(o, arrays) for o in obj])
    return ("obj", obj)


class _Segments:
    """A worker's shared-memory blocks, reused once the main process has read them
    (fresh blocks cost a page fault per 4 KiB on both sides)."""

    def __init__(self, keep: int) -> None:
        self.blocks: dict[str, shared_memory.SharedMemory] = {}
        self.free: list[str] = []
        self.keep = keep
        self.retired: list[str] = []

    def get(self, size: int) -> shared_memory.SharedMemory:
        size = max(size, 1)
        for i, name in enumerate(self.free):
            if size <= self.blocks[name].size <= 2 * size:
                return self.blocks[self.free.pop(i)]
        while self.free and len(self.blocks) >= self.keep:
            self._drop(self.free.pop(0))
        rounded = (size + (1 << 16) - 1) >> 16 << 16
        shm = shared_memory.SharedMemory(create=True, size=rounded)
        self.blocks[shm.name] = shm
        return shm

    def _drop(self, name: str) -> None:
        shm = self.blocks.pop(name)
        shm.close()
        shm.unlink()
        self.retired.append(name)

    def release(self, name: str) -> None:
        if name in self.blocks:
            self.free.append(name)

    def close(self) -> None:
        for name in list(self.blocks):
            self._drop(name)


def pack(batch: Any, segments: _Segments | None = None) -> tuple:
    """Write the arrays of ``batch`` into one shared-memory block; returns the
    picklable descriptor ``(block name or None, [(offset, shape, dtype)], template)``."""
    arrays: list = []
    template = _collect(batch, arrays)
    if not arrays:
        return None, [], template
    metas = []
    offset = 0
    for a in arrays:
        nbytes = int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize
        metas.append((offset, tuple(a.shape), np.dtype(a.dtype).str))
        offset += (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
    shm = segments.get(offset) if segments is not None else shared_memory.SharedMemory(create=True, size=max(offset, 1))
    for a, (off, shape, dt) in zip(arrays, metas):
        dst = np.ndarray(shape, dtype=dt, buffer=shm.buf, offset=off)
        if isinstance(a, NDSlot):
            for i, item in enumerate(a.items):
                dst[i] = item
        else:
            dst[...] = a
        del dst
    if segments is None:
        shm.close()
    return shm.name, metas, template


def _rebuild(template: Any, arrays: list, ctx: Any) -> Any:
    kind, val = template
    if kind == "nd":
        return nd_array(arrays[val], ctx=ctx, dtype=arrays[val].dtype)
    if kind == "np":
        return arrays[val].copy()
    if kind == "list":
        return [_rebuild(t, arrays, ctx) for t in val]
    if kind == "tuple":
        return tuple(_rebuild(t, arrays, ctx) for t in val)
    return val


def unpack(desc: tuple, ctx: Any = None, attached: dict | None = None) -> Any:
    """Rebuild a batch from ``pack``'s descriptor (NDArrays on ``ctx``, copies). With
    ``attached`` (name -> mapped block, kept by the caller) the block stays mapped for
    reuse; without, it is unmapped and unlinked."""
    name, metas, template = desc
    if name is None:
        return _rebuild(template, [], ctx)
    shm = attached.get(name) if attached is not None else None
    if shm is None:
        shm = shared_memory.SharedMemory(name=name)
        if attached is not None:
            attached[name] = shm
    views = [np.ndarray(shape, dtype=dt, buffer=shm.buf, offset=off) for off, shape, dt in metas]
    try:
        out = _rebuild(template, views, ctx)
    finally:
        del views
        if attached is None:
            shm.close()
            shm.unlink()
    return out


def discard(desc: tuple) -> None:
    """Free the shared block of a batch nobody will read (not from a reusing worker)."""
    if desc[0] is not None:
        try:
            shm = shared_memory.SharedMemory(name=desc[0])
            shm.close()
            shm.unlink()
        except FileNotFoundError:
            pass


def _worker_loop(dataset: Any, batchify_fn: Callable, tasks: Any, results: Any, seed: int, keep: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's business
    np.random.seed(seed % (1 << 32))
    random.seed(seed)
    try:
        from ... import random as mx_random
        mx_random.seed(seed % (1 << 31))
    except Exception:  # noqa: BLE001 - seeding is best effort; the loop must start
        pass
    segments = _Segments(keep)
    try:
        while True:
            try:
                task = tasks.recv()
            except (EOFError, OSError):
                return
            if task is None:
                return
            if task[0] == "free":
                segments.release(task[1])
                continue
            _, key, indices = task
            try:
                desc = pack(batchify_fn([dataset[i] for i in indices]), segments)
                retired, segments.retired = segments.retired, []
                results.send((key, desc, None, retired))
            except Exception as e:  # noqa: BLE001 - reported to the main process
                results.send((key, None, (_portable(e), f"{type(e).__name__}: {e}\n{traceback.format_exc()}"), []))
    finally:
        segments.close()


def _portable(e: BaseException) -> BaseException | None:
    """``e`` when it survives pickling (so the main process raises the dataset's own error,
    as MXNet's DataLoader does), else None (the main process raises a RuntimeError)."""
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:  # noqa: BLE001 - any unpicklable exception
        return None


#: pools not closed yet: closed at interpreter exit, before multiprocessing's own exit hook
#: (registered earlier, so run later) terminates the daemonic workers, which would leave
#: their shared blocks to the resource tracker ("leaked shared_memory objects" warning)
_LIVE_POOLS: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()


@atexit.register
def _close_live_pools() -> None:
    for pool in list(_LIVE_POOLS):
        pool.close()


class WorkerPool:
    """``num_workers`` forked processes serving ``(key, indices)`` tasks."""

    def __init__(self, num_workers: int, dataset: Any, batchify_fn: Callable, prefetch: int = 2,
                 seed: int | None = None) -> None:
        ctx = multiprocessing.get_context("fork")
        # one resource tracker for all: started here, inherited by the workers, so blocks
        # the workers create are tracked by one process that outlives them
        resource_tracker.ensure_running()
        base = int(seed) if seed is not None else int.from_bytes(os.urandom(4), "little")
        keep = max(2, -(-prefetch // num_workers) + 2)
        self.procs: list = []
        self.task_conns: list = []
        self.result_conns: list = []
        self.pending: list[set] = []
        self.attached: dict[str, shared_memory.SharedMemory] = {}
        for i in range(num_workers):
            t_recv, t_send = ctx.Pipe(duplex=False)
            r_recv, r_send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_worker_loop, args=(dataset, batchify_fn, t_recv, r_send, base + i, keep),
                            daemon=True, name=f"plexnet-dataloader-{i}")
            p.start()
            t_recv.close()
            r_send.close()
            self.procs.append(p)
            self.task_conns.append(t_send)
            self.result_conns.append(r_recv)
            self.pending.append(set())
        self._next = 0
        self.closed = False
        _LIVE_POOLS.add(self)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def submit(self, key: Any, indices: list) -> None:
        n = len(self.procs)
        w = min(range(n), key=lambda i: (len(self.pending[i]), (i - self._next) % n))
        self._next = (w + 1) % n
        self.pending[w].add(key)
        try:
            self.task_conns[w].send(("task", key, list(indices)))
        except OSError:  # its end of the pipe is gone: the worker died
            raise self._dead(w) from None

    def consume(self, w: int, desc: tuple, ctx: Any = None) -> Any:
        """The batch of ``desc`` (from worker ``w``) as NDArrays; its block goes back to ``w``."""
        try:
            return unpack(desc, ctx, self.attached)
        finally:
            self.drop(w, desc)

    def drop(self, w: int, desc: tuple) -> None:
        if desc is not None and desc[0] is not None and not self.closed:
            try:
                self.task_conns[w].send(("free", desc[0]))
            except OSError:
                pass

    def _dead(self, w: int) -> WorkerError:
        p = self.procs[w]
        p.join(timeout=1)
        code = p.exitcode
        how = (f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0 else
               f"exit code {code}")
        return WorkerError(f"DataLoader worker {w} (pid {p.pid}) exited unexpectedly ({how}) while "
                           f"{len(self.pending[w])} batch(es) were pending; the data loading cannot go on. "
                           f"Check the dataset/batchify_fn for crashes or memory exhaustion.")

    def _drain(self, w: int, out: list) -> None:
        c = self.result_conns[w]
        while c.poll():
            key, desc, err, retired = c.recv()
            for name in retired:
                shm = self.attached.pop(name, None)
                if shm is not None:
                    shm.close()
            self.pending[w].discard(key)
            out.append((key, desc, err, w))

    def receive(self, timeout: float) -> list[tuple]:
        """``(key, desc, error, worker)`` of the results ready within ``timeout`` seconds
        (``[]`` on timeout); raises ``WorkerError`` when a worker has died."""
        conns = {c: i for i, c in enumerate(self.result_conns)}
        sentinels = {p.sentinel: i for i, p in enumerate(self.procs)}
        ready = mpc.wait(list(conns) + list(sentinels), timeout=timeout)
        out: list = []
        died = []
        for r in ready:
            if r in conns:
                try:
                    self._drain(conns[r], out)
                except (EOFError, OSError):
                    died.append(conns[r])
            else:
                died.append(sentinels[r])
        for w in died:
            try:  # results sent before it died are still good
                self._drain(w, out)
            except (EOFError, OSError):
                pass
            if self.pending[w] or not self.procs[w].is_alive():
                for _, desc, _, ww in out:
                    self.drop(ww, desc)
                raise self._dead(w)
        return out

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for c in self.task_conns:
            try:
                c.send(None)
            except OSError:
                pass
        for p in self.procs:
            p.join(timeout=1)
            if p.is_alive():
                p.terminate()
                p.join(timeout=1)
        for shm in self.attached.values():
            try:
                shm.close()
            except BufferError:  # a view still exported; the mapping goes with the process
                pass
        self.attached.clear()
        for c in self.result_conns + self.task_conns:
            c.close()
