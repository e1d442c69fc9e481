"""The single-machine kvstore types, an internal plugin.

Names (``mx.kv.create(name)``):

``local_update_cpu``
    gradients are summed on the CPU and the weight is updated there; pulls copy the
    CPU weight to every device. Best for many small weights.
``local_allreduce_cpu``
    gradients are summed on the CPU, the sum is copied back to each device that pushed
    and every device updates its own copy of the weight (k times the update work, but
    on the devices). Best for large weights.
``local_allreduce_device`` (alias ``device``)
    like ``local_allreduce_cpu`` but the sum is formed on one of the pushing devices,
    chosen per key to balance the bytes each device reduces (MXNet's ``CommDevice``).
    Best for huge gradients with fast device-to-device copies. 2-bit gradient
    compression is available in this mode (``set_gradient_compression``).
``local``
    chooses one of the three per key at the key's first push, from where the pushed
    values live and the key's size ``n`` (elements):

    * all values on the CPU: ``local_update_cpu`` (the three coincide there);
    * ``n >= PLEXNET_KVSTORE_DEVICE_BOUND`` (default 16 Mi elements, the bound MXNet's
      ``model._create_kvstore`` uses to stop updating on the kvstore):
      ``local_allreduce_device``;
    * ``n >= MXNET_KVSTORE_BIGARRAY_BOUND`` (default 1,000,000, MXNet's bound for
      "big" arrays): ``local_allreduce_cpu``;
    * otherwise ``local_update_cpu``.

All modes give the same values (up to float rounding of the summation order on
devices). Every copy, sum and update is an engine operation with exact read/write
dependencies, so ``push``/``pull`` return at once, pulls of one key wait for its pushes,
and different keys are reduced in parallel on the engine's workers.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from .. import engine as _engine
from ..base import ShapeError
from ..context import HOST_DEVICE_TYPES as _CPU_TYPES, Context
from ..hookspecs import hookimpl
from .base import KVStoreBase, KVStoreError, KVStoreKeyError, bigarray_bound
from .compression import roundtrip_2bit

__all__ = ["KVStoreLocal", "LOCAL_TYPES", "device_bound", "choose_mode"]

UPDATE_CPU = "local_update_cpu"
ALLREDUCE_CPU = "local_allreduce_cpu"
ALLREDUCE_DEVICE = "local_allreduce_device"

#: type name -> forced mode (None: chosen per key)
LOCAL_TYPES: dict[str, str | None] = {
    "local": None,
    UPDATE_CPU: UPDATE_CPU,
    ALLREDUCE_CPU: ALLREDUCE_CPU,
    ALLREDUCE_DEVICE: ALLREDUCE_DEVICE,
    "device": ALLREDUCE_DEVICE,
}

_CPU0 = Context("cpu", 0)


def device_bound() -> int:
    """Keys with at least this many elements are reduced on a device under ``local``."""
    v = os.environ.get("PLEXNET_KVSTORE_DEVICE_BOUND")
    return int(v) if v else 16 * 1024 * 1024


def choose_mode(size: int, contexts: Sequence[Context]) -> str:
    """The mode ``local`` uses for a key of ``size`` elements pushed from ``contexts``."""
    if all(c.device_type in _CPU_TYPES for c in contexts):
        return UPDATE_CPU
    if size >= device_bound():
        return ALLREDUCE_DEVICE
    if size >= bigarray_bound():
        return ALLREDUCE_CPU
    return UPDATE_CPU


def _empty(shape: tuple, ctx: Context, dtype: Any) -> Any:
    from ..ndarray import empty
    return empty(shape, ctx, dtype)


def _copy(src: Any, dst: Any, priority: int) -> None:
    """Engine copy ``dst[...] = src`` (same device: one op with priority)."""
    if src.context == dst.context and src.context.device_type in _CPU_TYPES:
        s, d = src._data, dst._data
        _engine.get().push_sync(lambda rc: rc.xp.copyto(d, s), dst.context, [src._chunk.var],
                                [dst._chunk.var], priority=priority, name="kvstore_copy")
    else:
        src.copyto(dst)


def _unique_ctxs(vals: Sequence[Any]) -> list[Context]:
    out: list[Context] = []
    for v in vals:
        if v.context not in out:
            out.append(v.context)
    return out


class _Entry:
    __slots__ = ("key", "shape", "dtype", "size", "value", "mode", "reduce_ctx", "merge", "replicas",
                 "gbufs", "staging", "residuals")

    def __init__(self, key: Any, value: Any) -> None:
        self.key = key
        self.shape = tuple(value.shape)
        self.dtype = value.dtype
        self.size = int(value.size)
        self.value = value              # the stored value (no replicas) / initial weight
        self.mode: str | None = None
        self.reduce_ctx: Context | None = None
        self.merge: Any = None          # sum buffer when an updater is set
        self.replicas: dict[Context, Any] = {}   # per-device weights (allreduce + updater)
        self.gbufs: dict[Context, Any] = {}      # the sum copied to each replica's device
        self.staging: dict[int, Any] = {}        # pushed values copied to the reduce device
        self.residuals: dict[int, Any] = {}      # compression residual per pushed position


class KVStoreLocal(KVStoreBase):
    """Single-process kvstore; see the module docstring for the modes."""

    def __init__(self, name: str = "local") -> None:
        name = name.lower()
        if name not in LOCAL_TYPES:
            raise ValueError(f"unknown local kvstore type {name!r}; choose one of {sorted(LOCAL_TYPES)}")
        super().__init__(name)
        self._forced = LOCAL_TYPES[name]
        self._entries: dict[Any, _Entry] = {}
        self._device_load: dict[Context, int] = {}
        self._updaters: dict[Context, Any] = {}
        self._loaded_states: bytes | None = None

    # -- introspection ---------------------------------------------------------------------------
    def mode_of(self, key: Any) -> str | None:
        """The mode used for ``key`` (None until its first push)."""
        return self._entry(key, "mode_of").mode

    def keys(self) -> list[Any]:
        return list(self._entries)

    def _entry(self, key: Any, what: str) -> _Entry:
        e = self._entries.get(key)
        if e is None:
            raise KVStoreKeyError(f"{what}: key {key!r} has not been initialised; call kv.init({key!r}, value) "
                                  f"first")
        return e

    # -- init ------------------------------------------------------------------------------------
    def _init_impl(self, items: Sequence[tuple[Any, Any]]) -> None:
        for k, _ in items:
            if k in self._entries:
                raise KVStoreKeyError(f"init: key {k!r} is already initialised; a key can be initialised once")
        for k, v in items:
            stored = _empty(tuple(v.shape), _CPU0, v.dtype)
            _copy(v, stored, 0)
            self._entries[k] = _Entry(k, stored)

    # -- push ------------------------------------------------------------------------------------
    def _push_impl(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int) -> None:
        entries = []
        for k, vals in pairs:
            e = self._entry(k, "push")
            for v in vals:
                if tuple(v.shape) != e.shape:
                    raise ShapeError(f"push: key {k!r} holds shape {e.shape}, the pushed value has shape "
                                     f"{tuple(v.shape)}")
            entries.append((e, vals))
        for e, vals in entries:
            if e.mode is None:
                self._resolve(e, vals)
            if self._updater is not None and e.mode == UPDATE_CPU and all(
                    getattr(v, "stype", "") == "row_sparse" for v in vals):
                # MXNet keeps the sum of row_sparse pushes row_sparse: lazy updates change its rows only
                self._update(e, _row_sparse_sum(vals, e.value.context), vals, priority)
                continue
            total = self._reduce(e, vals, priority)
            if self._updater is not None:
                self._update(e, total, vals, priority)

    def _resolve(self, e: _Entry, vals: Sequence[Any]) -> None:
        ctxs = _unique_ctxs(vals)
        mode = self._forced or choose_mode(e.size, ctxs)
        devs = [c for c in ctxs if c.device_type not in _CPU_TYPES]
        if mode == ALLREDUCE_DEVICE and devs:
            ctx = min(devs, key=lambda c: self._device_load.get(c, 0))
            self._device_load[ctx] = self._device_load.get(ctx, 0) + e.size
        else:
            ctx = _CPU0
        e.mode, e.reduce_ctx = mode, ctx
        if self._updater is None and e.value.context != ctx:
            moved = _empty(e.shape, ctx, e.dtype)
            _copy(e.value, moved, 0)
            e.value = moved

    def _compress(self) -> float | None:
        c = self._compression
        return c["threshold"] if c["type"] == "2bit" else None

    def _reduce(self, e: _Entry, vals: Sequence[Any], priority: int) -> Any:
        ctx = e.reduce_ctx
        assert ctx is not None
        if self._updater is None:
            if e.value.context != ctx:  # the updater was dropped after updates: move the value
                moved = _empty(e.shape, ctx, e.dtype)
                _copy(self._read_src(e, ctx), moved, priority)
                e.value = moved
                e.replicas.clear()
            target = e.value
            e.replicas.clear()
        else:
            if e.merge is None:
                e.merge = _empty(e.shape, ctx, e.dtype)
            target = e.merge
        srcs = []
        for i, v in enumerate(vals):
            if v.context == ctx:
                srcs.append(v)
                continue
            buf = e.staging.get(i)
            if buf is None or buf.dtype != v.dtype:
                buf = e.staging[i] = _empty(e.shape, ctx, v.dtype)
            _copy(v, buf, priority)
            srcs.append(buf)
        d = target._data
        s = [x._data for x in srcs]
        reads = [x._chunk.var for x in srcs]
        writes = [target._chunk.var]
        thr = self._compress()
        if thr is not None:
            res = []
            for i in range(len(srcs)):
                r = e.residuals.get(i)
                if r is None:
                    r = e.residuals[i] = _zeros(e.shape, ctx, e.dtype)
                res.append(r)
            rs = [r._data for r in res]
            writes += [r._chunk.var for r in res]

            def fn(rc: Any) -> None:
                xp = rc.xp
                tmp = xp.empty(d.shape, d.dtype)
                roundtrip_2bit(xp, s[0], rs[0], thr, d)
                for x, r in zip(s[1:], rs[1:]):
                    roundtrip_2bit(xp, x, r, thr, tmp)
                    xp.add(d, tmp, out=d)
        elif len(s) == 1:
            def fn(rc: Any) -> None:
                rc.xp.copyto(d, s[0])
        elif len(s) == 2:
            def fn(rc: Any) -> None:
                rc.xp.add(s[0], s[1], out=d)
        else:
            def fn(rc: Any) -> None:
                add = rc.xp.add
                add(s[0], s[1], out=d)
                for x in s[2:]:
                    add(d, x, out=d)
        _engine.get().push_sync(fn, ctx, reads, writes, priority=priority, name=f"kvstore_reduce[{e.key}]")
        return target

    def _update(self, e: _Entry, total: Any, vals: Sequence[Any], priority: int) -> None:
        if e.mode == UPDATE_CPU:
            self._updater_for(e.value.context)(e.key, total, e.value)
            return
        ctxs = _unique_ctxs(vals)
        upds = [self._updater_for(c) for c in ctxs]  # all before any update: equal starting states
        new = [c for c in ctxs if c not in e.replicas]
        if new:  # new devices start from the current weight
            src = self._read_src(e, new[0])
            for ctx in new:
                rep = _empty(e.shape, ctx, e.dtype)
                _copy(src, rep, priority)
                e.replicas[ctx] = rep
        for ctx, upd in zip(ctxs, upds):
            rep = e.replicas[ctx]
            if total.context == ctx:
                g = total
            else:
                g = e.gbufs.get(ctx)
                if g is None:
                    g = e.gbufs[ctx] = _empty(e.shape, ctx, e.dtype)
                _copy(total, g, priority)
            upd(e.key, g, rep)

    def _updater_for(self, ctx: Context) -> Any:
        u = self._updaters.get(ctx)
        if u is not None:
            return u
        from ..optimizer import Updater
        if not isinstance(self._updater, Updater) or not self._updaters:
            u = self._updater
        else:  # another device's own states, starting from the primary's
            u = Updater(self._updater.optimizer)
            data = self._loaded_states if self._loaded_states is not None else self._updater.get_states()
            u.set_states(data)
        self._updaters[ctx] = u
        return u

    def _updater_changed(self) -> None:
        self._updaters = {}
        self._loaded_states = None

    def _set_updater_states(self, data: bytes) -> None:
        super()._set_updater_states(data)
        for u in self._updaters.values():
            if u is not self._updater:
                u.set_states(data)
                u.optimizer = self._updater.optimizer
        self._loaded_states = data

    def set_gradient_compression(self, compression_params: dict[str, Any]) -> None:
        """2-bit compression of each pushed value before the sum; as in MXNet, only the
        device types (``device``, ``local_allreduce_device``) accept it."""
        if "device" not in self.type:
            raise KVStoreError(f"gradient compression is not supported by kvstore type {self.type!r}; use "
                               f"'device' / 'local_allreduce_device' or a dist type (as in MXNet)")
        super().set_gradient_compression(compression_params)

    # -- pull ------------------------------------------------------------------------------------
    def _read_src(self, e: _Entry, ctx: Context) -> Any:
        if e.replicas:
            rep = e.replicas.get(ctx)
            return rep if rep is not None else next(iter(e.replicas.values()))
        return e.value

    def _pull_impl(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int) -> None:
        for k, outs in pairs:
            e = self._entry(k, "pull")
            for o in outs:
                if tuple(o.shape) != e.shape:
                    raise ShapeError(f"pull: key {k!r} holds shape {e.shape}, out has shape {tuple(o.shape)}")
            for o in outs:
                _copy(self._read_src(e, o.context), o, priority)


def _row_sparse_sum(vals: Sequence[Any], ctx: Context) -> Any:
    """The row_sparse sum of row_sparse values, on ``ctx`` (``add_n``'s sparse kernel)."""
    from ..ndarray import op_function
    vals = [v.as_in_context(ctx) for v in vals]
    if len(vals) == 1:
        return vals[0]
    add_n = op_function("add_n")
    if add_n is None:
        raise KVStoreError("summing row_sparse pushes needs the 'add_n' operator (plexnet-ops-basic)")
    return add_n(*vals)


def _zeros(shape: tuple, ctx: Context, dtype: Any) -> Any:
    from ..ndarray import zeros
    return zeros(shape, ctx, dtype)


def _factory(name: str) -> KVStoreLocal:
    return KVStoreLocal(name)


@hookimpl
def plexnet_register_kvstores(register: Any) -> None:
    for name in LOCAL_TYPES:
        register(name, _factory)

