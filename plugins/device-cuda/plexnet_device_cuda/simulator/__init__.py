"""A CPU-backed **CuPy simulator**: a module-shaped stand-in for ``cupy``, on numpy.

SIMULATED — nothing here runs on a GPU, and passing tests under it is *not* GPU
verification. It exists so that the ``gpu`` backend's plumbing and plexnet's
host/device discipline can be exercised in CI on machines without a GPU. It checks
what can be checked without a device:

* **the CuPy namespace** — only names that real CuPy exposes (``cupy_names.json``,
  a snapshot of CuPy 14.2.0: top level, ``linalg``, ``random``, ``fft``,
  ``lib.stride_tricks``, ``cuda``; the methods of ``cupy.ndarray``; which ufunc
  methods such as ``add.at`` / ``maximum.reduce`` CuPy really supports; the keyword
  arguments CuPy's signatures accept). A numpy-only name raises ``AttributeError``
  naming it, a CuPy name the simulator does not implement raises ``AttributeError``
  saying so.
* **host/device discipline** — ``ndarray`` is its own class (not a numpy subclass)
  holding a numpy array and a device id. Implicit conversion to numpy
  (``numpy.asarray(x)``) raises CuPy's ``TypeError``; a host ``numpy.ndarray`` passed
  to a function, ufunc or operator raises ``TypeError`` (``cupy.asarray`` /
  ``cupy.array`` / ``ndarray.set`` are the explicit host->device copies,
  ``.get()`` / ``cupy.asnumpy`` the device->host ones). This is *stricter* than CuPy
  for functions that CuPy forwards to the argument's own methods (``cupy.sum(h)``
  silently returns a numpy result there): such code would run on the host.
* **devices** — ``PLEXNET_CUDA_SIMULATE=<n>`` simulated devices; the current device
  is per thread (0 on a new thread, as in CUDA); arrays are allocated on the current
  device; a kernel touching an array of another device raises CuPy's "Peer access is
  unavailable" ``ValueError`` (``PLEXNET_CUDA_SIMULATE_PEER=1``: allowed with CuPy's
  ``PerformanceWarning``); device memory is accounted (``memGetInfo``, the default
  memory pool, ``cudaErrorMemoryAllocation`` / ``OutOfMemoryError`` when a simulated
  device of ``PLEXNET_CUDA_SIMULATE_MEMORY`` bytes is full).
* **stream ordering** — every kernel, copy and transfer is recorded on the current
  stream (per thread and device, ``Stream.use()``, ``with stream:``). Work runs
  synchronously on the host, but the simulator tracks what a GPU would only know
  after a synchronisation: reading memory written on another stream that was not
  synchronised (``Stream.synchronize``, ``Event`` + ``wait_event``, ``Device.synchronize``,
  the legacy default stream's implicit ordering with *blocking* streams) raises
  ``StreamHazardError`` (``PLEXNET_CUDA_SIMULATE_HAZARDS=warn|off`` to relax) — on a
  GPU such code reads stale data.

What it cannot check: kernels (numerics come from numpy, not CUDA/cuBLAS/cuDNN),
real concurrency between streams and the host, timing, performance, memory
fragmentation, custom kernels (``RawKernel``/``ElementwiseKernel``), cuDNN.

Layout (the simulator's API, and the classes and functions behind ``cupy``, are
re-exported here):

* ``snapshot`` — the CuPy snapshot as loaded, and the signature checks it gives
* ``errors`` — CuPy's errors and warnings, and the simulator's own
* ``runtime`` — configuration from the environment and the runtime singleton ``RT``
  (current device and streams per thread, memory accounting, kernels' device checks);
  ``reset()``, ``stats()``
* ``hazards`` — stream-ordering state and the hazard checker
* ``devices``, ``streams``, ``memory``, ``cuda_runtime`` — ``cupy.cuda``
* ``arrays`` — ``cupy.ndarray``, and how numpy results become simulated kernels;
  ``methods`` and ``operators`` install its numpy-forwarded methods, its operators and
  numpy protocols
* ``ufuncs``, ``functions``, ``random`` — ``cupy.ufunc``, the module-level functions,
  ``cupy.random``
* ``namespace`` — the module-shaped ``cupy`` assembled from ``cupy_names.json``
"""
from __future__ import annotations

from . import methods as _methods
from . import operators as _operators
from .arrays import ndarray
from .cuda_runtime import (deviceCanAccessPeer, deviceEnablePeerAccess, deviceSynchronize, driverGetVersion,
                           getDevice, getDeviceCount, getDeviceProperties, memGetInfo, runtimeGetVersion,
                           setDevice, streamSynchronize)
from .devices import Device, get_device_id
from .errors import (CUDARuntimeError, NotSimulatedError, OutOfMemoryError, PerformanceWarning, StreamHazardError,
                     StreamHazardWarning)
from .functions import (array, asanyarray, asarray, ascontiguousarray, asnumpy, copyto, from_dlpack,
                        is_available)
from .memory import (BaseMemory, Memory, MemoryPointer, MemoryPool, PinnedMemoryPool, PooledMemory, UnownedMemory,
                     alloc, get_default_memory_pool, get_default_pinned_memory_pool)
from .namespace import LABEL, SimModule, cupy, get_array_module
from .random import RandomState, get_random_state, reset_states, set_random_state
from .runtime import ENV, requested_devices, reset, runtime_state, stats
from .snapshot import CUPY_VERSION
from .streams import Event, Stream, get_current_stream, get_elapsed_time
from .ufuncs import ufunc

_methods.install()
_operators.install()

__all__ = [
    "ENV", "LABEL", "CUPY_VERSION", "cupy", "SimModule", "requested_devices", "reset", "runtime_state", "stats",
    "StreamHazardError", "StreamHazardWarning", "PerformanceWarning", "NotSimulatedError", "CUDARuntimeError",
    "OutOfMemoryError",
    "BaseMemory", "Memory", "PooledMemory", "UnownedMemory", "MemoryPointer", "MemoryPool", "PinnedMemoryPool",
    "get_default_memory_pool", "get_default_pinned_memory_pool", "alloc",
    "Device", "get_device_id", "Stream", "Event", "get_current_stream", "get_elapsed_time",
    "ndarray", "ufunc", "asarray", "array", "asanyarray", "ascontiguousarray", "asnumpy", "get_array_module",
    "copyto", "from_dlpack", "is_available",
    "RandomState", "get_random_state", "set_random_state", "reset_states",
    "getDeviceCount", "getDevice", "setDevice", "memGetInfo", "deviceSynchronize", "deviceCanAccessPeer",
    "deviceEnablePeerAccess", "runtimeGetVersion", "driverGetVersion", "getDeviceProperties", "streamSynchronize",
]
