"""Shared machinery for the cuDNN frontend operators.

- ``GraphCache``: a module-level LRU of built graphs (operation graph + execution plan),
  keyed by everything that shapes a plan: operator kind, device, shapes, strides, dtypes,
  parameters, the TF32 setting. A key whose graph cannot be built is cached too, as
  ``Unsupported(reason)``, so a failing configuration is tried once and then goes
  straight to the xp implementation.
- ``GraphSpec``: a thin helper over ``cudnn.pygraph`` that records which frontend tensor
  is bound to which name and keeps pass-by-value scalars alive on the host.
- handles: one cuDNN handle per (thread, device), its stream set to the engine worker's
  stream (``RunContext.stream``) before every execution; the last stream is remembered
  so the backend call is made only when it changes.
- scratch: workspace and temporaries come from the operator's ``kTempSpace`` resource
  when the property requested one (Convolution does), else from a per-thread,
  per-device buffer allocated through plexnet's storage manager (so it is pooled and
  shows up in ``plexnet.storage`` stats).
- xp fallback: ``xp_operator(prop, ctx)`` creates the ops-basic implementation
  registered under ``impl_name='xp'``.
"""
from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import _loader

log = logging.getLogger("plexnet.ops_cudnn")

ALIGN = 256

# -- counters -----------------------------------------------------------------------------------
_stats: collections.Counter = collections.Counter()
_fallbacks: dict[str, str] = {}
_stats_lock = threading.Lock()


def count(name: str, n: int = 1) -> None:
    with _stats_lock:
        _stats[name] += n


def stats() -> dict[str, int]:
    with _stats_lock:
        return dict(_stats)


def fallback_reasons() -> dict[str, str]:
    with _stats_lock:
        return dict(_fallbacks)


def reset_stats() -> None:
    with _stats_lock:
        _stats.clear()
        _fallbacks.clear()


# -- settings -------------------------------------------------------------------------------------
def allow_tf32() -> bool:
    """FP32 convolutions may use TF32 tensor cores (PyTorch's cuDNN default). Set
    ``PLEXNET_CUDNN_ALLOW_TF32=0`` for full FP32 precision."""
    return os.environ.get("PLEXNET_CUDNN_ALLOW_TF32", "1") != "0"


def cache_size() -> int:
    try:
        return max(1, int(os.environ.get("PLEXNET_CUDNN_CACHE_SIZE", "512")))
    except ValueError:
        return 512


# -- dtypes -----------------------------------------------------------------------------------------
def cudnn_dtype(dtype: Any) -> Any:
    """The ``cudnn.data_type`` of a numpy dtype, or None if cuDNN has none we use."""
    cd = _loader.cudnn
    dt = np.dtype(dtype)
    if dt == np.float32:
        return cd.data_type.FLOAT
    if dt == np.float16:
        return cd.data_type.HALF
    if dt == np.float64:
        return cd.data_type.DOUBLE
    return None


def compute_dtype(dtype: Any) -> Any:
    cd = _loader.cudnn
    return cd.data_type.DOUBLE if np.dtype(dtype) == np.float64 else cd.data_type.FLOAT


def dims_strides(a: Any) -> tuple[list[int], list[int]]:
    """Shape and element strides of an array (what a frontend tensor describes)."""
    isz = a.dtype.itemsize
    return [int(d) for d in a.shape], [int(s) // isz for s in a.strides]


def packed_strides(dims: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(list(dims)):
        out.append(acc)
        acc *= int(d)
    return out[::-1]


def nhwc_strides(dims: Sequence[int]) -> list[int]:
    """Strides of a channels-last packed tensor described with NC(D)HW dims."""
    n, c, *sp = [int(d) for d in dims]
    st = [0] * len(dims)
    st[1] = 1
    acc = c
    for i in range(len(sp) - 1, -1, -1):
        st[2 + i] = acc
        acc *= sp[i]
    st[0] = acc
    return st


def flat_dims(n: int) -> tuple[list[int], list[int]]:
    """A 4-d channels-last description of ``n`` contiguous elements, for elementwise
    graphs (every tensor of the graph uses the same one, so positions line up)."""
    c = next(c for c in (64, 32, 16, 8, 4, 2, 1) if n % c == 0)
    h = n // c
    return [1, c, h, 1], [n, 1, c, c]


def ptr(a: Any) -> int:
    if a is None:
        return 0
    if isinstance(a, int):
        return a
    if isinstance(a, np.ndarray):
        return int(a.ctypes.data)
    return int(a.data.ptr)


def is_gpu_array(a: Any) -> bool:
    return a is not None and hasattr(a, "data") and hasattr(a.data, "ptr")


# -- the graph cache ----------------------------------------------------------------------------------
class Unsupported:
    """A configuration cuDNN could not build: the reason, cached."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Unsupported({self.reason!r})"


class GraphCache:
    """LRU of built graphs (or ``Unsupported``) keyed by hashable tuples."""

    def __init__(self, maxsize: int | None = None) -> None:
        self._d: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
        self._lock = threading.RLock()
        self._maxsize = maxsize

    @property
    def maxsize(self) -> int:
        return self._maxsize if self._maxsize is not None else cache_size()

    def get_or_build(self, key: Any, builder: Callable[[], Any], what: str = "") -> Any:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
                count("cache.hit")
                return v
            try:
                v = builder()
                count("cache.built")
            except Exception as e:  # noqa: BLE001 - cuDNN says no: remember it, use xp
                v = Unsupported(f"{type(e).__name__}: {e}".strip())
                count("cache.unsupported")
                with _stats_lock:
                    _fallbacks[f"{what} {key!r}"] = v.reason
                log.warning("cuDNN cannot run %s (%s); the xp implementation runs it instead", what or key,
                            v.reason)
            self._d[key] = v
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)
                count("cache.evicted")
            return v

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: Any) -> bool:
        return key in self._d

    def keys(self) -> list[Any]:
        with self._lock:
            return list(self._d)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()


CACHE = GraphCache()


# -- handles and streams ---------------------------------------------------------------------------------
_tls = threading.local()


def handle_for(device_id: int) -> Any:
    """This thread's cuDNN handle for ``device_id`` (created on first use)."""
    hs = getattr(_tls, "handles", None)
    if hs is None:
        hs = _tls.handles = {}
        _tls.streams = {}
    h = hs.get(device_id)
    if h is None:
        with _loader.cupy.cuda.Device(device_id):
            h = _loader.cudnn.create_handle()
        hs[device_id] = h
    return h


def bind_stream(device_id: int, stream: Any) -> Any:
    """The handle for ``device_id`` with its stream set to ``stream`` (a CuPy stream, or
    None for CuPy's current stream)."""
    h = handle_for(device_id)
    sptr = int(stream.ptr) if stream is not None else int(_loader.cupy.cuda.get_current_stream().ptr)
    if _tls.streams.get(device_id) != sptr:
        _loader.cudnn.set_stream(h, sptr)
        _tls.streams[device_id] = sptr
    return h


@contextlib.contextmanager
def on_stream(rctx: Any) -> Iterator[None]:
    """Make the worker's stream current for the CuPy work an operator does besides the
    cuDNN graphs (bias add, accumulation, layout copies)."""
    s = getattr(rctx, "stream", None)
    if s is None:
        yield
        return
    with s:
        yield


# -- building -------------------------------------------------------------------------------------------------
class GraphSpec:
    """Builder-side view of one ``cudnn.pygraph``: named tensors and host scalars."""

    def __init__(self, io_dtype: Any, device_id: int, name: str = "plexnet") -> None:
        cd = _loader.cudnn
        self.cd = cd
        self.io_dtype = np.dtype(io_dtype)
        self.graph = cd.pygraph(name=name, io_data_type=cudnn_dtype(io_dtype),
                                intermediate_data_type=compute_dtype(io_dtype),
                                compute_data_type=compute_dtype(io_dtype),
                                handle=handle_for(device_id))
        self.tensors: dict[str, Any] = {}
        self.host: dict[str, np.ndarray] = {}

    def input(self, name: str, dims: Sequence[int], strides: Sequence[int], dtype: Any = None) -> Any:
        t = self.graph.tensor(name=name, dim=list(dims), stride=list(strides),
                              data_type=cudnn_dtype(self.io_dtype if dtype is None else dtype))
        self.tensors[name] = t
        return t

    def output(self, name: str, t: Any, dims: Sequence[int], strides: Sequence[int], dtype: Any = None) -> Any:
        t.set_output(True).set_data_type(cudnn_dtype(self.io_dtype if dtype is None else dtype))
        t.set_dim(list(dims)).set_stride(list(strides))
        self.tensors[name] = t
        return t

    def scalar(self, name: str, value: float) -> Any:
        """A pass-by-value FP32 scalar (its host copy lives as long as the graph)."""
        arr = np.full((1, 1, 1, 1), value, dtype=np.float32)
        t = self.graph.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], is_pass_by_value=True,
                              data_type=self.cd.data_type.FLOAT)
        self.tensors[name] = t
        self.host[name] = arr
        return t


class Built:
    """A graph with a built execution plan."""

    __slots__ = ("graph", "tensors", "host", "workspace", "extra")

    def __init__(self, spec: GraphSpec, workspace: int, extra: Any = None) -> None:
        self.graph = spec.graph
        self.tensors = spec.tensors
        self.host = spec.host
        self.workspace = int(workspace)
        self.extra = extra


def build(spec: GraphSpec, *, conv_like: bool = False, workspace_limit: int | None = None,
          extra: Any = None) -> Built:
    """validate -> operation graph -> heuristics (A, then FALLBACK) -> support check ->
    plans. ``conv_like``: FP32 graphs drop tensor-core (TF32) engines unless TF32 is
    allowed."""
    cd, g = spec.cd, spec.graph
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cd.heur_mode.A, cd.heur_mode.FALLBACK])
    if conv_like and spec.io_dtype == np.float32 and not allow_tf32():
        g.deselect_numeric_notes([cd.numerical_note.TENSOR_CORE, cd.numerical_note.DOWN_CONVERT_INPUTS])
    if workspace_limit is not None:
        g.deselect_workspace_greater_than(int(workspace_limit))
    g.check_support()
    g.build_plans()
    return Built(spec, g.get_workspace_size(), extra)


def execute(built: Built, rctx: Any, device_id: int, bindings: dict[str, Any], workspace_ptr: int) -> None:
    """Run ``built`` on the worker's stream; ``bindings`` maps tensor names to arrays or
    device pointers (host scalars are added here)."""
    pack = {built.tensors[n]: ptr(a) for n, a in bindings.items()}
    for n, arr in built.host.items():
        pack[built.tensors[n]] = int(arr.ctypes.data)
    h = bind_stream(device_id, getattr(rctx, "stream", None))
    built.graph.execute(pack, int(workspace_ptr), handle=h)


# -- scratch memory -----------------------------------------------------------------------------------------------
def _aligned(n: int) -> int:
    return (int(n) + ALIGN - 1) // ALIGN * ALIGN


class Scratch:
    """Regions carved from one workspace buffer."""

    def __init__(self, buf: Any, offsets: list[int], sizes: list[int]) -> None:
        self.buf = buf
        self.offsets = offsets
        self.sizes = sizes

    def ptr(self, i: int) -> int:
        return int(self.buf.data.ptr) + self.offsets[i]

    def array(self, i: int, shape: Sequence[int], dtype: Any) -> Any:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        off = self.offsets[i]
        return self.buf[off:off + n].view(dt).reshape(tuple(shape))


_own_space: dict[Any, Any] = {}  # (thread id, device) -> (storage handle, cupy buffer)
_own_lock = threading.Lock()


def _fallback_space(ctx: Any, nbytes: int) -> Any:
    """A per-(thread, device) buffer from plexnet's storage manager, grown on demand
    (used when the operator's property requested no kTempSpace resource)."""
    from plexnet import storage
    key = (threading.get_ident(), ctx)
    with _own_lock:
        cur = _own_space.get(key)
        if cur is not None and cur[1].size >= nbytes:
            return cur[1]
        if cur is not None:
            storage.get().free(cur[0])
        h = storage.get().alloc(max(int(nbytes), ALIGN), ctx)
        buf = h.buf
        _own_space[key] = (h, buf)
        count("scratch.own_alloc")
        return buf


def scratch(opctx: Any, sizes: Sequence[int]) -> Scratch:
    """One buffer holding every region of ``sizes`` bytes (each 256-byte aligned): from the
    kTempSpace resource in ``opctx.requested`` if there is one, else our own buffer."""
    sizes = [int(s) for s in sizes]
    offsets, total = [], 0
    for s in sizes:
        offsets.append(total)
        total += _aligned(max(s, 1))
    total = max(total, ALIGN)
    from plexnet.resource import ResourceRequest
    for r in getattr(opctx, "requested", ()) or ():
        if getattr(getattr(r, "req", None), "type", None) == ResourceRequest.kTempSpace:
            buf = r.get_space((total,), np.uint8)
            return Scratch(buf, offsets, sizes)
    return Scratch(_fallback_space(opctx.run_ctx.ctx, total), offsets, sizes)


# -- the xp fallback ----------------------------------------------------------------------------------------------
def xp_operator(prop: Any, ctx: Any) -> Any:
    """The ops-basic (``impl_name='xp'``) implementation of ``prop`` for ``ctx``."""
    from plexnet.operator.registry import OperatorNotFound
    from plexnet.plugins import registries
    reg = registries().operators
    for r in reg.implementations(prop.op_name):
        if r.impl_name == "xp" and r.device_type in (ctx.device_type, "*"):
            return r.factory(prop, ctx)
    raise OperatorNotFound(f"operator {prop.op_name!r}: the cuDNN implementation needs the xp implementation "
                           f"(plexnet-ops-basic) for what cuDNN cannot run, and none is registered")


def device_id_of(rctx: Any) -> int:
    c = getattr(rctx, "ctx", None)
    return int(getattr(c, "device_id", 0) or 0)
