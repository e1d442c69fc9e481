"""The module-shaped ``cupy`` stand-in: ``SimModule`` objects for ``cupy`` and its
submodules (``cuda``, ``cuda.runtime`` ..., ``random``, ``linalg``, ``fft``,
``lib.stride_tricks``) exposing only the names of real CuPy's (``cupy_names.json``):
numpy-backed wrappers built on first use, the simulator's own classes and functions,
and errors naming what numpy has but CuPy does not, or what CuPy has but cannot be
simulated."""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from . import cuda_runtime as cudart
from .arrays import ndarray
from .devices import Device, get_device_id
from .errors import CUDARuntimeError, NotSimulatedError, OutOfMemoryError, no_such, not_simulated
from .functions import (array, asanyarray, asarray, ascontiguousarray, asnumpy, copyto, from_dlpack,
                        is_available, make_function)
from .memory import (BaseMemory, Memory, MemoryPointer, MemoryPool, PinnedMemoryPool, PooledMemory, UnownedMemory,
                     alloc, get_default_memory_pool, get_default_pinned_memory_pool)
from .random import RandomState, get_random_state, random_function, reset_states, set_random_state
from .random import seed as random_seed
from .snapshot import CUPY_VERSION, MODULES
from .streams import Event, Stream, get_current_stream, get_elapsed_time
from .ufuncs import ufunc

LABEL = "SIMULATED"

# CuPy names that are numpy-1 aliases (gone from numpy 2)
_ALIASES = {"alltrue": "all", "sometrue": "any", "cumproduct": "cumprod", "product": "prod", "round_": "round",
            "trapz": "trapezoid", "in1d": "isin", "msort": "sort", "float_": "float64", "complex_": "complex128",
            "cfloat": "complex128", "singlecomplex": "complex64"}
_CONSTANTS = {"Inf": np.inf, "Infinity": np.inf, "infty": np.inf, "PINF": np.inf, "NINF": -np.inf, "NAN": np.nan,
              "NaN": np.nan, "NZERO": -0.0, "PZERO": 0.0, "disable_experimental_feature_warning": False}
_KERNEL_CLASSES = {"ElementwiseKernel", "RawKernel", "RawModule", "ReductionKernel"}


def _not_simulated_callable(qual: str, why: str = "") -> Callable:
    def f(*a: Any, **k: Any) -> Any:
        raise NotSimulatedError(f"{qual} exists in CuPy {CUPY_VERSION} but cannot be simulated on the host"
                                + (f": {why}" if why else ""))
    f.__name__ = qual.rsplit(".", 1)[-1]
    return f


def _fuse(*args: Any, **kwargs: Any) -> Any:
    raise NotSimulatedError("cupy.fuse compiles CUDA kernels and cannot be simulated")


def get_array_module(*args: Any) -> Any:
    for a in args:
        if isinstance(a, ndarray):
            return cupy
    return np


# the members of the simulated modules that are not numpy-backed wrappers
_SPECIAL_TOP = {
    "ndarray": ndarray, "ufunc": ufunc, "asarray": asarray, "array": array, "asanyarray": asanyarray,
    "ascontiguousarray": ascontiguousarray, "asnumpy": asnumpy, "get_array_module": get_array_module,
    "copyto": copyto, "from_dlpack": from_dlpack, "fromDlpack": from_dlpack, "is_available": is_available,
    "get_default_memory_pool": get_default_memory_pool,
    "get_default_pinned_memory_pool": get_default_pinned_memory_pool, "dtype": np.dtype, "finfo": np.finfo,
    "iinfo": np.iinfo, "fuse": _fuse, "s_": np.s_, "index_exp": np.index_exp, "newaxis": None,
}
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
_RUNTIME_SPECIAL = {
    "CUDARuntimeError": CUDARuntimeError, "getDeviceCount": cudart.getDeviceCount, "getDevice": cudart.getDevice,
    "setDevice": cudart.setDevice, "memGetInfo": cudart.memGetInfo, "deviceSynchronize": cudart.deviceSynchronize,
    "deviceCanAccessPeer": cudart.deviceCanAccessPeer, "deviceEnablePeerAccess": cudart.deviceEnablePeerAccess,
    "runtimeGetVersion": cudart.runtimeGetVersion, "driverGetVersion": cudart.driverGetVersion,
    "getDeviceProperties": cudart.getDeviceProperties, "streamSynchronize": cudart.streamSynchronize,
    "is_hip": False, "streamDefault": 0, "streamNonBlocking": 1, "streamLegacy": 1, "streamPerThread": 2,
    "memcpyHostToHost": 0, "memcpyHostToDevice": 1, "memcpyDeviceToHost": 2, "memcpyDeviceToDevice": 3,
    "memcpyDefault": 4,
}


class SimModule(types.ModuleType):
    """A module of the simulated ``cupy``: only the names of the CuPy snapshot, built
    lazily (numpy-backed wrappers) or taken from ``special``."""

    def __init__(self, name: str, special: dict[str, Any], resolve: Callable[[str, dict], Any] | None,
                 submodules: dict[str, "SimModule"] | None = None) -> None:
        super().__init__(name, f"{name} (plexnet's CuPy simulator: {LABEL} on the host, CuPy {CUPY_VERSION} "
                               f"namespace)")
        self.__dict__["_names"] = MODULES.get(name, {})
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
                raise not_simulated(f"{self.__name__}.{name}")
        else:
            raise no_such(self.__name__, name)
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
        return make_function(f"cupy.{name}", name, npobj, ent.get("params"))
    if kind in ("scalar_type", "constant", "exception"):
        if npobj is None and kind == "exception":
            npobj = getattr(getattr(np, "exceptions", np), name, None)  # np.exceptions: numpy >= 1.25
        return npobj
    return None  # classes, objects and modules not listed as special are not simulated


def _resolve_from(npmod: Any, qual: str) -> Callable[[str, dict], Any]:
    def resolve(name: str, ent: dict) -> Any:
        npobj = getattr(npmod, name, None)
        if ent["kind"] == "function" and callable(npobj):
            return make_function(f"{qual}.{name}", name, npobj, ent.get("params"))
        if ent["kind"] in ("exception", "constant", "scalar_type"):
            return npobj
        return None
    return resolve


def _build() -> SimModule:
    cuda_runtime = SimModule("cupy.cuda.runtime", _RUNTIME_SPECIAL, None)
    memory = SimModule("cupy.cuda.memory", _MEMORY_SPECIAL, None)
    stream = SimModule("cupy.cuda.stream", _STREAM_SPECIAL, None)
    device = SimModule("cupy.cuda.device", _DEVICE_SPECIAL, None)
    cuda = SimModule("cupy.cuda", _CUDA_SPECIAL, None,
                     {"runtime": cuda_runtime, "memory": memory, "stream": stream, "device": device})
    rnd_special: dict[str, Any] = {"RandomState": RandomState, "get_random_state": get_random_state,
                                   "set_random_state": set_random_state, "reset_states": reset_states,
                                   "seed": random_seed}
    for n, ent in MODULES["cupy.random"].items():
        if ent["kind"] == "function" and n not in rnd_special and hasattr(RandomState, n):
            rnd_special[n] = random_function(n)
    random = SimModule("cupy.random", rnd_special, None)
    linalg = SimModule("cupy.linalg", {}, _resolve_from(np.linalg, "cupy.linalg"))
    fft = SimModule("cupy.fft", {}, _resolve_from(np.fft, "cupy.fft"))
    stride_tricks = SimModule("cupy.lib.stride_tricks", {}, _resolve_from(np.lib.stride_tricks,
                                                                        "cupy.lib.stride_tricks"))
    lib = SimModule("cupy.lib", {}, None, {"stride_tricks": stride_tricks})
    top = SimModule("cupy", dict(_SPECIAL_TOP), _resolve_top,
                    {"cuda": cuda, "random": random, "linalg": linalg, "fft": fft, "lib": lib})
    cupyx = _cupyx()
    if cupyx is not None:
        top.__dict__["__plexnet_cupyx__"] = cupyx
    top.__dict__["__version__"] = CUPY_VERSION
    top.__dict__["__plexnet_simulator__"] = (f"{LABEL}: plexnet's CuPy simulator (numpy on the host, CuPy "
                                             f"{CUPY_VERSION} namespace); not a GPU")
    return top


#: the ``cupyx.scipy.special`` functions plexnet's operators use (CuPy has them all)
CUPYX_SPECIAL = ("erf", "gamma", "gammaln", "digamma")


def _cupyx() -> Any:
    """A simulated ``cupyx`` with ``scipy.special`` (from scipy, under the same device-array
    rules), offered as ``cupy.__plexnet_cupyx__`` so real CuPy's ``cupyx`` never sees the
    simulator's arrays; None without scipy."""
    try:
        import scipy.special as sps  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001 - optional: without scipy the operators say what is missing
        return None
    fns = {n: make_function(f"cupyx.scipy.special.{n}", n, getattr(sps, n), None) for n in CUPYX_SPECIAL}
    special = types.SimpleNamespace(__name__="cupyx.scipy.special", **fns)
    return types.SimpleNamespace(__name__="cupyx", scipy=types.SimpleNamespace(__name__="cupyx.scipy",
                                                                                special=special))


#: the simulated ``cupy`` module
cupy: SimModule = _build()
