"""Stream ordering and the hazard checker: what a GPU would only know after a
synchronisation. Every kernel, copy and transfer is an operation enqueued on a stream
(``SState``); each allocation remembers its last write and the reads since; using it
on a stream that is not ordered after them is a simulated race (``StreamHazardError``,
or a ``StreamHazardWarning`` / nothing with ``PLEXNET_CUDA_SIMULATE_HAZARDS=warn|off``)."""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Iterable

from .errors import StreamHazardError, StreamHazardWarning

if TYPE_CHECKING:
    from .memory import BaseMemory


class SState:
    """Ordering state of one stream on one device (for the hazard checker)."""

    __slots__ = ("label", "dev", "kind", "seq", "done", "clock", "__weakref__")

    def __init__(self, label: str, dev: int, kind: str) -> None:
        self.label = label
        self.dev = dev
        self.kind = kind  # "legacy" | "blocking" | "non-blocking" | "per-thread"
        self.seq = 0       # operations enqueued so far
        self.done = 0      # operations the host knows are finished (synchronised)
        self.clock: dict[SState, int] = {}  # operations of other streams this one waits for

    def __repr__(self) -> str:
        return self.label


#: stream ptr -> state of every non-legacy stream (cleared by ``reset``)
all_states: dict[int, SState] = {}


class StreamOrdering:
    """The ordering half of the simulated runtime (``runtime._Runtime`` mixes it in):
    uses its ``lock``, ``legacy`` / ``blocking`` stream states per device, ``hazards``
    mode, ``stats`` and ``hazard_log``."""

    lock: Any
    legacy: list[SState]
    blocking: list[Any]
    hazards: str
    stats: Any
    hazard_log: Any

    def _enqueue(self, st: SState) -> int:
        st.seq += 1
        if st.kind == "legacy":
            for b in self.blocking[st.dev]:
                self._merge(st, b)
        elif st.kind == "blocking":
            self._merge(st, self.legacy[st.dev])
        return st.seq

    @staticmethod
    def _merge(st: SState, other: SState) -> None:
        c = st.clock
        if c.get(other, 0) < other.seq:
            c[other] = other.seq
        for k, v in other.clock.items():
            if k is not st and c.get(k, 0) < v:
                c[k] = v

    @staticmethod
    def _ordered(ws: SState, wn: int, st: SState) -> bool:
        return ws is st or ws.done >= wn or st.clock.get(ws, 0) >= wn

    def sync(self, st: SState) -> None:
        """The host waited for every operation enqueued on ``st`` so far."""
        with self.lock:
            st.done = st.seq
            for k, v in st.clock.items():
                if k.done < v:
                    k.done = v
            self.stats["synchronize"] += 1

    def sync_device(self, d: int) -> None:
        with self.lock:
            for st in list(all_states.values()) + [self.legacy[d]]:
                if st.dev == d:
                    st.done = st.seq
            self.stats["synchronize"] += 1

    def _hazard(self, kind: str, what: str, m: "BaseMemory", other: SState, n: int, st: SState) -> None:
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

    def record(self, st: SState, what: str, reads: Iterable["BaseMemory"], writes: Iterable["BaseMemory"],
               fresh: Iterable["BaseMemory"] = ()) -> None:
        """Enqueue one operation on ``st`` that reads/writes these allocations."""
        if self.hazards == "off":
            return
        with self.lock:
            n = self._enqueue(st)
            ordered = self._ordered
            # a zero-byte allocation holds no memory: nothing on it can race (zero-size
            # arrays, which numpy shape semantics allow)
            reads = [m for m in reads if m.size]
            writes = [m for m in writes if m.size]
            fresh = [m for m in fresh if m.size]
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
