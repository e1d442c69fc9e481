"""``cupy.cuda.Stream`` and ``cupy.cuda.Event`` of the simulator: the calling thread's
current stream per device (``Stream.use()``, ``with stream:``), and the ordering that
synchronisation, events and the legacy default stream give (``hazards``)."""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable

from . import runtime
from .hazards import SState, all_states

_ptr_counter = itertools.count(0x1000, 0x10)


def _stack(rt: runtime._Runtime) -> list:
    """The calling thread's ``with stream:`` stack of (device, previous stream)."""
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
        rt = runtime.RT
        self.device_id = rt.device()
        self.ptr = next(_ptr_counter)
        kind = "non-blocking" if non_blocking else "blocking"
        self._st = SState(f"<{kind} stream 0x{self.ptr:x} of device {self.device_id}, created on thread "
                          f"{threading.current_thread().name!r}>", self.device_id, kind)
        all_states[self.ptr] = self._st
        if not non_blocking:
            rt.blocking[self.device_id].add(self._st)

    def _state(self, dev: int | None = None) -> SState:
        rt = runtime.RT
        return rt.state_of(self, rt.device() if dev is None else dev)

    def _check_device(self) -> int:
        cur = runtime.RT.device()
        if self.device_id not in (-1, cur):
            raise RuntimeError(f"The device that the stream is created on ({self.device_id}) does not match "
                               f"with the current device ({cur})")
        return cur

    def use(self) -> "Stream":
        cur = self._check_device()
        runtime.RT.streams()[cur] = self
        return self

    def __enter__(self) -> "Stream":
        cur = self._check_device()
        rt = runtime.RT
        st = rt.streams()
        _stack(rt).append((cur, st.get(cur, Stream.null)))
        st[cur] = self
        return self

    def __exit__(self, *exc: Any) -> None:
        rt = runtime.RT
        cur, prev = _stack(rt).pop()
        rt.streams()[cur] = prev

    def synchronize(self) -> None:
        runtime.RT.sync(self._state(self.device_id if self.device_id >= 0 else None))

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
        rt = runtime.RT
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


def current_stream(dev: int | None = None) -> Stream:
    """The calling thread's current stream on ``dev`` (default: the current device)."""
    rt = runtime.RT
    return rt.streams().get(rt.device() if dev is None else dev, Stream.null)


class Event:
    """``cupy.cuda.Event``: ``record(stream)``, ``synchronize()``, ``done``."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.ptr = next(_ptr_counter)
        self._st: SState | None = None
        self._seq = 0
        self._clock: dict[SState, int] = {}

    def record(self, stream: Stream | None = None) -> None:
        rt = runtime.RT
        s = stream if stream is not None else current_stream()
        st = s._state(s.device_id if s.device_id >= 0 else None)
        with rt.lock:
            self._st, self._seq, self._clock = st, st.seq, dict(st.clock)

    def synchronize(self) -> None:
        if self._st is None:
            return
        rt = runtime.RT
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
    return current_stream(None if device_id < 0 else device_id)


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    return 0.0
