"""The profiler (``plexnet.profiler``, MXNet 1.x ``mx.profiler``).

It observes the dependency engine: while it runs, every operation the engine executes
is recorded with its name, device, engine worker, start time and duration, and
``dump()`` writes a Chrome trace (``traceEvents`` JSON) that opens in
https://ui.perfetto.dev or ``chrome://tracing``: one process row per device
(``cpu(0)``, ``gpu(0)`` ...), one thread row per engine worker, ``ph: "X"`` complete
events in microseconds::

    import plexnet as mx
    mx.profiler.set_config(filename="trace.json", profile_all=True, aggregate_stats=True)
    mx.profiler.set_state("run")
    ...                                 # train, predict
    mx.nd.waitall()
    mx.profiler.set_state("stop")
    mx.profiler.dump()                  # writes trace.json
    print(mx.profiler.dumps())          # per-operator totals as a table (needs aggregate_stats)

How it hooks in: the profiler subscribes ``_observers`` with
``plexnet.engine.add_observer_source``; it returns the profiler's engine observer while the
state is ``run`` and nothing otherwise; ``set_state`` calls ``plexnet.engine.refresh_observers()``
so the engine picks the change up. When the profiler is stopped the engine has no
observer at all, so profiling costs nothing unless it is on.

Other observers come from plugins through the ``plexnet_engine_observers`` hook (see
``plexnet.hookspecs``): return objects with ``on_start(name, ctx, worker) -> token`` and
``on_end(token)``; ``EngineObserver`` below is the base class to subclass, and
``ChromeTraceRecorder`` a ready-made recorder a plugin can reuse for its own trace.

Environment: ``PLEXNET_PROFILER_AUTOSTART=1`` (or MXNet's ``MXNET_PROFILER_AUTOSTART``)
starts the profiler when the engine starts and dumps the trace at exit.
"""
from __future__ import annotations

import atexit
import json
import os
import threading
import time
import warnings
from typing import Any

from . import engine
from .base import MXNetError

__all__ = ["set_kvstore_handle", "profiler_kvstore_handle",
           "set_config", "set_state", "get_state", "dump", "dumps", "pause", "resume", "EngineObserver",
           "ChromeTraceRecorder", "Domain", "Task", "Frame", "Event", "Counter", "Marker", "scope",
           "profiler_set_config", "profiler_set_state", "dump_profile"]

_CONFIG_KEYS = {
    "filename": str, "profile_all": bool, "profile_symbolic": bool, "profile_imperative": bool,
    "profile_memory": bool, "profile_api": bool, "continuous_dump": bool, "dump_period": float,
    "aggregate_stats": bool, "profile_process": str,
}
_DEFAULTS: dict[str, Any] = {
    "filename": "profile.json", "profile_all": False, "profile_symbolic": True, "profile_imperative": True,
    "profile_memory": False, "profile_api": False, "continuous_dump": False, "dump_period": 1.0,
    "aggregate_stats": False, "profile_process": "worker",
}


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


class EngineObserver:
    """Base class of engine observers (the ``plexnet_engine_observers`` contract).

    The engine calls ``on_start(name, ctx, worker)`` on the worker thread right before
    it runs an operation and ``on_end(token)`` when the operation completed, with
    whatever ``on_start`` returned. Both must be fast and thread-safe and must not
    raise; they must not push to or wait on the engine.
    """

    def on_start(self, name: str, ctx: Any, worker: str) -> Any:  # pragma: no cover - interface
        return None

    def on_end(self, token: Any) -> None:  # pragma: no cover - interface
        pass


class ChromeTraceRecorder(EngineObserver):
    """Records engine operations as Chrome-trace complete events.

    ``events()`` returns the ``traceEvents`` list (metadata events naming the processes
    and threads first), ``trace()`` the whole JSON object. Devices map to ``pid``\\ s and
    ``(device, worker)`` pairs to ``tid``\\ s in order of first appearance.
    """

    def __init__(self, category: str = "operator", memory: bool = False) -> None:
        self.category = category
        self.memory = memory
        self._lock = threading.Lock()
        self._records: list[tuple] = []  # (name, ctx_label, worker, t0_us, t1_us)
        self._counters: list[tuple] = []  # (name, ctx_label, ts_us, args)
        self._instants: list[tuple] = []  # (name, scope, ts_us, thread)
        self._user: list[tuple] = []  # (name, domain, t0_us, t1_us, thread)
        self.t0 = _now_us()
        self._agg_from: tuple[int, int, int] = (0, 0, 0)

    # -- the observer -----------------------------------------------------------------------
    def on_start(self, name: str, ctx: Any, worker: str) -> Any:
        return (name, ctx, worker, _now_us())

    def on_end(self, token: Any) -> None:
        if token is None:
            return
        name, ctx, worker, t0 = token
        t1 = _now_us()
        self._records.append((name, _ctx_label(ctx), str(worker), t0, t1))  # list.append is atomic
        if self.memory:
            mem = _memory_in_use(ctx)
            if mem is not None:
                self._counters.append(("memory", _ctx_label(ctx), t1, {"bytes_in_use": mem}))

    # -- user annotations -------------------------------------------------------------------
    def add_range(self, name: str, domain: str, t0: float, t1: float, stat_domain: str | None = None) -> None:
        """A user range in the trace's ``domain`` row; ``stat_domain`` groups it in
        ``aggregate`` (default ``domain``)."""
        self._user.append((name, domain, t0, t1, threading.current_thread().name, stat_domain or domain))

    def add_counter(self, name: str, domain: str, value: float) -> None:
        self._counters.append((name, f"domain:{domain}", _now_us(), {name: value}))

    def add_instant(self, name: str, scope: str) -> None:
        self._instants.append((name, scope, _now_us(), threading.current_thread().name))

    # -- output -----------------------------------------------------------------------------
    def clear(self) -> None:
        with self._lock:
            self._records = []
            self._counters = []
            self._instants = []
            self._user = []
            self._agg_from = (0, 0, 0)

    def __len__(self) -> int:
        return len(self._records)

    def events(self) -> list[dict]:
        """The ``traceEvents`` list."""
        pids: dict[str, int] = {}
        tids: dict[tuple, int] = {}
        meta: list[dict] = []
        body: list[dict] = []
        base = self.t0

        def pid_of(label: str) -> int:
            p = pids.get(label)
            if p is None:
                p = pids[label] = len(pids)
                meta.append({"name": "process_name", "ph": "M", "pid": p, "tid": 0, "args": {"name": label}})
                meta.append({"name": "process_sort_index", "ph": "M", "pid": p, "tid": 0,
                             "args": {"sort_index": p}})
            return p

        def tid_of(p: int, thread: str) -> int:
            key = (p, thread)
            t = tids.get(key)
            if t is None:
                t = tids[key] = len(tids)
                meta.append({"name": "thread_name", "ph": "M", "pid": p, "tid": t, "args": {"name": thread}})
            return t

        for name, label, worker, t0, t1 in list(self._records):
            p = pid_of(label)
            body.append({"name": name, "cat": self.category, "ph": "X", "ts": round(t0 - base, 3),
                         "dur": round(max(t1 - t0, 0.0), 3), "pid": p, "tid": tid_of(p, worker),
                         "args": {"device": label, "worker": worker}})
        for name, domain, t0, t1, thread, _stat in list(self._user):
            p = pid_of(f"domain:{domain}")
            body.append({"name": name, "cat": domain, "ph": "X", "ts": round(t0 - base, 3),
                         "dur": round(max(t1 - t0, 0.0), 3), "pid": p, "tid": tid_of(p, thread)})
        for name, label, ts, args in list(self._counters):
            p = pid_of(label)
            body.append({"name": name, "ph": "C", "ts": round(ts - base, 3), "pid": p, "tid": 0, "args": args})
        for name, sc, ts, thread in list(self._instants):
            p = pid_of("markers")
            body.append({"name": name, "ph": "i", "s": sc, "ts": round(ts - base, 3), "pid": p,
                         "tid": tid_of(p, thread)})
        body.sort(key=lambda e: e["ts"])
        return meta + body

    def trace(self) -> dict:
        return {"traceEvents": self.events(), "displayTimeUnit": "ms",
                "otherData": {"producer": "plexnet.profiler", "time_unit": "us"}}

    def aggregate(self, reset: bool = False) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
        """MXNet's aggregate statistics: ``{"Time": {domain: {name: {count, total, min,
        max, avg}}}, "Memory": {"Device Storage": {"Memory: cpu/0": {count, min, max,
        avg}}}}``, times in ms, memory in kB. Engine operations are under "operator"
        (those a custom operator's callbacks ran, named ``op::name``, and the callbacks
        themselves under "Custom Operator"); user ranges under their domain, frames under
        "<domain>,frame", events under "event". Counts what came since the last reset."""
        f_rec, f_user, f_cnt = self._agg_from
        recs, users, cnts = list(self._records), list(self._user), list(self._counters)
        time: dict[str, dict[str, dict[str, float]]] = {}

        def add(domain: str, name: str, d: float) -> None:
            s = time.setdefault(domain, {}).get(name)
            if s is None:
                time[domain][name] = {"count": 1, "total": d, "min": d, "max": d}
            else:
                s["count"] += 1
                s["total"] += d
                s["min"] = min(s["min"], d)
                s["max"] = max(s["max"], d)

        for name, _label, _w, t0, t1 in recs[f_rec:]:
            add("Custom Operator" if "::" in name else "operator", name, (t1 - t0) / 1000.0)
        for name, _dom, t0, t1, _th, stat in users[f_user:]:
            add(stat, name, (t1 - t0) / 1000.0)
        for ops in time.values():
            for st in ops.values():
                st["avg"] = st["total"] / st["count"]
        mem: dict[str, dict[str, float]] = {}
        for name, label, _ts, args in cnts[f_cnt:]:
            if name != "memory" or "bytes_in_use" not in args:
                continue
            kb = args["bytes_in_use"] / 1000.0
            key = "Memory: " + label.replace("(", "/").rstrip(")")
            m = mem.get(key)
            if m is None:
                mem[key] = {"count": 1, "min": kb, "max": kb, "total": kb}
            else:
                m["count"] += 1
                m["min"] = min(m["min"], kb)
                m["max"] = max(m["max"], kb)
                m["total"] += kb
        for m in mem.values():
            m["avg"] = m.pop("total") / m["count"]
        if reset:
            self._agg_from = (len(recs), len(users), len(cnts))
        return {"Time": time, "Memory": {"Device Storage": mem} if mem else {}}


def _ctx_label(ctx: Any) -> str:
    if ctx is None:
        return "unknown"
    dt = getattr(ctx, "device_type", None)
    if dt is None:
        return str(ctx)
    return f"{dt}({getattr(ctx, 'device_id', 0)})"


def _memory_in_use(ctx: Any) -> int | None:
    try:
        from . import storage
        m = storage.get()._managers.get(ctx)
        return None if m is None else int(m.stats().bytes_in_use)
    except Exception:  # noqa: BLE001 - never fail an engine op for a counter
        return None


# -- the process-wide profiler ---------------------------------------------------------------
class _Profiler:
    def __init__(self) -> None:
        self.config = dict(_DEFAULTS)
        self.state = "stop"
        self.paused = False
        self.recorder = ChromeTraceRecorder()
        self.lock = threading.RLock()
        self.finished = False
        self._dumper: threading.Thread | None = None

    def observers(self) -> list:
        if self.state == "run" and not self.paused:
            return [self.recorder]
        return []


_prof = _Profiler()


def _observers() -> list:
    """The observers the engine should install now (called by
    ``plexnet.engine.refresh_observers``)."""
    return _prof.observers()


def _refresh() -> None:
    engine.refresh_observers()


engine.add_observer_source(_observers)


#: the kvstore whose servers ``profile_process='server'`` calls go to (``set_kvstore_handle``)
profiler_kvstore_handle: Any = None
#: command head of those calls (MXNet's ``kSetProfilerParams``); a dist kvstore's
#: ``_send_command_to_servers`` runs the body on each server's own profiler
SERVER_COMMAND = 5


def set_kvstore_handle(handle: Any) -> None:
    """The kvstore (``kv.handle``) whose servers ``profile_process='server'`` profiles."""
    global profiler_kvstore_handle
    profiler_kvstore_handle = handle


def _on_servers(call: str, profile_process: str, **kwargs: Any) -> Any:
    """``profile_process='server'``: run ``call`` on every server of the kvstore given to
    ``set_kvstore_handle`` (each server profiles itself and writes its own file,
    ``rank<server>_<filename>``); ``None`` for the worker's own profiler."""
    _check_process(profile_process)
    if profile_process == "worker":
        return None
    kv = profiler_kvstore_handle
    if kv is None or not str(getattr(kv, "type", "")).startswith("dist"):
        raise MXNetError(f"profiler.{call}(profile_process='server'): servers exist only for a dist kvstore; "
                         f"call mx.profiler.set_kvstore_handle(kv.handle) with one first "
                         f"(got {getattr(kv, 'type', None)!r})")
    return kv._send_command_to_servers(SERVER_COMMAND, json.dumps({"call": call, "kwargs": kwargs}))


def _check_process(profile_process: str) -> None:
    if profile_process not in ("worker", "server"):
        raise ValueError(f"profile_process must be 'worker' or 'server', got {profile_process!r}")


def _as_bool(key: str, v: Any) -> bool:
    if isinstance(v, str):
        lv = v.strip().lower()
        if lv in ("1", "true", "yes", "on"):
            return True
        if lv in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"profiler.set_config: {key} must be a boolean, got {v!r}")
    return bool(v)


def set_config(**kwargs: Any) -> None:
    """Configure the profiler (keyword arguments only, as MXNet):

    ``filename`` (trace file, default ``profile.json``), ``profile_all``,
    ``profile_symbolic``, ``profile_imperative`` (plexnet records every engine operation
    whenever the profiler runs; these are accepted for compatibility), ``profile_memory``
    (adds a ``memory`` counter track per device: bytes in use after each operation),
    ``profile_api``, ``aggregate_stats`` (``dumps()`` returns statistics only with it on),
    ``continuous_dump`` + ``dump_period`` (seconds: rewrite the trace file
    periodically while running), ``profile_process`` (``'worker'``, or ``'server'``: the
    other options go to the servers of the kvstore given to ``set_kvstore_handle``).
    """
    unknown = sorted(set(kwargs) - set(_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"profiler.set_config: unknown option(s) {', '.join(unknown)}; "
                         f"valid: {', '.join(sorted(_CONFIG_KEYS))}")
    if kwargs.get("profile_process") == "server":
        _on_servers("set_config", "server", **{k: v for k, v in kwargs.items() if k != "profile_process"})
        return
    with _prof.lock:
        for k, v in kwargs.items():
            t = _CONFIG_KEYS[k]
            if t is bool:
                v = _as_bool(k, v)
            elif t is float:
                v = float(v)
                if v <= 0:
                    raise ValueError(f"profiler.set_config: {k} must be > 0, got {v}")
            else:
                v = os.fspath(v) if k == "filename" else str(v)
            _prof.config[k] = v
        _check_process(_prof.config["profile_process"])
        if _prof.config["profile_all"]:
            for k in ("profile_symbolic", "profile_imperative", "profile_memory", "profile_api"):
                _prof.config[k] = True
        _prof.recorder.memory = bool(_prof.config["profile_memory"])


def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """Deprecated MXNet spelling of ``set_config`` (warns as MXNet does)."""
    warnings.warn("profiler.profiler_set_config() is deprecated. Please use profiler.set_config() instead",
                  stacklevel=2)
    set_config(**{f"profile_{mode}": True, "filename": filename})


def get_state() -> str:
    """``'run'`` or ``'stop'``."""
    return _prof.state


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """Start (``'run'``) or stop (``'stop'``) recording engine operations."""
    if state not in ("run", "stop"):
        raise ValueError(f"profiler state must be 'run' or 'stop', got {state!r}")
    if _on_servers("set_state", profile_process, state=state) is not None:
        return
    with _prof.lock:
        if state == "run" and _prof.finished:
            _prof.recorder.clear()
            _prof.finished = False
        if state == "run" and _prof.state != "run":
            if len(_prof.recorder) == 0:
                _prof.recorder.t0 = _now_us()
        _prof.state = state
        _prof.paused = False
    _refresh()
    if state == "run" and _prof.config.get("continuous_dump"):
        _start_continuous_dump()


def profiler_set_state(state: str = "stop") -> None:
    """Deprecated MXNet spelling of ``set_state`` (warns as MXNet does)."""
    warnings.warn("profiler.profiler_set_state() is deprecated. Please use profiler.set_state() instead",
                  stacklevel=2)
    set_state(state)


def pause(profile_process: str = "worker") -> None:
    """Stop recording without ending the session (``resume`` continues)."""
    if _on_servers("pause", profile_process) is not None:
        return
    with _prof.lock:
        _prof.paused = True
    _refresh()


def resume(profile_process: str = "worker") -> None:
    """Continue recording after ``pause``."""
    if _on_servers("resume", profile_process) is not None:
        return
    with _prof.lock:
        _prof.paused = False
    _refresh()


def _write_trace(fname: str) -> None:
    from .fileio import atomic_write
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    atomic_write(fname, json.dumps(_prof.recorder.trace()))


def dump(finished: bool = True, profile_process: str = "worker") -> str:
    """Write the trace collected so far to the configured file (atomically) and return
    its name. ``finished=True`` ends the session: recording stops and the next
    ``set_state('run')`` starts a fresh trace. With ``profile_process='server'`` each
    server writes its own file; their names are returned, comma-separated."""
    names = _on_servers("dump", profile_process, finished=finished)
    if names is not None:
        return ",".join(names)
    with _prof.lock:
        fname = _prof.config["filename"]
        _write_trace(fname)
        if finished:
            _prof.state = "stop"
            _prof.finished = True
    if finished:
        _refresh()
    return fname


def dump_profile() -> str:
    """Deprecated MXNet spelling of ``dump`` (warns as MXNet does)."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead", stacklevel=2)
    return dump(True)


_TIME_KEYS = (("Count", "count"), ("Total", "total"), ("Min", "min"), ("Max", "max"), ("Avg", "avg"))
_MEM_KEYS = (("Count", "count"), ("Min", "min"), ("Max", "max"), ("Avg", "avg"))


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total", ascending: bool = False) -> str:
    """MXNet's aggregate statistics as a table or (``format='json'``) a JSON string:
    ``{"Time": {domain: {name: {Count, Total, Min, Max, Avg}}}, "Memory": {"Device
    Storage": {...}}, "Unit": {"Time": "ms", "Memory": "kB"}}``, each domain's entries
    ordered by ``sort_by`` (``ascending`` or not). ``reset`` starts the next statistics
    afresh (the trace file keeps everything)."""
    if format not in ("table", "json"):
        raise ValueError(f"Invalid value provided for format: {format}. Support: 'table', 'json'")
    if sort_by not in ("total", "avg", "min", "max", "count"):
        raise ValueError(f"Invalid value provided for sort_by: {sort_by}. Support: 'total', 'avg', 'min', "
                         f"'max', 'count'")
    if not _prof.config["aggregate_stats"]:
        return ""      # as MXNet: no statistics are gathered without aggregate_stats
    agg = _prof.recorder.aggregate(reset=reset)
    mem_key = "avg" if sort_by == "total" else sort_by       # memory entries have no total

    def ordered(items: dict, key: str) -> list:
        return sorted(items.items(), key=lambda kv: kv[1][key], reverse=not ascending)

    time = {dom: ordered(agg["Time"][dom], sort_by) for dom in sorted(agg["Time"])}
    mem = {dom: ordered(agg["Memory"][dom], mem_key) for dom in sorted(agg["Memory"])}
    if format == "json":
        out = {"Time": {d: {n: {k: round(st[f], 4) for k, f in _TIME_KEYS} for n, st in items}
                        for d, items in time.items()},
               "Memory": {d: {n: {k: round(st[f], 4) for k, f in _MEM_KEYS} for n, st in items}
                          for d, items in mem.items()},
               "Unit": {"Time": "ms", "Memory": "kB"}}
        return json.dumps(out, indent=1)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for dom, items in mem.items():
        lines += [dom, "=" * 17, f"{'Name':<30}{'Total Count':>11}{'Min Use  (kB)':>17}{'Max Use  (kB)':>17}"
                  f"{'Avg Use  (kB)':>17}", f"{'----':<30}{'-----------':>11}" + f"{'-------------':>17}" * 3]
        lines += [f"{n:<30}{int(st['count']):>11}{st['min']:>17.4f}{st['max']:>17.4f}{st['avg']:>17.4f}"
                  for n, st in items]
        lines.append("")
    for dom, items in time.items():
        lines += [dom, "=" * 17, f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}"
                  f"{'Max Time (ms)':>17}{'Avg Time (ms)':>17}",
                  f"{'----':<30}{'-----------':>11}{'---------':>17}" + f"{'-------------':>17}" * 3]
        lines += [f"{n:<30}{int(st['count']):>11}{st['total']:>17.4f}{st['min']:>17.4f}{st['max']:>17.4f}"
                  f"{st['avg']:>17.4f}" for n, st in items]
        lines.append("")
    return "\n".join(lines) + "\n"


def _start_continuous_dump() -> None:
    with _prof.lock:
        if _prof._dumper is not None and _prof._dumper.is_alive():
            return

        def loop() -> None:
            while _prof.state == "run":
                time.sleep(float(_prof.config["dump_period"]))
                if _prof.state != "run":
                    break
                try:
                    with _prof.lock:
                        _write_trace(_prof.config["filename"])
                except OSError:
                    pass
        _prof._dumper = threading.Thread(target=loop, name="plexnet-profiler-dump", daemon=True)
        _prof._dumper.start()


# -- user annotations (MXNet's Domain / Task / Frame / Event / Counter / Marker) ---------------
def _recording() -> bool:
    return _prof.state == "run" and not _prof.paused


class Domain:
    """A named group for user annotations (its own process row in the trace)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name

    def new_task(self, name: str) -> "Task":
        return Task(self, name)

    def new_frame(self, name: str) -> "Frame":
        return Frame(self, name)

    def new_counter(self, name: str, value: float | None = None) -> "Counter":
        return Counter(self, name, value)

    def new_marker(self, name: str) -> "Marker":
        return Marker(self, name)


class _Range:
    _domain_name = "python"

    def __init__(self, domain: Domain | None, name: str) -> None:
        self.domain = domain
        self.name = name
        self._t0: float | None = None

    def start(self) -> None:
        self._t0 = _now_us()

    def stop(self) -> None:
        if self._t0 is not None and _recording():
            dom = str(self.domain) if self.domain is not None else self._domain_name
            _prof.recorder.add_range(self.name, dom, self._t0, _now_us(), self._stat_domain(dom))
        self._t0 = None

    def _stat_domain(self, dom: str) -> str:
        """Where MXNet's aggregate statistics list this range."""
        return dom

    def __enter__(self) -> "_Range":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __str__(self) -> str:
        return self.name


class Task(_Range):
    """A user range (``start()`` / ``stop()`` or ``with``) in a domain."""


class Frame(_Range):
    """A user range (e.g. one iteration) in a domain."""

    def _stat_domain(self, dom: str) -> str:
        return dom + ",frame"


class Event(_Range):
    """A user range outside any domain."""

    def __init__(self, name: str) -> None:
        super().__init__(None, name)

    def _stat_domain(self, dom: str) -> str:
        return "event"


def scope(name: str = "<unk>:") -> Event:
    """``with profiler.scope('forward'):`` records a user range."""
    return Event(name)


class Counter:
    """A numeric track in the trace (``set_value``, ``increment``, ``decrement``)."""

    def __init__(self, domain: Domain, name: str, value: float | None = None) -> None:
        self.domain = domain
        self.name = name
        self.value = 0.0
        if value is not None:
            self.set_value(value)

    def set_value(self, value: float) -> None:
        self.value = value
        if _recording():
            _prof.recorder.add_counter(self.name, str(self.domain), value)

    def increment(self, delta: float = 1) -> None:
        self.set_value(self.value + delta)

    def decrement(self, delta: float = 1) -> None:
        self.set_value(self.value - delta)

    def __iadd__(self, delta: float) -> "Counter":
        self.increment(delta)
        return self

    def __isub__(self, delta: float) -> "Counter":
        self.decrement(delta)
        return self

    def __str__(self) -> str:
        return self.name


class Marker:
    """An instant event (``mark(scope='process'|'global'|'thread')``)."""

    def __init__(self, domain: Domain, name: str) -> None:
        self.domain = domain
        self.name = name

    def mark(self, scope: str = "process") -> None:
        s = {"process": "p", "global": "g", "thread": "t"}.get(scope)
        if s is None:
            raise ValueError(f"marker scope must be 'process', 'global' or 'thread', got {scope!r}")
        if _recording():
            _prof.recorder.add_instant(self.name, s)


# -- autostart ---------------------------------------------------------------------------------
def _autostart() -> None:
    v = os.environ.get("PLEXNET_PROFILER_AUTOSTART", os.environ.get("MXNET_PROFILER_AUTOSTART", ""))
    if v.strip() not in ("1", "true", "True"):
        return
    _prof.state = "run"
    _prof.recorder.t0 = _now_us()

    def _at_exit() -> None:
        try:
            if _prof.state == "run" and len(_prof.recorder):
                dump(True)
        except Exception:  # noqa: BLE001 - never fail interpreter exit
            pass
    atexit.register(_at_exit)


_autostart()
