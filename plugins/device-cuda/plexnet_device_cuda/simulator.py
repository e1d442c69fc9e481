"""A CPU-backed **CuPy simulator**: a module-shaped stand-in for ``cupy``, on numpy.

SIMULATED — nothing here runs on a GPU, and passing tests under it is *not* GPU
verification. It exists so that the ``gpu`` backend's plumbing and plexnet's
host/device discipline can be exercised in CI on machines without a GPU. It checks
what can be checked without a device:

* **the CuPy namespace** — only names that real CuPy exposes (``cupy_names.json``,
  a snapshot of CuPy 14.2.0: top level, ``linalg``, ``random``, ``fft``,
  ``lib.stride_tricks``, ``cuda``; the methods of ``cupy.ndarray``; which ufunc
  methods such as ``add.at`` / ``maximum.reduce`` CuPy really supports; the keyword
  arguments CuPy's signatures accept). A numpy-only name raises ``AttributeError``
  naming it, a CuPy name the simulator does not implement raises ``AttributeError``
  saying so.
* **host/device discipline** — ``ndarray`` is its own class (not a numpy subclass)
  holding a numpy array and a device id. Implicit conversion to numpy
  (``numpy.asarray(x)``) raises CuPy's ``TypeError``; a host ``numpy.ndarray`` passed
  to a function, ufunc or operator raises ``TypeError`` (``cupy.asarray`` /
  ``cupy.array`` / ``ndarray.set`` are the explicit host->device copies,
  ``.get()`` / ``cupy.asnumpy`` the device->host ones). This is *stricter* than CuPy
  for functions that CuPy forwards to the argument's own methods (``cupy.sum(h)``
  silently returns a numpy result there): such code would run on the host.
* **devices** — ``PLEXNET_CUDA_SIMULATE=<n>`` simulated devices; the current device
  is per thread (0 on a new thread, as in CUDA); arrays are allocated on the current
  device; a kernel touching an array of another device raises CuPy's "Peer access is
  unavailable" ``ValueError`` (``PLEXNET_CUDA_SIMULATE_PEER=1``: allowed with CuPy's
  ``PerformanceWarning``); device memory is accounted (``memGetInfo``, the default
  memory pool, ``cudaErrorMemoryAllocation`` / ``OutOfMemoryError`` when a simulated
  device of ``PLEXNET_CUDA_SIMULATE_MEMORY`` bytes is full).
* **stream ordering** — every kernel, copy and transfer is recorded on the current
  stream (per thread and device, ``Stream.use()``, ``with stream:``). Work runs
  synchronously on the host, but the simulator tracks what a GPU would only know
  after a synchronisation: reading memory written on another stream that was not
  synchronised (``Stream.synchronize``, ``Event`` + ``wait_event``, ``Device.synchronize``,
  the legacy default stream's implicit ordering with *blocking* streams) raises
  ``StreamHazardError`` (``PLEXNET_CUDA_SIMULATE_HAZARDS=warn|off`` to relax) — on a
  GPU such code reads stale data.

What it cannot check: kernels (numerics come from numpy, not CUDA/cuBLAS/cuDNN),
real concurrency between streams and the host, timing, performance, memory
fragmentation, custom kernels (``RawKernel``/``ElementwiseKernel``), cuDNN.
"""
from __future__ import annotations

import collections
import itertools
import numbers
import os
import threading
import types
import warnings
from typing import Any, Callable, Iterable

import numpy as np

from . import cupy_names as _names

ENV = "PLEXNET_CUDA_SIMULATE"
LABEL = "SIMULATED"

_SNAP = _names.load()
CUPY_VERSION: str = _SNAP["cupy_version"]
_MODULES: dict[str, dict[str, Any]] = _SNAP["modules"]
_CLASSES: dict[str, dict[str, Any]] = _SNAP["classes"]
_UFUNC_SUPPORT: dict[str, set[str]] = {k: set(v) for k, v in _SNAP["ufunc_method_support"].items()}
_ERRORS: dict[str, dict[str, Any]] = _SNAP["runtime_errors"]


# =====================================================================================
# errors and warnings
# =====================================================================================
class StreamHazardError(RuntimeError):
    """Simulated race: memory used on a stream (or the host) before the stream that
    last wrote (or read) it was synchronised with it. On a GPU this reads stale data."""


class StreamHazardWarning(RuntimeWarning):
    """``StreamHazardError`` downgraded by ``PLEXNET_CUDA_SIMULATE_HAZARDS=warn``."""


class PerformanceWarning(RuntimeWarning):
    """CuPy's ``cupy._util.PerformanceWarning`` (peer access activated automatically)."""


class NotSimulatedError(NotImplementedError):
    """A CuPy feature that exists but cannot be simulated on the host."""


_STATUS_MESSAGES = {v["status"]: v["message"] for v in _ERRORS.values()}


class CUDARuntimeError(RuntimeError):
    """``cupy.cuda.runtime.CUDARuntimeError`` with CuPy's message for the status."""

    def __init__(self, status: int) -> None:
        self.status = int(status)
        super().__init__(_STATUS_MESSAGES.get(self.status, f"cudaError {self.status}"))

    def __reduce__(self) -> Any:
        return (type(self), (self.status,))


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError`` (raised by the memory pool)."""

    def __init__(self, size: int, total: int, limit: int = 0) -> None:
        self._size, self._total, self._limit = size, total, limit
        if limit == 0:
            msg = "Out of memory allocating {:,} bytes".format(size)
            if total != -1:
                msg += " (allocated so far: {:,} bytes).".format(total)
        else:
            msg = ("Out of memory allocating {:,} bytes (allocated so far: {:,} bytes, "
                   "limit set to: {:,} bytes).".format(size, total, limit))
        super().__init__(msg)

    def __reduce__(self) -> Any:
        return (type(self), (self._size, self._total, self._limit))


_HOST_HINT = (" [CuPy simulator: a host numpy.ndarray cannot be used where CuPy needs a device array; "
              "copy it with cupy.asarray() first]")


def _unsupported(arg: Any) -> TypeError:
    return TypeError(f"Unsupported type {type(arg)}" + (_HOST_HINT if isinstance(arg, np.ndarray) else ""))


def _not_simulated(what: str) -> AttributeError:
    return AttributeError(f"{what} exists in CuPy {CUPY_VERSION} but is not provided by plexnet's CuPy simulator")


def _no_such(modname: str, name: str) -> AttributeError:
    hint = ""
    base = modname.split(".", 1)[1] if "." in modname else ""
    npmod: Any = np
    for part in [p for p in base.split(".") if p]:
        npmod = getattr(npmod, part, None)
    if npmod is not None and hasattr(npmod, name):
        hint = (f" (numpy{'.' + base if base else ''}.{name} exists, but CuPy {CUPY_VERSION} has no "
                f"{modname}.{name}: code that needs it cannot run on a GPU)")
    return AttributeError(f"module '{modname}' has no attribute '{name}'{hint}")


# =====================================================================================
# configuration and runtime state
# =====================================================================================
def _parse_bytes(s: str) -> int:
    s = s.strip().upper()
    mult = 1
    for suf, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if s.endswith(suf + "IB"):
            s, mult = s[:-3], m
            break
        if s.endswith(suf + "B") or s.endswith(suf):
            s, mult = s[: -(len(suf) + (1 if s.endswith(suf + "B") else 0))], m
            break
    return int(float(s) * mult)


def requested_devices(environ: Any = None) -> int:
    """Simulated devices asked for by ``PLEXNET_CUDA_SIMULATE`` (0: simulation off).
    A bad value raises ``ValueError`` naming the variable."""
    env = os.environ if environ is None else environ
    v = str(env.get(ENV, "")).strip()
    if v.lower() in ("", "0", "false", "no", "off"):
        return 0
    if v.lower() in ("true", "yes", "on"):
        return 1
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"{ENV}={v!r}: expected the number of simulated GPUs (e.g. 1 or 2), or 0") from None
    if n < 0:
        raise ValueError(f"{ENV}={v!r}: expected a number >= 0")
    return n


class _SState:
    """Ordering state of one stream on one device (for the hazard checker)."""

    __slots__ = ("label", "dev", "kind", "seq", "done", "clock", "__weakref__")

    def __init__(self, label: str, dev: int, kind: str) -> None:
        self.label = label
        self.dev = dev
        self.kind = kind  # "legacy" | "blocking" | "non-blocking" | "per-thread"
        self.seq = 0       # operations enqueued so far
        self.done = 0      # operations the host knows are finished (synchronised)
        self.clock: dict[_SState, int] = {}  # operations of other streams this one waits for

    def __repr__(self) -> str:
        return self.label


class _Runtime:
    """Process-wide state of the simulated devices."""

    def __init__(self, num_devices: int, memory_bytes: int, peer_access: bool, hazards: str) -> None:
        if hazards not in ("raise", "warn", "off"):
            raise ValueError(f"{ENV}_HAZARDS={hazards!r}: expected raise, warn or off")
        self.n = int(num_devices)
        self.total = int(memory_bytes)
        self.peer = bool(peer_access)
        self.hazards = hazards
        self.lock = threading.RLock()
        self.tls = threading.local()
        self.raw_used = [0] * self.n
        self.pool_used = [0] * self.n
        self.pool_free: list[collections.Counter] = [collections.Counter() for _ in range(self.n)]
        self.pool_limit = [0] * self.n
        self.legacy = [_SState(f"<legacy default stream of device {d}>", d, "legacy") for d in range(self.n)]
        self.blocking: list[Any] = [set() for _ in range(self.n)]  # blocking streams' states (strong refs)
        self.peer_enabled: set[tuple[int, int]] = set()
        self.stats: collections.Counter = collections.Counter()
        self.hazard_log: collections.deque[str] = collections.deque(maxlen=100)  # the latest reports

    # -- current device / stream of the calling thread ------------------------------------
    def device(self) -> int:
        return getattr(self.tls, "dev", 0)

    def set_device(self, d: int) -> None:
        d = int(d)
        if not 0 <= d < self.n:
            raise CUDARuntimeError(101)
        self.tls.dev = d

    def streams(self) -> dict[int, Any]:
        s = getattr(self.tls, "cur", None)
        if s is None:
            s = self.tls.cur = {}
        return s

    def current_stream(self, dev: int | None = None) -> "Stream":
        return self.streams().get(self.device() if dev is None else dev, Stream.null)

    def state_of(self, stream: "Stream", dev: int) -> _SState:
        st = stream._st
        return self.legacy[dev] if st is None else st

    # -- memory ---------------------------------------------------------------------------
    def free_bytes(self, d: int) -> int:
        return self.total - self.raw_used[d] - self.pool_used[d] - sum(
            k * v for k, v in self.pool_free[d].items())

    def pool_alloc(self, d: int, nbytes: int) -> int:
        """Account a pool allocation (CuPy rounds to 512 bytes); returns the rounded size."""
        n = ((int(nbytes) + 511) // 512) * 512
        with self.lock:
            free = self.pool_free[d]
            if free.get(n):
                free[n] -= 1
                if not free[n]:
                    del free[n]
            else:
                lim = self.pool_limit[d]
                if lim and self.pool_used[d] + sum(k * v for k, v in free.items()) + n > lim:
                    free.clear()
                    if self.pool_used[d] + n > lim:
                        raise OutOfMemoryError(n, self.pool_used[d], lim)
                if n > self.free_bytes(d):
                    free.clear()  # CuPy frees the cached blocks and retries once
                    if n > self.free_bytes(d):
                        raise OutOfMemoryError(n, self.pool_used[d])
            self.pool_used[d] += n
        return n

    def pool_release(self, d: int, n: int) -> None:
        with self.lock:
            self.pool_used[d] -= n
            self.pool_free[d][n] += 1

    # -- ordering -------------------------------------------------------------------------
    def _enqueue(self, st: _SState) -> int:
        st.seq += 1
        if st.kind == "legacy":
            for b in self.blocking[st.dev]:
                self._merge(st, b)
        elif st.kind == "blocking":
            self._merge(st, self.legacy[st.dev])
        return st.seq

    @staticmethod
    def _merge(st: _SState, other: _SState) -> None:
        c = st.clock
        if c.get(other, 0) < other.seq:
            c[other] = other.seq
        for k, v in other.clock.items():
            if k is not st and c.get(k, 0) < v:
                c[k] = v

    @staticmethod
    def _ordered(ws: _SState, wn: int, st: _SState) -> bool:
        return ws is st or ws.done >= wn or st.clock.get(ws, 0) >= wn

    def sync(self, st: _SState) -> None:
        """The host waited for every operation enqueued on ``st`` so far."""
        with self.lock:
            st.done = st.seq
            for k, v in st.clock.items():
                if k.done < v:
                    k.done = v
            self.stats["synchronize"] += 1

    def sync_device(self, d: int) -> None:
        with self.lock:
            for st in list(_all_states.values()) + [self.legacy[d]]:
                if st.dev == d:
                    st.done = st.seq
            self.stats["synchronize"] += 1

    def _hazard(self, kind: str, what: str, m: "BaseMemory", other: _SState, n: int, st: _SState) -> None:
        msg = (f"simulated CUDA stream race ({kind}): {what} on {st.label} uses memory of device "
               f"{m.device_id} that {other.label} {'wrote' if kind != 'write-after-read' else 'read'} "
               f"(its operation #{n}), and that stream was not synchronised with this one: on a GPU "
               f"this {'may read stale data' if kind == 'read-after-write' else 'may corrupt data'}. "
               f"Synchronise the other stream (Stream.synchronize(), or record an Event there and "
               f"wait_event() on this one) before using the memory here.")
        self.stats["hazards"] += 1
        self.hazard_log.append(msg)
        if self.hazards == "raise":
            raise StreamHazardError(msg)
        if self.hazards == "warn":
            warnings.warn(msg, StreamHazardWarning, stacklevel=4)

    def record(self, st: _SState, what: str, reads: Iterable["BaseMemory"], writes: Iterable["BaseMemory"],
               fresh: Iterable["BaseMemory"] = ()) -> None:
        """Enqueue one operation on ``st`` that reads/writes these allocations."""
        if self.hazards == "off":
            return
        with self.lock:
            n = self._enqueue(st)
            ordered = self._ordered
            reads = list(reads)
            writes = list(writes)
            for m in reads:
                w = m._w
                if w is not None and not ordered(w[0], w[1], st):
                    self._hazard("read-after-write", what, m, w[0], w[1], st)
            for m in writes:
                w = m._w
                if w is not None and not ordered(w[0], w[1], st):
                    self._hazard("write-after-write", what, m, w[0], w[1], st)
                r = m._r
                if r:
                    for rs, rn in r.items():
                        if not ordered(rs, rn, st):
                            self._hazard("write-after-read", what, m, rs, rn, st)
            for m in reads:
                r = m._r
                if r is None:
                    m._r = {st: n}
                else:
                    r[st] = n
            w = (st, n)
            for m in writes:
                m._w = w
                m._r = None
            for m in fresh:
                m._w = w

    # -- kernels --------------------------------------------------------------------------
    def check_device(self, m: "BaseMemory", dev: int) -> None:
        d = m.device_id
        if d == dev:
            return
        msg = f"The device where the array resides ({d}) is different from the current device ({dev})."
        if not self.peer:
            raise ValueError(f"{msg} Peer access is unavailable between these devices.")
        if (dev, d) not in self.peer_enabled:
            self.peer_enabled.add((dev, d))
            warnings.warn(f"{msg} Peer access has been activated automatically.", PerformanceWarning,
                          stacklevel=4)

    def kernel(self, what: str, reads: list["ndarray"], writes: list["ndarray"],
               fresh: list["ndarray"]) -> None:
        dev = self.device()
        for x in reads:
            if x._m.device_id != dev:
                self.check_device(x._m, dev)
        for x in writes:
            if x._m.device_id != dev:
                self.check_device(x._m, dev)
        self.stats["kernels"] += 1
        if self.hazards != "off":
            st = self.state_of(self.current_stream(dev), dev)
            self.record(st, what, [x._m for x in reads], [x._m for x in writes], [x._m for x in fresh])


_all_states: "dict[int, _SState]" = {}  # stream ptr -> state of every non-legacy stream

_RT: _Runtime = None  # type: ignore[assignment]


def _config_from_env(num_devices: int | None = None) -> dict[str, Any]:
    n = requested_devices() if num_devices is None else num_devices
    mem = os.environ.get(f"{ENV}_MEMORY", "").strip()
    peer = os.environ.get(f"{ENV}_PEER", "0").strip().lower() not in ("", "0", "false", "no", "off")
    hazards = os.environ.get(f"{ENV}_HAZARDS", "raise").strip().lower() or "raise"
    return {"num_devices": max(1, n), "memory_bytes": _parse_bytes(mem) if mem else 2 << 30,
            "peer_access": peer, "hazards": hazards}


def reset(num_devices: int | None = None, memory_bytes: int | None = None, peer_access: bool | None = None,
          hazards: str | None = None) -> "_Runtime":
    """(Re)initialise the simulated devices. Arguments default to the environment
    (``PLEXNET_CUDA_SIMULATE``, ``..._MEMORY``, ``..._PEER``, ``..._HAZARDS``). Arrays made
    before a reset keep their (old) accounting; tests reset between cases."""
    global _RT
    cfg = _config_from_env(num_devices)
    if memory_bytes is not None:
        cfg["memory_bytes"] = int(memory_bytes)
    if peer_access is not None:
        cfg["peer_access"] = bool(peer_access)
    if hazards is not None:
        cfg["hazards"] = hazards
    _all_states.clear()
    _RT = _Runtime(**cfg)
    return _RT


def runtime_state() -> _Runtime:
    return _RT


def stats() -> dict[str, int]:
    """Counters of the simulated runtime: kernels, h2d/d2h/d2d copies, synchronize,
    hazards (only non-zero with ``PLEXNET_CUDA_SIMULATE_HAZARDS=warn``)."""
    return dict(_RT.stats)


# =====================================================================================
# memory
# =====================================================================================
def _bytes(buf: np.ndarray) -> np.ndarray:
    """The bytes of a (contiguous) buffer as a 1-D uint8 view."""
    if buf.ndim == 1 and buf.dtype == np.uint8:
        return buf
    return buf.reshape(-1, order="A").view(np.uint8)


class BaseMemory:
    """Device memory: a host buffer standing in for it, its device, and the ordering
    record of the last write / reads since (the hazard checker's unit)."""

    __slots__ = ("_buf", "size", "device_id", "_w", "_r", "_n", "_rt", "__weakref__")

    def _init(self, buf: np.ndarray, size: int, dev: int) -> None:
        self._rt = _RT
        self._buf = buf
        self.size = int(size)
        self.device_id = int(dev)
        self._w: tuple[_SState, int] | None = None
        self._r: dict[_SState, int] | None = None
        self._n = 0

    @property
    def ptr(self) -> int:
        return int(self._buf.__array_interface__["data"][0]) if self._buf is not None else 0

    @property
    def device(self) -> "Device":
        return Device(self.device_id)

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.size} bytes on simulated device {self.device_id}>"


class Memory(BaseMemory):
    """``cupy.cuda.Memory(size)``: a direct ``cudaMalloc`` on the current device (not
    pooled; a full device raises ``CUDARuntimeError`` cudaErrorMemoryAllocation, as
    ``runtime.malloc`` does)."""

    __slots__ = ()

    def __init__(self, size: int) -> None:
        rt = _RT
        d = rt.device()
        size = int(size)
        with rt.lock:
            if size > rt.free_bytes(d):
                raise CUDARuntimeError(2)
            rt.raw_used[d] += size
        self._init(np.empty(max(size, 1), np.uint8), size, d)
        self._n = size
        rt.stats["malloc"] += 1

    def __del__(self) -> None:
        rt = getattr(self, "_rt", None)
        n = getattr(self, "_n", 0)
        if n and rt is not None and self.device_id < rt.n:
            with rt.lock:
                rt.raw_used[self.device_id] -= n
            self._n = 0


class PooledMemory(BaseMemory):
    """An allocation of the (simulated) default memory pool: every array an operation
    creates. Freed to the pool's cache when the last array using it goes."""

    __slots__ = ()

    def __init__(self, buf: np.ndarray, dev: int) -> None:
        self._init(buf, buf.nbytes, dev)
        self._n = self._rt.pool_alloc(dev, buf.nbytes) if buf.nbytes else 0

    def __del__(self) -> None:
        n = getattr(self, "_n", 0)
        rt = getattr(self, "_rt", None)
        if n and rt is not None and self.device_id < rt.n:
            rt.pool_release(self.device_id, n)
            self._n = 0


class UnownedMemory(BaseMemory):
    """``cupy.cuda.UnownedMemory(ptr, size, owner, device_id)``: only for simulated
    buffers (``owner`` must be a simulated ``cupy.ndarray`` or ``BaseMemory``)."""

    __slots__ = ("_owner",)

    def __init__(self, ptr: int, size: int, owner: Any, device_id: int = -1) -> None:
        base = owner._m if isinstance(owner, ndarray) else owner
        if not isinstance(base, BaseMemory):
            raise NotSimulatedError("UnownedMemory: the simulator can only wrap memory of simulated arrays")
        off = int(ptr) - base.ptr
        self._init(_bytes(base._buf)[off:off + int(size)], size, base.device_id)
        self._rt = base._rt
        self._owner = owner
        self._w, self._r = base._w, base._r


class MemoryPointer:
    """``cupy.cuda.MemoryPointer(mem, offset)``."""

    __slots__ = ("mem", "ptr", "device_id")

    def __init__(self, mem: BaseMemory, offset: int) -> None:
        if not isinstance(mem, BaseMemory):
            raise TypeError(f"Argument 'mem' has incorrect type (expected cupy.cuda.memory.BaseMemory, "
                            f"got {type(mem).__name__})")
        self.mem = mem
        self.ptr = mem.ptr + int(offset)
        self.device_id = mem.device_id

    @property
    def device(self) -> "Device":
        return Device(self.device_id)

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + int(offset))

    __radd__ = __add__

    def __sub__(self, offset: int) -> "MemoryPointer":
        return self + (-int(offset))

    def __repr__(self) -> str:
        return f"<MemoryPointer 0x{self.ptr:x} device={self.device_id} mem={self.mem!r}>"

    def _raw(self, name: str) -> Any:
        raise NotSimulatedError(f"MemoryPointer.{name}: raw-pointer copies are not simulated; "
                                f"use cupy.ndarray views over the memory")

    def copy_from_device(self, *a: Any, **k: Any) -> Any:
        return self._raw("copy_from_device")

    copy_from_device_async = copy_from_host = copy_from_host_async = copy_from = copy_from_async = \
        copy_to_host = copy_to_host_async = copy_from_device

    def memset_async(self, value: int, size: int, stream: Any = None) -> None:
        rt = _RT
        off = self.ptr - self.mem.ptr
        st = rt.state_of(stream if stream is not None else rt.current_stream(), self.device_id)
        rt.record(st, "memset_async", (), (self.mem,))
        _bytes(self.mem._buf)[off:off + int(size)] = int(value)

    def memset(self, value: int, size: int) -> None:
        self.memset_async(value, size, Stream.null)
        _RT.sync(_RT.legacy[self.device_id])


class MemoryPool:
    """``cupy.get_default_memory_pool()``: accounting of every array an operation makes
    (per device; methods answer for the current device, as CuPy's)."""

    def malloc(self, size: int) -> MemoryPointer:
        buf = np.empty(max(int(size), 1), np.uint8)
        return MemoryPointer(PooledMemory(buf, _RT.device()), 0)

    def used_bytes(self) -> int:
        return _RT.pool_used[_RT.device()]

    def free_bytes(self) -> int:
        return sum(k * v for k, v in _RT.pool_free[_RT.device()].items())

    def total_bytes(self) -> int:
        return self.used_bytes() + self.free_bytes()

    def n_free_blocks(self) -> int:
        return sum(_RT.pool_free[_RT.device()].values())

    def free_all_blocks(self, stream: Any = None) -> None:
        with _RT.lock:
            for c in _RT.pool_free:
                c.clear()

    free_all_free = free_all_blocks

    def set_limit(self, size: int | None = None, fraction: float | None = None) -> None:
        if fraction is not None:
            size = int(_RT.total * float(fraction))
        _RT.pool_limit[_RT.device()] = int(size or 0)

    def get_limit(self) -> int:
        return _RT.pool_limit[_RT.device()]


class PinnedMemoryPool:
    def free_all_blocks(self) -> None:
        pass

    def n_free_blocks(self) -> int:
        return 0

    def used_bytes(self) -> int:
        return 0

    def total_bytes(self) -> int:
        return 0


_pool = MemoryPool()
_pinned_pool = PinnedMemoryPool()


# =====================================================================================
# devices, streams, events
# =====================================================================================
class Device:
    """``cupy.cuda.Device(id)``: ``use()``, context manager (restores the previous
    device), ``synchronize()``, ``mem_info``."""

    def __init__(self, device: Any = None) -> None:
        self.id = _RT.device() if device is None else int(device)
        self._prev: list[int] = []

    def use(self) -> None:
        _RT.set_device(self.id)

    def __enter__(self) -> "Device":
        self._prev.append(_RT.device())
        _RT.set_device(self.id)
        return self

    def __exit__(self, *exc: Any) -> None:
        _RT.tls.dev = self._prev.pop()

    def synchronize(self) -> None:
        if not 0 <= self.id < _RT.n:
            raise CUDARuntimeError(101)
        _RT.sync_device(self.id)

    @property
    def mem_info(self) -> tuple[int, int]:
        return _RT.free_bytes(self.id), _RT.total

    @property
    def compute_capability(self) -> str:
        return "90"

    @property
    def attributes(self) -> dict[str, int]:
        return {"MultiProcessorCount": 1}

    def __int__(self) -> int:
        return self.id

    def __index__(self) -> int:
        return self.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("sim-device", self.id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


_ptr_counter = itertools.count(0x1000, 0x10)


def _stack(rt: _Runtime) -> list:
    s = getattr(rt.tls, "stack", None)
    if s is None:
        s = rt.tls.stack = []
    return s


class Stream:
    """``cupy.cuda.Stream(null=False, non_blocking=False, ptds=False, priority=None)``."""

    null: "Stream" = None  # type: ignore[assignment]
    ptds: "Stream" = None  # type: ignore[assignment]

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False,
                 priority: int | None = None) -> None:
        self._priority = 0 if priority is None else int(priority)
        self._non_blocking = bool(non_blocking)
        if null:
            self.ptr, self.device_id, self._st = 0, -1, None
            return
        if ptds:
            self.ptr, self.device_id, self._st = 2, -1, None  # simulated as the legacy stream
            return
        rt = _RT
        self.device_id = rt.device()
        self.ptr = next(_ptr_counter)
        kind = "non-blocking" if non_blocking else "blocking"
        self._st = _SState(f"<{kind} stream 0x{self.ptr:x} of device {self.device_id}, created on thread "
                           f"{threading.current_thread().name!r}>", self.device_id, kind)
        _all_states[self.ptr] = self._st
        if not non_blocking:
            rt.blocking[self.device_id].add(self._st)

    def _state(self, dev: int | None = None) -> _SState:
        return _RT.state_of(self, _RT.device() if dev is None else dev)

    def _check_device(self) -> int:
        cur = _RT.device()
        if self.device_id not in (-1, cur):
            raise RuntimeError(f"The device that the stream is created on ({self.device_id}) does not match "
                               f"with the current device ({cur})")
        return cur

    def use(self) -> "Stream":
        cur = self._check_device()
        _RT.streams()[cur] = self
        return self

    def __enter__(self) -> "Stream":
        cur = self._check_device()
        st = _RT.streams()
        _stack(_RT).append((cur, st.get(cur, Stream.null)))
        st[cur] = self
        return self

    def __exit__(self, *exc: Any) -> None:
        cur, prev = _stack(_RT).pop()
        _RT.streams()[cur] = prev

    def synchronize(self) -> None:
        _RT.sync(self._state(self.device_id if self.device_id >= 0 else None))

    @property
    def done(self) -> bool:
        self.synchronize()
        return True

    def record(self, event: "Event | None" = None) -> "Event":
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        if event._st is None:
            return
        rt = _RT
        st = self._state(self.device_id if self.device_id >= 0 else None)
        with rt.lock:
            c = st.clock
            if c.get(event._st, 0) < event._seq:
                c[event._st] = event._seq
            for k, v in event._clock.items():
                if k is not st and c.get(k, 0) < v:
                    c[k] = v

    def add_callback(self, callback: Callable, arg: Any) -> None:
        self.synchronize()
        callback(self, 0, arg)

    def launch_host_func(self, callback: Callable, arg: Any) -> None:
        self.synchronize()
        callback(arg)

    @property
    def is_non_blocking(self) -> bool:
        return self._non_blocking

    @property
    def priority(self) -> int:
        return self._priority

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.ptr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<Stream {self.ptr} (device {self.device_id}) [simulated]>"


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


class Event:
    """``cupy.cuda.Event``: ``record(stream)``, ``synchronize()``, ``done``."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.ptr = next(_ptr_counter)
        self._st: _SState | None = None
        self._seq = 0
        self._clock: dict[_SState, int] = {}

    def record(self, stream: Stream | None = None) -> None:
        rt = _RT
        s = stream if stream is not None else rt.current_stream()
        st = s._state(s.device_id if s.device_id >= 0 else None)
        with rt.lock:
            self._st, self._seq, self._clock = st, st.seq, dict(st.clock)

    def synchronize(self) -> None:
        if self._st is None:
            return
        rt = _RT
        with rt.lock:
            if self._st.done < self._seq:
                self._st.done = self._seq
            for k, v in self._clock.items():
                if k.done < v:
                    k.done = v

    @property
    def done(self) -> bool:
        self.synchronize()
        return True


def get_current_stream(device_id: int = -1) -> Stream:
    return _RT.current_stream(None if device_id < 0 else device_id)


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    return 0.0


# =====================================================================================
# ndarray
# =====================================================================================
def _wrap(a: np.ndarray, m: BaseMemory) -> "ndarray":
    o = object.__new__(ndarray)
    o._a = a
    o._m = m
    return o


def _fresh(a: np.ndarray, dev: int) -> "ndarray":
    return _wrap(a, PooledMemory(a, dev))


def _unwrap(v: Any, reads: list, host_ok: bool) -> Any:
    """Replace simulated arrays by their numpy data (collecting them in ``reads``);
    reject host numpy arrays unless ``host_ok``."""
    t = type(v)
    if t is ndarray:
        reads.append(v)
        return v._a
    if t is np.ndarray or isinstance(v, np.ndarray):
        if host_ok:
            return v
        raise _unsupported(v)
    if t is list or t is tuple:
        if not v:
            return v
        out = [_unwrap(e, reads, host_ok) for e in v]
        return out if t is list else tuple(out)
    return v


def _result(rt: _Runtime, what: str, r: Any, reads: list, writes: list) -> Any:
    fresh: list[ndarray] = []
    res = _wrap_result(rt, r, reads, writes, fresh)
    if fresh or writes:
        rt.kernel(what, reads, writes, fresh)
    return res


def _wrap_result(rt: _Runtime, r: Any, reads: list, writes: list, fresh: list) -> Any:
    t = type(r)
    if t is np.ndarray:
        for w in writes:
            if r is w._a:
                return w
        for x in reads:
            if r is x._a:
                return x
        for x in itertools.chain(reads, writes):
            if np.may_share_memory(r, x._a):
                return _wrap(r, x._m)  # a view of an input: no kernel, same memory
        if r.base is not None:
            r = r.copy(order="A")  # device memory never aliases a host buffer or a temporary
        o = _fresh(r, rt.device())
        fresh.append(o)
        return o
    if isinstance(r, np.generic):
        o = _fresh(np.array(r), rt.device())  # CuPy returns 0-d arrays, not scalars
        fresh.append(o)
        return o
    if (t is tuple or t is list) and any(isinstance(e, (np.ndarray, np.generic)) for e in r):
        out = [_wrap_result(rt, e, reads, writes, fresh) for e in r]
        return out if t is list else tuple(out)
    return r


class _Params:
    """The keyword names and positional count a CuPy signature accepts."""

    __slots__ = ("qual", "kw", "npos", "varkw")

    def __init__(self, qual: str, spec: str | None) -> None:
        self.qual = qual
        self.kw: frozenset[str] | None = None
        self.npos = -1
        self.varkw = True
        if spec is None:
            return
        kw, npos, varpos, varkw, kwonly = set(), 0, False, False, False
        for p in [p.strip() for p in spec.split(",") if p.strip()]:
            if p == "/":
                kw = set()  # positional-only names cannot be keywords
                continue
            if p == "*":
                kwonly = True
            elif p.startswith("**"):
                varkw = True
            elif p.startswith("*"):
                varpos = True
                kwonly = True
            else:
                kw.add(p)
                if not kwonly:
                    npos += 1
        self.kw = frozenset(kw)
        self.npos = -1 if varpos else npos
        self.varkw = varkw

    def check(self, args: tuple, kwargs: dict) -> None:
        if self.kw is None:
            return
        if not self.varkw:
            for k in kwargs:
                if k not in self.kw:
                    raise TypeError(f"{self.qual}() got an unexpected keyword argument '{k}'"
                                    f" [CuPy {CUPY_VERSION} signature, checked by plexnet's CuPy simulator]")
        if self.npos >= 0 and len(args) > self.npos:
            raise TypeError(f"{self.qual}() takes at most {self.npos} positional arguments "
                            f"({len(args)} given)")


# methods that write their array (besides ``out=``)
_WRITING_METHODS = {"fill", "sort", "put", "partition", "scatter_add", "scatter_max", "scatter_min"}
# ndarray members implemented explicitly below (not by the generic numpy forwarder)
_EXPLICIT = {"get", "set", "item", "tolist", "tobytes", "tofile", "dump", "dumps", "astype", "view", "fill",
             "reduced_view", "scatter_add", "scatter_max", "scatter_min", "toDlpack", "copy", "T", "mT",
             "base", "data", "device", "dtype", "flags", "imag", "real", "itemsize", "nbytes", "ndim", "shape",
             "size", "strides", "flat", "cstruct", "mdspan", "put"}


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, a: np.ndarray, own: bool) -> None:
        self.c_contiguous = bool(a.flags.c_contiguous)
        self.f_contiguous = bool(a.flags.f_contiguous)
        self.owndata = own

    def __getitem__(self, key: str) -> bool:
        k = key.upper()
        if k in ("C_CONTIGUOUS", "C", "CONTIGUOUS"):
            return self.c_contiguous
        if k in ("F_CONTIGUOUS", "F", "FORTRAN"):
            return self.f_contiguous
        if k in ("OWNDATA", "O"):
            return self.owndata
        raise KeyError(key)

    def __repr__(self) -> str:
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  OWNDATA : {self.owndata}")


class _DLPackCapsule:
    """What ``__dlpack__`` returns under simulation: only the simulator's
    ``from_dlpack`` can consume it (a real DLPack consumer would need device memory)."""

    __slots__ = ("array", "_used")

    def __init__(self, array: "ndarray") -> None:
        self.array = array
        self._used = False


class ndarray:
    """``cupy.ndarray`` of the simulator: a numpy array standing in for device memory,
    plus the allocation (device id, ordering record) it belongs to. Not a numpy
    subclass; ``numpy.asarray(x)`` raises like CuPy's."""

    __slots__ = ("_a", "_m")
    __array_priority__ = 100.0
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape: Any, dtype: Any = float, memptr: MemoryPointer | None = None,
                 strides: Any = None, order: str = "C") -> None:
        if memptr is None:
            a = np.empty(shape, dtype, order=order)
            self._a, self._m = a, PooledMemory(a, _RT.device())
            return
        if not isinstance(memptr, MemoryPointer):
            raise TypeError("memptr must be a cupy.cuda.MemoryPointer")
        mem = memptr.mem
        off = memptr.ptr - mem.ptr
        buf = _bytes(mem._buf)
        self._a = np.ndarray(shape, dtype, buffer=buf, offset=off, strides=strides, order=order)
        self._m = mem

    # -- attributes -------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)

    @shape.setter  # type: ignore[no-redef]
    def shape(self, value: Any) -> None:
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)

    @property
    def flags(self) -> _Flags:
        return _Flags(self._a, self._a.base is None or self._a is self._m._buf)

    @property
    def device(self) -> Device:
        return Device(self._m.device_id)

    @property
    def data(self) -> MemoryPointer:
        mp = object.__new__(MemoryPointer)
        mp.mem = self._m
        mp.ptr = int(self._a.__array_interface__["data"][0])
        mp.device_id = self._m.device_id
        return mp

    @property
    def base(self) -> "ndarray | None":
        b = self._a.base
        return None if b is None or not isinstance(b, np.ndarray) else _wrap(b, self._m)

    @property
    def T(self) -> "ndarray":
        return _wrap(self._a.T, self._m)

    @property
    def mT(self) -> "ndarray":
        return _wrap(self._a.mT, self._m)

    @property
    def real(self) -> "ndarray":
        return _wrap(self._a.real, self._m)

    @property
    def imag(self) -> "ndarray":
        r = self._a.imag
        return _wrap(r, self._m) if np.may_share_memory(r, self._a) else _result(_RT, "imag", r, [self], [])

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        a = self._a
        s = _RT.current_stream()
        return {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr,
                "data": (int(a.__array_interface__["data"][0]), False),
                "strides": None if a.flags.c_contiguous else a.strides, "version": 3,
                "stream": 1 if s.ptr == 0 else s.ptr}

    def __getattr__(self, name: str) -> Any:
        if name in _CLASSES["cupy.ndarray"]:
            raise _not_simulated(f"cupy.ndarray.{name}")
        hint = " (a numpy.ndarray attribute CuPy does not have)" if hasattr(np.ndarray, name) else ""
        raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'{hint}")

    # -- host <-> device --------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def get(self, stream: Stream | None = None, order: str = "C", out: np.ndarray | None = None,
            blocking: bool = True) -> np.ndarray:
        """Device -> host copy on ``stream`` (default: the current stream), then
        ``stream.synchronize()`` when ``blocking``."""
        rt = _RT
        s = stream if stream is not None else rt.current_stream()
        st = rt.state_of(s, self._m.device_id)
        rt.record(st, "ndarray.get (device->host copy)", (self._m,), ())
        rt.stats["d2h"] += 1
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained fromcupy.ndarray")
            if out.dtype != self.dtype:
                raise TypeError(f"{out.dtype} array cannot be obtained from {self.dtype} array")
            if out.shape != self.shape:
                raise ValueError(f"Shape mismatch. Expected shape: {self.shape}, actual shape: {out.shape}")
            out[...] = self._a
            host = out
        else:
            order = order.upper()
            if order == "A":
                order = "F" if self._a.flags.f_contiguous and not self._a.flags.c_contiguous else "C"
            host = np.array(self._a, order=order, copy=True)
        if blocking:
            rt.sync(st)
        return host

    def set(self, arr: np.ndarray, stream: Stream | None = None) -> None:
        """Host -> device copy on ``stream`` (default: the current stream)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if self.dtype != arr.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if self.shape != arr.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if not (self._a.flags.c_contiguous or self._a.flags.f_contiguous):
            raise RuntimeError("Cannot set to non-contiguous array")
        rt = _RT
        s = stream if stream is not None else rt.current_stream()
        rt.record(rt.state_of(s, self._m.device_id), "ndarray.set (host->device copy)", (), (self._m,))
        rt.stats["h2d"] += 1
        self._a[...] = arr

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().item()

    def tolist(self) -> Any:
        return self.get().tolist()

    def tobytes(self, order: str = "C") -> bytes:
        return self.get().tobytes(order)

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:
        self.get().tofile(fid, sep, format)

    def dump(self, file: Any) -> None:
        self.get().dump(file)

    def dumps(self) -> bytes:
        return self.get().dumps()

    def __float__(self) -> float:
        return float(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __complex__(self) -> complex:
        return complex(self.get())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self.get())

    def __len__(self) -> int:
        if not self._a.shape:
            raise TypeError("len() of unsized object")
        return self._a.shape[0]

    def __iter__(self) -> Any:
        if not self._a.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._a.shape[0]))

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    def __format__(self, spec: str) -> str:
        return format(self.get(), spec)

    def __copy__(self) -> "ndarray":
        return self.copy()

    def __deepcopy__(self, memo: Any) -> "ndarray":
        return self.copy()

    def __reduce__(self) -> Any:
        return (_rebuild, (self.get(), self._m.device_id))

    # -- numpy protocols (CuPy's) ---------------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = ufunc.__name__
        try:
            cp_ufunc = getattr(cupy, name) if name in _MODULES["cupy"] else None
        except AttributeError:
            return NotImplemented
        if cp_ufunc is None or not callable(cp_ufunc):
            return NotImplemented
        if "out" in kwargs:
            out = kwargs["out"]
            if isinstance(out, tuple):
                if len(out) != 1:
                    raise ValueError("The 'out' parameter must have exactly one array value")
                kwargs["out"] = out[0]
        if name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"):
            inputs = tuple(x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in inputs)
        if method == "__call__":
            return cp_ufunc(*inputs, **kwargs)
        if method in ("reduce", "accumulate", "reduceat", "outer", "at") and isinstance(cp_ufunc, ufunc_cls):
            return getattr(cp_ufunc, method)(*inputs, **kwargs)
        return NotImplemented

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        try:
            mod: Any = cupy
            for part in func.__module__.split(".")[1:]:
                mod = getattr(mod, part)
            cupy_func = getattr(mod, func.__name__)
        except AttributeError:
            return NotImplemented
        if cupy_func is func:
            return NotImplemented
        for t in types:
            if t is not ndarray and t is not np.ndarray:
                return NotImplemented
        return cupy_func(*args, **kwargs)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> _DLPackCapsule:
        return _DLPackCapsule(self)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self._m.device_id)  # kDLCUDA

    def toDlpack(self) -> _DLPackCapsule:
        return _DLPackCapsule(self)

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> "ndarray":
        reads: list[ndarray] = []
        k = _unwrap(key, reads, True) if not isinstance(key, (int, slice)) else key
        kt = k if type(k) is tuple else (k,)
        if not any(e is Ellipsis for e in kt):
            kt = kt + (Ellipsis,)  # 0-d results stay arrays (views), as in CuPy
        r = self._a[kt]
        if np.may_share_memory(r, self._a):
            return _wrap(r, self._m)  # basic indexing: a view, no kernel
        reads.append(self)
        return _result(_RT, "getitem (advanced indexing)", r, reads, [])

    def __setitem__(self, key: Any, value: Any) -> None:
        rt = _RT
        reads: list[ndarray] = []
        k = _unwrap(key, reads, True) if not isinstance(key, (int, slice)) else key
        kt = k if type(k) is tuple else (k,)
        advanced = any(isinstance(e, (np.ndarray, list)) for e in kt)
        target = None if advanced else self._a[kt + (() if any(e is Ellipsis for e in kt) else (Ellipsis,))]
        if isinstance(value, ndarray):
            if (not advanced and target.shape == value.shape and target.strides == value._a.strides
                    and target.dtype == value.dtype and target.flags.c_contiguous):
                # CuPy: a plain memcpy (cudaMemcpyAsync), allowed between devices
                st = rt.state_of(rt.current_stream(), rt.device())
                rt.record(st, "setitem (device copy)", (value._m,), (self._m,))
                rt.stats["d2d" if value._m.device_id == self._m.device_id else "peer_copy"] += 1
                target[...] = value._a
                return
            reads.append(value)
            v = value._a
        elif isinstance(value, (np.ndarray, list, tuple)):
            if not advanced:
                va = np.asarray(value)
                if va.shape != ():
                    raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
                v = va.item()
            else:
                v = np.asarray(value)  # CuPy copies the values to the device
                rt.stats["h2d"] += 1
        else:
            v = value
        if advanced:
            self._a[k] = v
        else:
            target[...] = v
        rt.kernel("setitem", reads, [self], [])

    # -- explicit methods -----------------------------------------------------------------
    def astype(self, dtype: Any, order: str = "K", casting: Any = None, subok: Any = None,
               copy: bool = True) -> "ndarray":
        dt = np.dtype(dtype)
        if not copy and dt == self._a.dtype:
            return self
        r = self._a.astype(dt, order=order, casting=casting or "unsafe", copy=True)
        return _result(_RT, "astype", r, [self], [])

    def copy(self, order: str = "C") -> "ndarray":
        return _result(_RT, "copy", self._a.copy(order=order), [self], [])

    def view(self, dtype: Any = None, type: Any = None) -> "ndarray":
        if type is not None:
            raise NotSimulatedError("ndarray.view(type=...) is not simulated")
        return _wrap(self._a.view() if dtype is None else self._a.view(dtype), self._m)

    def fill(self, value: Any) -> None:
        reads: list[ndarray] = []
        if isinstance(value, ndarray):
            if value.shape != ():
                raise ValueError("non-scalar cupy.ndarray cannot be used for fill")
            reads.append(value)
            value = value._a
        elif isinstance(value, np.ndarray):
            if value.shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            value = value.item()
        self._a.fill(value)
        _RT.kernel("fill", reads, [self], [])

    def put(self, indices: Any, values: Any, mode: str = "wrap") -> None:
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError("clipmode not understood")
        reads: list[ndarray] = []
        idx = _unwrap(indices, reads, True)
        vals = _unwrap(values, reads, True)
        self._a.put(idx, vals, mode=mode)
        _RT.kernel("put", reads, [self], [])

    def reduced_view(self, dtype: Any = None) -> "ndarray":
        a = self._a
        return _wrap(a.reshape(-1) if a.flags.c_contiguous else a, self._m)

    def _scatter(self, ufunc: Any, slices: Any, value: Any, what: str) -> None:
        reads: list[ndarray] = []
        idx = _unwrap(slices, reads, True)
        v = _unwrap(value, reads, True)
        ufunc.at(self._a, idx, v)
        _RT.kernel(what, reads, [self], [])

    def scatter_add(self, slices: Any, value: Any) -> None:
        self._scatter(np.add, slices, value, "scatter_add")

    def scatter_max(self, slices: Any, value: Any) -> None:
        self._scatter(np.maximum, slices, value, "scatter_max")

    def scatter_min(self, slices: Any, value: Any) -> None:
        self._scatter(np.minimum, slices, value, "scatter_min")


def _rebuild(host: np.ndarray, dev: int) -> ndarray:
    with Device(dev if dev < _RT.n else 0):
        return asarray(host)


def _unwrap_args(args: tuple, kwargs: dict, reads: list, host_ok: bool, host_arg: tuple | None) -> tuple:
    """Unwrap positional and keyword arguments; ``host_arg = (position, keyword)`` names
    the one argument CuPy copies from the host itself (index arrays of ``take`` ...)."""
    if host_arg is None:
        uargs = _unwrap(args, reads, host_ok) if args else args
        ukw = {k: _unwrap(v, reads, host_ok) for k, v in kwargs.items()} if kwargs else kwargs
        return uargs, ukw
    pos, kwname = host_arg
    uargs = tuple(_unwrap(a, reads, host_ok or i == pos) for i, a in enumerate(args))
    ukw = {k: _unwrap(v, reads, host_ok or k == kwname) for k, v in kwargs.items()}
    return uargs, ukw


# arguments CuPy converts from host data by itself (core.array(indices) ...)
_HOST_ARG = {"take": (1, "indices"), "compress": (0, "condition"), "ndarray.take": (0, "indices"),
             "ndarray.compress": (0, "condition"), "ndarray.repeat": (0, "repeats"), "repeat": (1, "repeats")}


def _make_method(name: str, spec: str | None) -> Callable:
    params = _Params(f"cupy.ndarray.{name}", spec)
    writes_self = name in _WRITING_METHODS
    host_arg = _HOST_ARG.get(f"ndarray.{name}")

    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        params.check(args, kwargs)
        reads: list[ndarray] = [self]
        uargs, ukw = _unwrap_args(args, kwargs, reads, False, host_arg)
        writes: list[ndarray] = []
        out = kwargs.get("out")
        if isinstance(out, ndarray):
            writes.append(out)
        if writes_self:
            writes.append(self)
        with np.errstate(all="ignore"):  # CuPy kernels never warn about nan/inf
            r = getattr(self._a, name)(*uargs, **ukw)
        return _result(_RT, f"ndarray.{name}", r, reads, writes)

    method.__name__ = method.__qualname__ = name
    return method


_BINARY_OPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
               "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
               "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
               "rshift": "right_shift", "divmod": "divmod"}
_COMPARE_OPS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
                "ne": "not_equal"}
_UNARY_OPS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def _defer(other: Any) -> bool:
    """CuPy's ``_should_use_rop``: let an operand of higher ``__array_priority__`` (that is
    not a cupy.ndarray) handle the operator."""
    return type(other) is not ndarray and getattr(other, "__array_priority__", 0) > ndarray.__array_priority__


def _install_operators() -> None:
    def binary(fname: str) -> tuple[Callable, Callable, Callable]:
        def op(self: ndarray, other: Any) -> Any:
            if _defer(other):
                return NotImplemented
            return getattr(cupy, fname)(self, other)

        def rop(self: ndarray, other: Any) -> Any:
            if _defer(other):
                return NotImplemented
            return getattr(cupy, fname)(other, self)

        def iop(self: ndarray, other: Any) -> Any:
            if _defer(other):
                return NotImplemented
            getattr(cupy, fname)(self, other, out=self)
            return self
        return op, rop, iop

    for short, fname in _BINARY_OPS.items():
        op, rop, iop = binary(fname)
        setattr(ndarray, f"__{short}__", op)
        setattr(ndarray, f"__r{short}__", rop)
        if short != "divmod":
            setattr(ndarray, f"__i{short}__", iop)
    for short, fname in _COMPARE_OPS.items():
        op, _rop, _iop = binary(fname)
        setattr(ndarray, f"__{short}__", op)
    for short, fname in _UNARY_OPS.items():
        setattr(ndarray, f"__{short}__", (lambda f: lambda self: getattr(cupy, f)(self))(fname))
    ndarray.__hash__ = None  # type: ignore[assignment]


def _install_ndarray_methods() -> None:
    for name, ent in _CLASSES["cupy.ndarray"].items():
        if name.startswith("__") or name in _EXPLICIT or ent["kind"] != "method":
            continue
        if hasattr(np.ndarray, name):
            setattr(ndarray, name, _make_method(name, ent.get("params")))


# =====================================================================================
# ufuncs
# =====================================================================================
class ufunc:
    """A CuPy ufunc of the simulator (numpy's ufunc on the data, CuPy's rules)."""

    def __init__(self, name: str, npu: Any, nin: int, nout: int) -> None:
        self.__name__ = name
        self.name = f"cupy_{name}"
        self._np = npu
        self.nin = nin
        self.nout = nout
        self.nargs = nin + nout
        self.__doc__ = f"{name}: CuPy ufunc, simulated on the host with numpy.{npu.__name__}"

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"

    @property
    def types(self) -> list[str]:
        return list(self._np.types)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        casting = kwargs.pop("casting", None)
        if kwargs:
            raise TypeError("Wrong arguments %s" % kwargs)
        n = len(args)
        if not self.nin <= n <= self.nargs:
            raise TypeError(f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} or "
                            f"{self.nargs} (with outputs), but given {n}.")
        reads: list[ndarray] = []
        uin = []
        for a in args[:self.nin]:
            if type(a) is ndarray:
                reads.append(a)
                uin.append(a._a)
            elif isinstance(a, (numbers.Number, np.generic)):
                uin.append(a)
            else:
                raise _unsupported(a)
        outs = args[self.nin:]
        if out is not None:
            if outs:
                raise ValueError("Cannot specify 'out' as both a positional and keyword argument")
            outs = out if isinstance(out, tuple) else (out,)
        writes: list[ndarray] = []
        uout = None
        if outs:
            uout = []
            for o in outs:
                if o is None:
                    uout.append(None)
                elif type(o) is ndarray:
                    writes.append(o)
                    uout.append(o._a)
                else:
                    raise TypeError("Output arguments type must be cupy.ndarray")
            uout = tuple(uout)
        kw: dict[str, Any] = {}
        if uout is not None:
            kw["out"] = uout
        if dtype is not None:
            kw["dtype"] = dtype
        if casting is not None:
            kw["casting"] = casting
        with np.errstate(all="ignore"):  # CuPy kernels never warn about nan/inf
            r = self._np(*uin, **kw)
        return _result(_RT, self.__name__, r, reads, writes)

    def _supported(self, method: str) -> None:
        if self.__name__ not in _UFUNC_SUPPORT.get(method, ()):
            raise NotImplementedError(f"`{self.name}.{method}` is not supported yet")

    def reduce(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        self._supported("reduce")
        if not isinstance(array, ndarray):
            raise _unsupported(array)
        return (array.sum if self.__name__ == "add" else array.prod)(axis, dtype, out, keepdims)

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        self._supported("accumulate")
        if not isinstance(array, ndarray):
            raise _unsupported(array)
        return (array.cumsum if self.__name__ == "add" else array.cumprod)(axis, dtype, out)

    def reduceat(self, array: Any, indices: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        self._supported("reduceat")
        if not isinstance(array, ndarray):
            raise _unsupported(array)
        reads: list[ndarray] = [array]
        idx = _unwrap(indices, reads, True)
        writes = [out] if isinstance(out, ndarray) else []
        r = np.add.reduceat(array._a, idx, axis=axis, dtype=dtype, out=out._a if writes else None)
        return _result(_RT, f"{self.__name__}.reduceat", r, reads, writes)

    def outer(self, A: Any, B: Any, **kwargs: Any) -> Any:
        A = asarray(A)  # CuPy: core.array(A) (a host array is copied to the device)
        B = asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape), **kwargs)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        self._supported("at")
        if not isinstance(a, ndarray):
            raise AttributeError(f"'{type(a).__name__}' object has no attribute '_scatter_op'")
        reads: list[ndarray] = []
        idx = _unwrap(indices, reads, True)
        v = _unwrap(b, reads, True)  # CuPy: core.array(value) (host values are copied)
        self._np.at(a._a, idx, v)
        _RT.kernel(f"{self.__name__}.at", reads, [a], [])


ufunc_cls = ufunc


# =====================================================================================
# functions
# =====================================================================================
_HOST_OK = {"asarray", "array", "asanyarray", "asarray_chkfinite", "asfarray", "asnumpy", "get_array_module",
            "isscalar", "ndim", "shape", "result_type", "min_scalar_type", "common_type", "mintypecode",
            "iscomplexobj", "isrealobj", "iterable", "empty_like", "zeros_like", "ones_like", "full_like",
            "can_cast", "promote_types", "broadcast_shapes", "size"}
# functions that write one of their positional arguments
_WRITES_ARG = {"copyto": 0, "put": 0, "place": 0, "putmask": 0, "fill_diagonal": 0, "put_along_axis": 0,
               "shuffle": 0}
# CuPy names that are numpy-1 aliases (gone from numpy 2)
_ALIASES = {"alltrue": "all", "sometrue": "any", "cumproduct": "cumprod", "product": "prod", "round_": "round",
            "trapz": "trapezoid", "in1d": "isin", "msort": "sort", "float_": "float64", "complex_": "complex128",
            "cfloat": "complex128", "singlecomplex": "complex64"}
_CONSTANTS = {"Inf": np.inf, "Infinity": np.inf, "infty": np.inf, "PINF": np.inf, "NINF": -np.inf, "NAN": np.nan,
              "NaN": np.nan, "NZERO": -0.0, "PZERO": 0.0, "disable_experimental_feature_warning": False}


def _make_function(qual: str, name: str, npf: Callable, spec: str | None) -> Callable:
    params = _Params(qual, spec)
    host_ok = name in _HOST_OK
    warg = _WRITES_ARG.get(name)
    like_proto = name.endswith("_like")
    host_arg = _HOST_ARG.get(name) if qual == f"cupy.{name}" else None

    def f(*args: Any, **kwargs: Any) -> Any:
        params.check(args, kwargs)
        reads: list[ndarray] = []
        if like_proto and args and isinstance(args[0], np.ndarray):
            uargs = (args[0],) + tuple(_unwrap(list(args[1:]), reads, False))  # metadata only
            ukw = {k: _unwrap(v, reads, False) for k, v in kwargs.items()} if kwargs else kwargs
        else:
            uargs, ukw = _unwrap_args(args, kwargs, reads, host_ok, host_arg)
        writes: list[ndarray] = []
        out = kwargs.get("out")
        if isinstance(out, ndarray):
            writes.append(out)
        elif isinstance(out, tuple):
            writes.extend(o for o in out if isinstance(o, ndarray))
        if warg is not None and len(args) > warg and isinstance(args[warg], ndarray):
            writes.append(args[warg])
        if like_proto and args and isinstance(args[0], ndarray):
            reads = [x for x in reads if x is not args[0]]  # only the shape/dtype are used
        with np.errstate(all="ignore"):  # CuPy kernels never warn about nan/inf
            r = npf(*uargs, **ukw)
        return _result(_RT, qual, r, reads, writes)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{qual}: simulated on the host with numpy ({getattr(npf, '__module__', 'numpy')}.{name})."
    f.__module__ = qual.rsplit(".", 1)[0]
    return f


def _not_simulated_callable(qual: str, why: str = "") -> Callable:
    def f(*a: Any, **k: Any) -> Any:
        raise NotSimulatedError(f"{qual} exists in CuPy {CUPY_VERSION} but cannot be simulated on the host"
                                + (f": {why}" if why else ""))
    f.__name__ = qual.rsplit(".", 1)[-1]
    return f


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, blocking: bool = False) -> ndarray:
    """Host data (numpy, lists, scalars) is copied to the current device; a simulated
    array is returned as it is (on its own device) unless a conversion is needed."""
    rt = _RT
    if isinstance(a, ndarray):
        if dtype is None or np.dtype(dtype) == a.dtype:
            if copy:
                return a.copy(order="C" if order in (None, "K", "A") else order)
            return a
        return a.astype(dtype, order=order or "K")
    if isinstance(a, (list, tuple)) and any(isinstance(e, ndarray) for e in a):
        return _stack_like(a, dtype)
    host = np.array(a, dtype=dtype, order=order if order in ("C", "F") else "K", copy=True)
    o = _fresh(host, rt.device())
    rt.record(rt.state_of(rt.current_stream(), rt.device()), "asarray (host->device copy)", (), (), (o._m,))
    rt.stats["h2d"] += 1
    return o


def _stack_like(seq: Any, dtype: Any = None) -> ndarray:
    reads: list[ndarray] = []
    host = np.array(_unwrap(list(seq), reads, True), dtype=dtype)
    return _result(_RT, "array", host, reads, [])


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", subok: bool = False, ndmin: int = 0,
          *, blocking: bool = False) -> ndarray:
    if isinstance(obj, ndarray):
        r = asarray(obj, dtype=dtype, copy=copy, order=order)
    else:
        r = asarray(obj, dtype=dtype, order=order)
    if ndmin and r.ndim < ndmin:
        r = r.reshape((1,) * (ndmin - r.ndim) + r.shape)
    return r


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, blocking: bool = False) -> ndarray:
    return asarray(a, dtype, order, copy=copy, blocking=blocking)


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    if not isinstance(a, ndarray):
        raise TypeError(f"Argument 'a' has incorrect type (expected cupy._core.core._ndarray_base, got "
                        f"{type(a).__module__}.{type(a).__name__})"
                        + (_HOST_HINT if isinstance(a, np.ndarray) else ""))
    if a._a.flags.c_contiguous and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return _result(_RT, "ascontiguousarray", np.ascontiguousarray(a._a, dtype=dtype), [a], [])


def asnumpy(a: Any, stream: Stream | None = None, order: str = "C", out: np.ndarray | None = None, *,
            blocking: bool = True) -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out, blocking=blocking)
    temp = np.asarray(a, order=order)
    if out is None:
        return temp
    out[...] = temp
    return out


def get_array_module(*args: Any) -> Any:
    for a in args:
        if isinstance(a, ndarray):
            return cupy
    return np


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = None) -> None:
    if not isinstance(dst, ndarray):
        raise TypeError(f"Argument 'dst' has incorrect type (expected cupy._core.core._ndarray_base, got "
                        f"{type(dst).__module__}.{type(dst).__name__})")
    rt = _RT
    reads: list[ndarray] = []
    if isinstance(src, np.ndarray) and src.shape != ():
        raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
    if isinstance(src, ndarray):
        if (where is None and src.shape == dst.shape and src.dtype == dst.dtype
                and src._a.flags.c_contiguous and dst._a.flags.c_contiguous):
            rt.record(rt.state_of(rt.current_stream(), rt.device()), "copyto (device copy)", (src._m,), (dst._m,))
            np.copyto(dst._a, src._a)
            return
        reads.append(src)
        s = src._a
    else:
        s = src.item() if isinstance(src, np.ndarray) else src
    w = _unwrap(where, reads, False) if where is not None else True
    np.copyto(dst._a, s, casting=casting, where=w)
    rt.kernel("copyto", reads, [dst], [])


def from_dlpack(array: Any, *, device: Any = None, copy: Any = None) -> ndarray:
    if isinstance(array, ndarray):
        return array
    cap = array.__dlpack__() if hasattr(array, "__dlpack__") else array
    if isinstance(cap, _DLPackCapsule):
        if cap._used:
            raise ValueError("A DLPack tensor object cannot be consumed multiple times")
        cap._used = True
        return cap.array
    raise BufferError("plexnet's CuPy simulator can only import simulated device arrays through DLPack "
                      "(this object is not one; a host tensor would need an explicit cupy.asarray copy)")


def is_available() -> bool:
    return _RT.n > 0


def get_default_memory_pool() -> MemoryPool:
    return _pool


def get_default_pinned_memory_pool() -> PinnedMemoryPool:
    return _pinned_pool


def _fuse(*args: Any, **kwargs: Any) -> Any:
    raise NotSimulatedError("cupy.fuse compiles CUDA kernels and cannot be simulated")


_SPECIAL_TOP = {
    "ndarray": ndarray, "ufunc": ufunc, "asarray": asarray, "array": array, "asanyarray": asanyarray,
    "ascontiguousarray": ascontiguousarray, "asnumpy": asnumpy, "get_array_module": get_array_module,
    "copyto": copyto, "from_dlpack": from_dlpack, "fromDlpack": from_dlpack, "is_available": is_available,
    "get_default_memory_pool": get_default_memory_pool,
    "get_default_pinned_memory_pool": get_default_pinned_memory_pool, "dtype": np.dtype, "finfo": np.finfo,
    "iinfo": np.iinfo, "fuse": _fuse, "s_": np.s_, "index_exp": np.index_exp, "newaxis": None,
}
_KERNEL_CLASSES = {"ElementwiseKernel", "RawKernel", "RawModule", "ReductionKernel"}


# =====================================================================================
# random
# =====================================================================================
class RandomState:
    """``cupy.random.RandomState``: numpy's PCG64 behind CuPy's RandomState API (seeds
    up to 64 bits, results float64/int64 unless ``dtype`` says otherwise, arrays on the
    current device, bound to the device it was created on)."""

    def __init__(self, seed: Any = None, method: Any = None) -> None:
        self._device = _RT.device()
        self.seed(seed)

    def seed(self, seed: Any = None) -> None:
        if seed is not None:
            if isinstance(seed, ndarray):
                seed = seed.item()
            seed = int(seed)
            if seed < 0 or seed >= 1 << 64:
                raise ValueError(f"seed must be in [0, 2**64): {seed}")
        self._gen = np.random.Generator(np.random.PCG64(seed))

    def _out(self, what: str, r: Any, reads: list | None = None) -> ndarray:
        rt = _RT
        dev = rt.device()
        if dev != self._device:
            raise RuntimeError(f"cupy.random.RandomState created on device {self._device} used while device "
                               f"{dev} is current (the generator's state lives on device {self._device}) "
                               f"[CuPy simulator]")
        return _result(rt, f"random.{what}", np.asarray(r) if not isinstance(r, np.ndarray) else r, reads or [], [])

    def _args(self, *vals: Any) -> tuple[list, list]:
        reads: list[ndarray] = []
        return [_unwrap(v, reads, True) for v in vals], reads

    def random_sample(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._out("random_sample", self._gen.random(size, dtype=np.float64).astype(dtype, copy=False))

    random = ranf = sample = random_sample

    def rand(self, *size: Any, **kwarg: Any) -> ndarray:
        dtype = kwarg.pop("dtype", float)
        if kwarg:
            raise TypeError(f"rand() got unexpected keyword arguments {', '.join(kwarg)}")
        return self.random_sample(size or None, dtype)

    def randn(self, *size: Any, **kwarg: Any) -> ndarray:
        dtype = kwarg.pop("dtype", float)
        if kwarg:
            raise TypeError(f"randn() got unexpected keyword arguments {', '.join(kwarg)}")
        return self.standard_normal(size or None, dtype)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (lo, hi), reads = self._args(low, high)
        return self._out("uniform", self._gen.uniform(lo, hi, size).astype(dtype, copy=False), reads)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (lo, sc), reads = self._args(loc, scale)
        return self._out("normal", self._gen.normal(lo, sc, size).astype(dtype, copy=False), reads)

    def standard_normal(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._out("standard_normal", self._gen.standard_normal(size).astype(dtype, copy=False))

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = int) -> ndarray:
        return self._out("randint", self._gen.integers(low, high, size, dtype=np.dtype(dtype)))

    def random_integers(self, low: Any, high: Any = None, size: Any = None) -> ndarray:
        if high is None:
            low, high = 1, low
        return self._out("random_integers", self._gen.integers(low, high, size, endpoint=True))

    def poisson(self, lam: Any = 1.0, size: Any = None, dtype: Any = "l") -> ndarray:
        (lm,), reads = self._args(lam)
        return self._out("poisson", self._gen.poisson(lm, size).astype(dtype, copy=False), reads)

    def exponential(self, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (sc,), reads = self._args(scale)
        return self._out("exponential", self._gen.exponential(sc, size).astype(dtype, copy=False), reads)

    def standard_exponential(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._out("standard_exponential", self._gen.standard_exponential(size).astype(dtype, copy=False))

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (sh, sc), reads = self._args(shape, scale)
        return self._out("gamma", self._gen.gamma(sh, sc, size).astype(dtype, copy=False), reads)

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = float) -> ndarray:
        (sh,), reads = self._args(shape)
        return self._out("standard_gamma", self._gen.standard_gamma(sh, size).astype(dtype, copy=False), reads)

    def beta(self, a: Any, b: Any, size: Any = None, dtype: Any = float) -> ndarray:
        (aa, bb), reads = self._args(a, b)
        return self._out("beta", self._gen.beta(aa, bb, size).astype(dtype, copy=False), reads)

    def binomial(self, n: Any, p: Any, size: Any = None, dtype: Any = int) -> ndarray:
        (nn, pp), reads = self._args(n, p)
        return self._out("binomial", self._gen.binomial(nn, pp, size).astype(dtype, copy=False), reads)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (mm, ss), reads = self._args(mean, sigma)
        return self._out("lognormal", self._gen.lognormal(mm, ss, size).astype(dtype, copy=False), reads)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (lo, sc), reads = self._args(loc, scale)
        return self._out("laplace", self._gen.laplace(lo, sc, size).astype(dtype, copy=False), reads)

    def permutation(self, a: Any) -> ndarray:
        if isinstance(a, ndarray):
            return self._out("permutation", self._gen.permutation(a._a), [a])
        if isinstance(a, np.ndarray):
            raise _unsupported(a)
        return self._out("permutation", self._gen.permutation(int(a)))

    def shuffle(self, a: ndarray) -> None:
        if not isinstance(a, ndarray):
            raise TypeError("The array must be cupy.ndarray")
        self._gen.shuffle(a._a)
        _RT.kernel("random.shuffle", [], [a], [])

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> ndarray:
        (aa, pp), reads = self._args(a, p)
        return self._out("choice", np.asarray(self._gen.choice(aa, size, replace, pp)), reads)


_random_states: dict[int, RandomState] = {}


def get_random_state() -> RandomState:
    d = _RT.device()
    rs = _random_states.get(d)
    if rs is None:
        rs = _random_states[d] = RandomState()
    return rs


def set_random_state(rs: RandomState) -> None:
    _random_states[_RT.device()] = rs


def reset_states() -> None:
    _random_states.clear()


def _random_function(name: str) -> Callable:
    def f(*args: Any, **kwargs: Any) -> Any:
        return getattr(get_random_state(), name)(*args, **kwargs)
    f.__name__ = name
    return f


def _random_seed(seed: Any = None) -> None:
    get_random_state().seed(seed)


# =====================================================================================
# cuda.runtime
# =====================================================================================
def getDeviceCount() -> int:
    return _RT.n


def getDevice() -> int:
    return _RT.device()


def setDevice(device: int) -> None:
    _RT.set_device(device)


def memGetInfo() -> tuple[int, int]:
    d = _RT.device()
    return _RT.free_bytes(d), _RT.total


def deviceSynchronize() -> None:
    _RT.sync_device(_RT.device())


def deviceCanAccessPeer(device: int, peerDevice: int) -> int:
    return int(_RT.peer and device != peerDevice)


def deviceEnablePeerAccess(peerDevice: int) -> None:
    if not _RT.peer:
        raise CUDARuntimeError(1)
    _RT.peer_enabled.add((_RT.device(), int(peerDevice)))


def runtimeGetVersion() -> int:
    return 13000


def driverGetVersion() -> int:
    return 13000


def getDeviceProperties(device: int) -> dict[str, Any]:
    if not 0 <= int(device) < _RT.n:
        raise CUDARuntimeError(101)
    return {"name": b"plexnet simulated GPU (host memory; SIMULATED)", "totalGlobalMem": _RT.total,
            "major": 9, "minor": 0, "multiProcessorCount": 1, "warpSize": 32, "pciBusID": int(device)}


def streamSynchronize(ptr: int) -> None:
    st = _all_states.get(int(ptr))
    _RT.sync(st if st is not None else _RT.legacy[_RT.device()])


_RUNTIME_SPECIAL = {
    "CUDARuntimeError": CUDARuntimeError, "getDeviceCount": getDeviceCount, "getDevice": getDevice,
    "setDevice": setDevice, "memGetInfo": memGetInfo, "deviceSynchronize": deviceSynchronize,
    "deviceCanAccessPeer": deviceCanAccessPeer, "deviceEnablePeerAccess": deviceEnablePeerAccess,
    "runtimeGetVersion": runtimeGetVersion, "driverGetVersion": driverGetVersion,
    "getDeviceProperties": getDeviceProperties, "streamSynchronize": streamSynchronize, "is_hip": False,
    "streamDefault": 0, "streamNonBlocking": 1, "streamLegacy": 1, "streamPerThread": 2,
    "memcpyHostToHost": 0, "memcpyHostToDevice": 1, "memcpyDeviceToHost": 2, "memcpyDeviceToDevice": 3,
    "memcpyDefault": 4,
}


def get_device_id() -> int:
    return _RT.device()


def alloc(size: int) -> MemoryPointer:
    return _pool.malloc(size)


_CUDA_SPECIAL = {
    "Device": Device, "Stream": Stream, "Event": Event, "Memory": Memory, "MemoryPointer": MemoryPointer,
    "MemoryPool": MemoryPool, "PinnedMemoryPool": PinnedMemoryPool, "BaseMemory": BaseMemory,
    "UnownedMemory": UnownedMemory, "get_current_stream": get_current_stream, "get_device_id": get_device_id,
    "is_available": is_available, "alloc": alloc, "get_elapsed_time": get_elapsed_time,
}
_MEMORY_SPECIAL = {
    "BaseMemory": BaseMemory, "Memory": Memory, "MemoryPointer": MemoryPointer, "MemoryPool": MemoryPool,
    "PooledMemory": PooledMemory, "UnownedMemory": UnownedMemory, "OutOfMemoryError": OutOfMemoryError,
    "CUDARuntimeError": CUDARuntimeError, "alloc": alloc,
}
_STREAM_SPECIAL = {"Stream": Stream, "Event": Event, "get_current_stream": get_current_stream,
                   "get_elapsed_time": get_elapsed_time}
_DEVICE_SPECIAL = {"Device": Device, "get_device_id": get_device_id}


# =====================================================================================
# the module objects
# =====================================================================================
class SimModule(types.ModuleType):
    """A module of the simulated ``cupy``: only the names of the CuPy snapshot, built
    lazily (numpy-backed wrappers) or taken from ``special``."""

    def __init__(self, name: str, special: dict[str, Any], resolve: Callable[[str, dict], Any] | None,
                 submodules: dict[str, "SimModule"] | None = None) -> None:
        super().__init__(name, f"{name} (plexnet's CuPy simulator: {LABEL} on the host, CuPy {CUPY_VERSION} "
                               f"namespace)")
        self.__dict__["_names"] = _MODULES.get(name, {})
        self.__dict__["_special"] = special
        self.__dict__["_resolve"] = resolve
        for k, v in (submodules or {}).items():
            self.__dict__[k] = v

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        names = self.__dict__["_names"]
        special = self.__dict__["_special"]
        if name in special:
            v = special[name]
        elif name in names:
            resolve = self.__dict__["_resolve"]
            v = resolve(name, names[name]) if resolve is not None else None
            if v is None:
                raise _not_simulated(f"{self.__name__}.{name}")
        else:
            raise _no_such(self.__name__, name)
        self.__dict__[name] = v
        return v

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__["_names"]) | set(self.__dict__["_special"]))

    def __repr__(self) -> str:
        return f"<module '{self.__name__}' (plexnet's CuPy simulator: {LABEL} on the host)>"


def _resolve_top(name: str, ent: dict) -> Any:
    kind = ent["kind"]
    if name in _KERNEL_CLASSES:
        return _not_simulated_callable(f"cupy.{name}", "custom CUDA kernels need a GPU")
    if name in _CONSTANTS:
        return _CONSTANTS[name]
    target = _ALIASES.get(name, name)
    npobj = getattr(np, target, None)
    if kind == "ufunc":
        if not isinstance(npobj, np.ufunc):
            return None
        return ufunc(name, npobj, ent.get("nin", npobj.nin), ent.get("nout", npobj.nout))
    if kind == "function":
        if npobj is None or not callable(npobj):
            if name == "asfarray":
                return lambda a, dtype=np.float64: asarray(a, dtype=dtype if np.dtype(dtype).kind in "fc"
                                                           else np.float64)
            return None
        return _make_function(f"cupy.{name}", name, npobj, ent.get("params"))
    if kind in ("scalar_type", "constant", "exception"):
        if npobj is None and kind == "exception":
            npobj = getattr(np.exceptions, name, None)
        return npobj
    return None  # classes, objects and modules not listed as special are not simulated


def _resolve_from(npmod: Any, qual: str) -> Callable[[str, dict], Any]:
    def resolve(name: str, ent: dict) -> Any:
        npobj = getattr(npmod, name, None)
        if ent["kind"] == "function" and callable(npobj):
            return _make_function(f"{qual}.{name}", name, npobj, ent.get("params"))
        if ent["kind"] in ("exception", "constant", "scalar_type"):
            return npobj
        return None
    return resolve


def _build() -> SimModule:
    runtime = SimModule("cupy.cuda.runtime", _RUNTIME_SPECIAL, None)
    memory = SimModule("cupy.cuda.memory", _MEMORY_SPECIAL, None)
    stream = SimModule("cupy.cuda.stream", _STREAM_SPECIAL, None)
    device = SimModule("cupy.cuda.device", _DEVICE_SPECIAL, None)
    cuda = SimModule("cupy.cuda", _CUDA_SPECIAL, None,
                     {"runtime": runtime, "memory": memory, "stream": stream, "device": device})
    rnd_special: dict[str, Any] = {"RandomState": RandomState, "get_random_state": get_random_state,
                                   "set_random_state": set_random_state, "reset_states": reset_states,
                                   "seed": _random_seed}
    for n, ent in _MODULES["cupy.random"].items():
        if ent["kind"] == "function" and n not in rnd_special and hasattr(RandomState, n):
            rnd_special[n] = _random_function(n)
    random = SimModule("cupy.random", rnd_special, None)
    linalg = SimModule("cupy.linalg", {}, _resolve_from(np.linalg, "cupy.linalg"))
    fft = SimModule("cupy.fft", {}, _resolve_from(np.fft, "cupy.fft"))
    stride_tricks = SimModule("cupy.lib.stride_tricks", {}, _resolve_from(np.lib.stride_tricks,
                                                                        "cupy.lib.stride_tricks"))
    lib = SimModule("cupy.lib", {}, None, {"stride_tricks": stride_tricks})
    top = SimModule("cupy", dict(_SPECIAL_TOP), _resolve_top,
                    {"cuda": cuda, "random": random, "linalg": linalg, "fft": fft, "lib": lib})
    top.__dict__["__version__"] = CUPY_VERSION
    top.__dict__["__plexnet_simulator__"] = (f"{LABEL}: plexnet's CuPy simulator (numpy on the host, CuPy "
                                             f"{CUPY_VERSION} namespace); not a GPU")
    return top


_install_ndarray_methods()
_install_operators()
reset()
cupy: SimModule = _build()
module = cupy
