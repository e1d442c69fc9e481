"""The resource manager: per-device random generators and temporary workspace.

Operators ask for resources with ``ResourceRequest`` (``forward_resource`` /
``backward_resource``) and receive ``Resource`` objects in ``OpContext.requested``. Every
resource has an engine variable; whoever uses one must list it in ``mutate_vars`` when
pushing, so users of one generator or one workspace are serialised in push order. That
is what makes ``plexnet.random.seed(s)`` reproducible on the threaded engines too.

Each device gets its own stream, seeded from ``SeedSequence([seed, device_typeid,
device_id])``: devices differ from each other, and the same seed gives the same streams
in every run. When the process-wide engine is replaced (``engine.set_engine``), the
resources keep their generator state and workspace and get variables of the new engine.
"""
from __future__ import annotations

import threading
from enum import IntEnum
from typing import Any

import numpy as np

__all__ = ["ResourceRequest", "Resource", "ResourceManager", "get", "seed"]


class ResourceRequest:
    """A request for a resource type (``ResourceRequest.kRandom`` / ``kTempSpace``)."""

    class Type(IntEnum):
        kRandom = 0
        kTempSpace = 1

    kRandom = Type.kRandom
    kTempSpace = Type.kTempSpace
    __slots__ = ("type",)

    def __init__(self, type: "ResourceRequest.Type | int") -> None:
        self.type = ResourceRequest.Type(type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ResourceRequest) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __repr__(self) -> str:
        return f"ResourceRequest({self.type.name})"


class Resource:
    """A random generator or a workspace on one device, guarded by an engine variable."""

    def __init__(self, req: ResourceRequest, ctx: Any, var: Any, xp: Any) -> None:
        self.req = req
        self.ctx = ctx
        self.var = var
        self.xp = xp
        self._rng: Any = None
        self._space: Any = None
        self._space_handle: Any = None

    def get_random(self) -> Any:
        """The device's random generator (numpy ``Generator`` API). Only call it from a
        function pushed with this resource's ``var`` in ``mutate_vars``."""
        if self.req.type != ResourceRequest.kRandom:
            raise TypeError("get_random() on a temp-space resource")
        return self._rng

    def get_space(self, shape: Any, dtype: Any = np.float32) -> Any:
        """A workspace array of ``shape``; the buffer grows to the largest request and is
        reused (contents are undefined). Same calling rule as ``get_random``: the array is
        only valid inside the pushed function, until the next ``get_space``."""
        if self.req.type != ResourceRequest.kTempSpace:
            raise TypeError("get_space() on a random resource")
        dtype = np.dtype(dtype)
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"get_space: negative dimension in shape {shape}")
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if self._space is None or self._space.size < n:
            from . import storage
            if self._space is not None:
                storage.get().free(self._space_handle)
            self._space_handle = storage.get().alloc(n, self.ctx)
            self._space = self._space_handle.buf
        return self._space[:n].view(dtype).reshape(shape)

    @property
    def space_bytes(self) -> int:
        return 0 if self._space is None else int(self._space.size)


class ResourceManager:
    """Creates one random and one temp-space resource per context, on demand."""

    def __init__(self, global_seed: int | None = None) -> None:
        self._lock = threading.RLock()
        self._res: dict[tuple[Any, int], Resource] = {}
        self._seed = global_seed
        self._entropy = np.random.SeedSequence().entropy if global_seed is None else None
        self._engine: Any = None

    def request(self, ctx: Any, req: ResourceRequest | int) -> Resource:
        """The resource of type ``req`` on ``ctx`` (one per device and type, shared by
        every operator that asks; users are serialised through its ``var``)."""
        if not isinstance(req, ResourceRequest):
            req = ResourceRequest(req)
        self._check_engine()
        key = (ctx, int(req.type))
        r = self._res.get(key)
        if r is None:
            with self._lock:
                r = self._res.get(key)
                if r is None:
                    r = self._res[key] = self._create(ctx, req)
        return r

    def _check_engine(self) -> Any:
        """The current engine; if it was replaced, give every resource a variable of it."""
        from . import engine
        eng = engine.get()
        if eng is not self._engine:
            with self._lock:
                if eng is not self._engine:
                    for r in self._res.values():
                        r.var = eng.new_var()
                    self._engine = eng
        return eng

    def _create(self, ctx: Any, req: ResourceRequest) -> Resource:
        from .backends import get_backend
        b = get_backend(ctx)
        r = Resource(req, ctx, self._engine.new_var(), b.xp)
        if req.type == ResourceRequest.kRandom:
            r._rng = b.rng(self._device_seed(ctx), ctx.device_id)
        return r

    def _device_seed(self, ctx: Any, base: int | None = None) -> int:
        if base is None:
            base = self._seed if self._seed is not None else self._entropy  # type: ignore[assignment]
        ss = np.random.SeedSequence([int(base) % (1 << 63), ctx.device_typeid, ctx.device_id])  # type: ignore[arg-type]
        return int(ss.generate_state(1, np.uint64)[0])

    def seed(self, seed_state: int, ctx: Any = "all") -> None:
        """Reseed the random resources (``ctx="all"``: every device, now and created
        later; else one context). The reseed is pushed to the engine, ordered after every
        operation already pushed on each generator and before every later one."""
        from .backends import get_backend
        seed_state = int(seed_state)
        eng = self._check_engine()
        with self._lock:
            if isinstance(ctx, str) and ctx == "all":
                self._seed = seed_state
                targets = [r for (c, t), r in list(self._res.items()) if t == ResourceRequest.kRandom]
            else:
                targets = [self.request(ctx, ResourceRequest(ResourceRequest.kRandom))]
        for r in targets:
            s = self._device_seed(r.ctx, seed_state)
            b = get_backend(r.ctx)

            def reseed(_rctx: Any, r: Resource = r, s: int = s, b: Any = b) -> None:
                r._rng = b.rng(s, r.ctx.device_id)
            eng.push_sync(reseed, r.ctx, (), (r.var,), name="random.seed")


_manager: ResourceManager | None = None
_manager_lock = threading.Lock()


def get() -> ResourceManager:
    """The process-wide resource manager."""
    global _manager
    m = _manager
    if m is None:
        with _manager_lock:
            if _manager is None:
                _manager = ResourceManager()
            m = _manager
    return m


def seed(seed_state: int, ctx: Any = "all") -> None:
    """Seed every random stream (``plexnet.random.seed``)."""
    get().seed(seed_state, ctx)
