"""The module-level functions of the simulated ``cupy``: the numpy-backed wrappers built
from the snapshot's names (``make_function``: CuPy's signature check, host arrays
refused, reads and writes recorded), and the ones CuPy defines itself (the explicit
host->device copies ``asarray`` / ``array``, ``asnumpy``, ``copyto``, ``from_dlpack`` ...)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import runtime
from .arrays import HOST_ARG, DLPackCapsule, fresh_array, kernel_result, ndarray, unwrap, unwrap_args
from .errors import HOST_HINT
from .snapshot import Params
from .streams import Stream


# functions that accept host data (they copy it to the device, or only read its metadata)
_HOST_OK = {"asarray", "array", "asanyarray", "asarray_chkfinite", "asfarray", "asnumpy", "get_array_module",
            "isscalar", "ndim", "shape", "result_type", "min_scalar_type", "common_type", "mintypecode",
            "iscomplexobj", "isrealobj", "iterable", "empty_like", "zeros_like", "ones_like", "full_like",
            "can_cast", "promote_types", "broadcast_shapes", "size"}
# functions that write one of their positional arguments
_WRITES_ARG = {"copyto": 0, "put": 0, "place": 0, "putmask": 0, "fill_diagonal": 0, "put_along_axis": 0,
               "shuffle": 0}


def make_function(qual: str, name: str, npf: Callable, spec: str | None) -> Callable:
    params = Params(qual, spec)
    host_ok = name in _HOST_OK
    warg = _WRITES_ARG.get(name)
    like_proto = name.endswith("_like")
    host_arg = HOST_ARG.get(name) if qual == f"cupy.{name}" else None

    def f(*args: Any, **kwargs: Any) -> Any:
        params.check(args, kwargs)
        reads: list[ndarray] = []
        if like_proto and args and isinstance(args[0], np.ndarray):
            uargs = (args[0],) + tuple(unwrap(list(args[1:]), reads, False))  # metadata only
            ukw = {k: unwrap(v, reads, False) for k, v in kwargs.items()} if kwargs else kwargs
        else:
            uargs, ukw = unwrap_args(args, kwargs, reads, host_ok, host_arg)
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
        return kernel_result(runtime.RT, qual, r, reads, writes)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{qual}: simulated on the host with numpy ({getattr(npf, '__module__', 'numpy')}.{name})."
    f.__module__ = qual.rsplit(".", 1)[0]
    return f


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, blocking: bool = False) -> ndarray:
    """Host data (numpy, lists, scalars) is copied to the current device; a simulated
    array is returned as it is (on its own device) unless a conversion is needed."""
    rt = runtime.RT
    if isinstance(a, ndarray):
        if dtype is None or np.dtype(dtype) == a.dtype:
            if copy:
                return a.copy(order="C" if order in (None, "K", "A") else order)
            return a
        return a.astype(dtype, order=order or "K")
    if isinstance(a, (list, tuple)) and any(isinstance(e, ndarray) for e in a):
        return _stack_like(a, dtype)
    host = np.array(a, dtype=dtype, order=order if order in ("C", "F") else "K", copy=True)
    o = fresh_array(host, rt.device())
    rt.record(rt.current_state(), "asarray (host->device copy)", (), (), (o._m,))
    rt.stats["h2d"] += 1
    return o


def _stack_like(seq: Any, dtype: Any = None) -> ndarray:
    reads: list[ndarray] = []
    host = np.array(unwrap(list(seq), reads, True), dtype=dtype)
    return kernel_result(runtime.RT, "array", host, reads, [])


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
                        + (HOST_HINT if isinstance(a, np.ndarray) else ""))
    if a._a.flags.c_contiguous and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return kernel_result(runtime.RT, "ascontiguousarray", np.ascontiguousarray(a._a, dtype=dtype), [a], [])


def asnumpy(a: Any, stream: Stream | None = None, order: str = "C", out: np.ndarray | None = None, *,
            blocking: bool = True) -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out, blocking=blocking)
    temp = np.asarray(a, order=order)
    if out is None:
        return temp
    out[...] = temp
    return out


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = None) -> None:
    if not isinstance(dst, ndarray):
        raise TypeError(f"Argument 'dst' has incorrect type (expected cupy._core.core._ndarray_base, got "
                        f"{type(dst).__module__}.{type(dst).__name__})")
    rt = runtime.RT
    reads: list[ndarray] = []
    if isinstance(src, np.ndarray) and src.shape != ():
        raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
    if isinstance(src, ndarray):
        if (where is None and src.shape == dst.shape and src.dtype == dst.dtype
                and src._a.flags.c_contiguous and dst._a.flags.c_contiguous):
            rt.record(rt.current_state(), "copyto (device copy)", (src._m,), (dst._m,))
            np.copyto(dst._a, src._a)
            return
        reads.append(src)
        s = src._a
    else:
        s = src.item() if isinstance(src, np.ndarray) else src
    w = unwrap(where, reads, False) if where is not None else True
    np.copyto(dst._a, s, casting=casting, where=w)
    rt.kernel("copyto", reads, [dst], [])


def from_dlpack(array: Any, *, device: Any = None, copy: Any = None) -> ndarray:
    if isinstance(array, ndarray):
        return array
    cap = array.__dlpack__() if hasattr(array, "__dlpack__") else array
    if isinstance(cap, DLPackCapsule):
        if cap._used:
            raise ValueError("A DLPack tensor object cannot be consumed multiple times")
        cap._used = True
        return cap.array
    raise BufferError("plexnet's CuPy simulator can only import simulated device arrays through DLPack "
                      "(this object is not one; a host tensor would need an explicit cupy.asarray copy)")


def is_available() -> bool:
    return runtime.RT.n > 0
