"""The simulated devices' process-wide state: configuration from the environment
(``PLEXNET_CUDA_SIMULATE`` and its ``_MEMORY`` / ``_PEER`` / ``_HAZARDS`` variants), the
calling thread's current device and streams, device memory accounting, and the
device checks of a kernel.

``RT`` is the one runtime in use; ``reset()`` replaces it. Other modules read it as
``runtime.RT`` at call time (never ``from .runtime import RT``, which would keep the
one of import time); allocations keep the runtime they were accounted in."""
from __future__ import annotations

import collections
import os
import threading
import warnings
from typing import TYPE_CHECKING, Any

from .errors import CUDARuntimeError, OutOfMemoryError, PerformanceWarning
from .hazards import SState, StreamOrdering, all_states

if TYPE_CHECKING:
    from .arrays import ndarray
    from .memory import BaseMemory
    from .streams import Stream

ENV = "PLEXNET_CUDA_SIMULATE"


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


class _Runtime(StreamOrdering):
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
        self.legacy = [SState(f"<legacy default stream of device {d}>", d, "legacy") for d in range(self.n)]
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

    def streams(self) -> dict[int, "Stream"]:
        """The calling thread's current stream per device (absent: the null stream)."""
        s = getattr(self.tls, "cur", None)
        if s is None:
            s = self.tls.cur = {}
        return s

    def state_of(self, stream: "Stream", dev: int) -> SState:
        st = stream._st
        return self.legacy[dev] if st is None else st

    def current_state(self, dev: int | None = None) -> SState:
        """Ordering state of the calling thread's current stream on ``dev`` (default:
        the current device); the legacy stream's while the null stream is current."""
        d = self.device() if dev is None else dev
        s = self.streams().get(d)
        return self.legacy[d] if s is None else self.state_of(s, d)

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
            self.record(self.current_state(dev), what, [x._m for x in reads], [x._m for x in writes],
                        [x._m for x in fresh])


RT: _Runtime = None  # type: ignore[assignment]  # set by reset() below


def _config_from_env(num_devices: int | None = None) -> dict[str, Any]:
    n = requested_devices() if num_devices is None else num_devices
    mem = os.environ.get(f"{ENV}_MEMORY", "").strip()
    peer = os.environ.get(f"{ENV}_PEER", "0").strip().lower() not in ("", "0", "false", "no", "off")
    hazards = os.environ.get(f"{ENV}_HAZARDS", "raise").strip().lower() or "raise"
    return {"num_devices": max(1, n), "memory_bytes": _parse_bytes(mem) if mem else 2 << 30,
            "peer_access": peer, "hazards": hazards}


def reset(num_devices: int | None = None, memory_bytes: int | None = None, peer_access: bool | None = None,
          hazards: str | None = None) -> _Runtime:
    """(Re)initialise the simulated devices. Arguments default to the environment
    (``PLEXNET_CUDA_SIMULATE``, ``..._MEMORY``, ``..._PEER``, ``..._HAZARDS``). Arrays made
    before a reset keep their (old) accounting; tests reset between cases."""
    global RT
    cfg = _config_from_env(num_devices)
    if memory_bytes is not None:
        cfg["memory_bytes"] = int(memory_bytes)
    if peer_access is not None:
        cfg["peer_access"] = bool(peer_access)
    if hazards is not None:
        cfg["hazards"] = hazards
    all_states.clear()
    RT = _Runtime(**cfg)
    return RT


def runtime_state() -> _Runtime:
    return RT


def stats() -> dict[str, int]:
    """Counters of the simulated runtime: kernels, h2d/d2h/d2d copies, synchronize,
    hazards (only non-zero with ``PLEXNET_CUDA_SIMULATE_HAZARDS=warn``)."""
    return dict(RT.stats)


reset()
