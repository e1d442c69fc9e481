"""``cupy.ndarray`` of the simulator, and how a numpy computation becomes a simulated
kernel: simulated arguments are unwrapped to their numpy data (host arrays refused),
the arrays read and written are recorded on the current stream, numpy results are
wrapped as new device arrays (or as views of the memory they share).

The operators, numpy's dispatch protocols (``__array_ufunc__``, ``__array_function__``)
and the methods forwarded to numpy are installed on ``ndarray`` by ``operators.py``
and ``methods.py``."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import runtime
from .devices import Device
from .errors import NotSimulatedError, not_simulated, unsupported
from .memory import BaseMemory, MemoryPointer, PooledMemory, as_bytes
from .snapshot import CLASSES
from .streams import Stream, current_stream


def wrap(a: np.ndarray, m: BaseMemory) -> "ndarray":
    """A simulated array over ``a``, which lies in the allocation ``m`` (a view: no copy)."""
    o = object.__new__(ndarray)
    o._a = a
    o._m = m
    return o


def fresh_array(a: np.ndarray, dev: int) -> "ndarray":
    """A simulated array owning ``a`` as a new allocation of device ``dev``'s pool."""
    return wrap(a, PooledMemory(a, dev))


def unwrap(v: Any, reads: list, host_ok: bool) -> Any:
    """Replace simulated arrays by their numpy data (collecting them in ``reads``);
    reject host numpy arrays unless ``host_ok``."""
    t = type(v)
    if t is ndarray:
        reads.append(v)
        return v._a
    if t is np.ndarray or isinstance(v, np.ndarray):
        if host_ok:
            return v
        raise unsupported(v)
    if t is list or t is tuple:
        if not v:
            return v
        out = [unwrap(e, reads, host_ok) for e in v]
        return out if t is list else tuple(out)
    return v


def kernel_result(rt: runtime._Runtime, what: str, r: Any, reads: list, writes: list) -> Any:
    """Wrap the numpy result ``r`` of the operation ``what``; record it as a kernel
    (device checks, stream ordering) when it wrote or made device memory."""
    fresh: list[ndarray] = []
    res = _wrap_result(rt, r, reads, writes, fresh)
    if fresh or writes:
        rt.kernel(what, reads, writes, fresh)
    return res


def _wrap_result(rt: runtime._Runtime, r: Any, reads: list, writes: list, fresh: list) -> Any:
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
                return wrap(r, x._m)  # a view of an input: no kernel, same memory
        if r.base is not None:
            r = r.copy(order="A")  # device memory never aliases a host buffer or a temporary
        o = fresh_array(r, rt.device())
        fresh.append(o)
        return o
    if isinstance(r, np.generic):
        o = fresh_array(np.array(r), rt.device())  # CuPy returns 0-d arrays, not scalars
        fresh.append(o)
        return o
    if (t is tuple or t is list) and any(isinstance(e, (np.ndarray, np.generic)) for e in r):
        out = [_wrap_result(rt, e, reads, writes, fresh) for e in r]
        return out if t is list else tuple(out)
    return r


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


class DLPackCapsule:
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
            self._a, self._m = a, PooledMemory(a, runtime.RT.device())
            return
        if not isinstance(memptr, MemoryPointer):
            raise TypeError("memptr must be a cupy.cuda.MemoryPointer")
        mem = memptr.mem
        off = memptr.ptr - mem.ptr
        buf = as_bytes(mem._buf)
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
        return None if b is None or not isinstance(b, np.ndarray) else wrap(b, self._m)

    @property
    def T(self) -> "ndarray":
        return wrap(self._a.T, self._m)

    @property
    def mT(self) -> "ndarray":
        return wrap(np.swapaxes(self._a, -1, -2), self._m)  # ndarray.mT is numpy 2 only

    @property
    def real(self) -> "ndarray":
        return wrap(self._a.real, self._m)

    @property
    def imag(self) -> "ndarray":
        r = self._a.imag
        if np.may_share_memory(r, self._a):
            return wrap(r, self._m)
        return kernel_result(runtime.RT, "imag", r, [self], [])

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        a = self._a
        s = current_stream()
        return {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr,
                "data": (int(a.__array_interface__["data"][0]), False),
                "strides": None if a.flags.c_contiguous else a.strides, "version": 3,
                "stream": 1 if s.ptr == 0 else s.ptr}

    def __getattr__(self, name: str) -> Any:
        if name in CLASSES["cupy.ndarray"]:
            raise not_simulated(f"cupy.ndarray.{name}")
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
        rt = runtime.RT
        s = stream if stream is not None else current_stream()
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
        rt = runtime.RT
        s = stream if stream is not None else current_stream()
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

    # -- numpy protocols (CuPy's; __array_ufunc__ / __array_function__: operators.py) ------
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> DLPackCapsule:
        return DLPackCapsule(self)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self._m.device_id)  # kDLCUDA

    def toDlpack(self) -> DLPackCapsule:
        return DLPackCapsule(self)

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> "ndarray":
        reads: list[ndarray] = []
        k = unwrap(key, reads, True) if not isinstance(key, (int, slice)) else key
        kt = k if type(k) is tuple else (k,)
        if not any(e is Ellipsis for e in kt):
            kt = kt + (Ellipsis,)  # 0-d results stay arrays (views), as in CuPy
        r = self._a[kt]
        if np.may_share_memory(r, self._a):
            return wrap(r, self._m)  # basic indexing: a view, no kernel
        reads.append(self)
        return kernel_result(runtime.RT, "getitem (advanced indexing)", r, reads, [])

    def __setitem__(self, key: Any, value: Any) -> None:
        rt = runtime.RT
        reads: list[ndarray] = []
        k = unwrap(key, reads, True) if not isinstance(key, (int, slice)) else key
        kt = k if type(k) is tuple else (k,)
        advanced = any(isinstance(e, (np.ndarray, list)) for e in kt)
        target = None if advanced else self._a[kt + (() if any(e is Ellipsis for e in kt) else (Ellipsis,))]
        if isinstance(value, ndarray):
            if (not advanced and target.shape == value.shape and target.strides == value._a.strides
                    and target.dtype == value.dtype and target.flags.c_contiguous):
                # CuPy: a plain memcpy (cudaMemcpyAsync), allowed between devices
                rt.record(rt.current_state(), "setitem (device copy)", (value._m,), (self._m,))
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
        return kernel_result(runtime.RT, "astype", r, [self], [])

    def copy(self, order: str = "C") -> "ndarray":
        return kernel_result(runtime.RT, "copy", self._a.copy(order=order), [self], [])

    def view(self, dtype: Any = None, type: Any = None) -> "ndarray":
        if type is not None:
            raise NotSimulatedError("ndarray.view(type=...) is not simulated")
        return wrap(self._a.view() if dtype is None else self._a.view(dtype), self._m)

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
        runtime.RT.kernel("fill", reads, [self], [])

    def put(self, indices: Any, values: Any, mode: str = "wrap") -> None:
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError("clipmode not understood")
        reads: list[ndarray] = []
        idx = unwrap(indices, reads, True)
        vals = unwrap(values, reads, True)
        self._a.put(idx, vals, mode=mode)
        runtime.RT.kernel("put", reads, [self], [])

    def reduced_view(self, dtype: Any = None) -> "ndarray":
        a = self._a
        return wrap(a.reshape(-1) if a.flags.c_contiguous else a, self._m)

    def _scatter(self, ufunc: Any, slices: Any, value: Any, what: str) -> None:
        reads: list[ndarray] = []
        idx = unwrap(slices, reads, True)
        v = unwrap(value, reads, True)
        ufunc.at(self._a, idx, v)
        runtime.RT.kernel(what, reads, [self], [])

    def scatter_add(self, slices: Any, value: Any) -> None:
        self._scatter(np.add, slices, value, "scatter_add")

    def scatter_max(self, slices: Any, value: Any) -> None:
        self._scatter(np.maximum, slices, value, "scatter_max")

    def scatter_min(self, slices: Any, value: Any) -> None:
        self._scatter(np.minimum, slices, value, "scatter_min")


def _rebuild(host: np.ndarray, dev: int) -> ndarray:
    """Unpickle: the host copy back onto its device (device 0 when there are fewer now)."""
    from .functions import asarray  # functions imports this module
    with Device(dev if dev < runtime.RT.n else 0):
        return asarray(host)


def unwrap_args(args: tuple, kwargs: dict, reads: list, host_ok: bool, host_arg: tuple | None) -> tuple:
    """Unwrap positional and keyword arguments; ``host_arg = (position, keyword)`` names
    the one argument CuPy copies from the host itself (index arrays of ``take`` ...)."""
    if host_arg is None:
        uargs = unwrap(args, reads, host_ok) if args else args
        ukw = {k: unwrap(v, reads, host_ok) for k, v in kwargs.items()} if kwargs else kwargs
        return uargs, ukw
    pos, kwname = host_arg
    uargs = tuple(unwrap(a, reads, host_ok or i == pos) for i, a in enumerate(args))
    ukw = {k: unwrap(v, reads, host_ok or k == kwname) for k, v in kwargs.items()}
    return uargs, ukw


# arguments CuPy converts from host data by itself (core.array(indices) ...)
HOST_ARG = {"take": (1, "indices"), "compress": (0, "condition"), "ndarray.take": (0, "indices"),
            "ndarray.compress": (0, "condition"), "ndarray.repeat": (0, "repeats"), "repeat": (1, "repeats")}
