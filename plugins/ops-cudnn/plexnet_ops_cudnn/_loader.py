"""Guarded imports of the cuDNN frontend (``cudnn``) and CuPy, keeping the reason they
failed (Chainer's pattern). Nothing here raises; everything is evaluated lazily, once,
so loading the plugin stays cheap where no GPU exists.

``available()`` is the registry's availability probe: True only when the frontend
imports, the cuDNN library behind it loads (``cudnn.backend_version()`` answers), CuPy
imports and sees at least one CUDA device.
"""
from __future__ import annotations

import ctypes
import glob
import os
import sys
import sysconfig
import threading
from typing import Any

cudnn: Any = None
cupy: Any = None
_reason: str | None = None
_checked = False
_lock = threading.Lock()
_info: dict[str, Any] = {}

INSTALL_HINT = ("pip install 'plexnet-ops-cudnn[cudnn]' (nvidia-cudnn-frontend) plus a cuDNN 9 library "
                "matching your CUDA (e.g. nvidia-cudnn-cu12 / nvidia-cudnn-cu13, or the one PyTorch brings)")


def _site_dirs() -> list[str]:
    dirs = []
    for key in ("purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p and p not in dirs:
            dirs.append(p)
    for p in sys.path:
        if p and p.endswith(("site-packages", "dist-packages")) and p not in dirs:
            dirs.append(p)
    return dirs


def _preload_cudnn_library() -> str | None:
    """Load ``libcudnn.so.9`` (and its sub-libraries) from a pip-installed
    ``nvidia-cudnn-cu*`` wheel with RTLD_GLOBAL when the dynamic linker would not find
    it by itself, so the frontend's own ``dlopen('libcudnn.so.9')`` resolves to it.
    Returns the folder used, or None. ``PLEXNET_CUDNN_PRELOAD=0`` turns this off."""
    if os.environ.get("PLEXNET_CUDNN_PRELOAD", "1") == "0" or not sys.platform.startswith("linux"):
        return None
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if d and os.path.exists(os.path.join(d, "libcudnn.so.9")):
            return None  # the linker finds it
    patterns = ("nvidia/cudnn/lib", "nvidia/cu13/lib", "nvidia/cu12/lib")
    for site in _site_dirs():
        for pat in patterns:
            libdir = os.path.join(site, pat)
            main = os.path.join(libdir, "libcudnn.so.9")
            if not os.path.exists(main):
                continue
            subs = sorted(glob.glob(os.path.join(libdir, "libcudnn_*.so.9")),
                          key=lambda p: (0 if "graph" in p else 1, p))
            for p in subs + [main]:
                try:
                    ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)
                except OSError:
                    pass
            return libdir
    return None


def _check() -> None:
    global cudnn, cupy, _reason, _checked
    if _checked:
        return
    with _lock:
        if _checked:
            return
        reason = _check_simulated()
        if reason is not None:  # never load cuDNN for simulated devices
            _info["simulated"] = True
            _reason, _checked = reason, True
            return
        try:
            _info["preloaded_from"] = _preload_cudnn_library()
        except Exception as e:  # noqa: BLE001 - never fatal
            _info["preload_error"] = f"{type(e).__name__}: {e}"
        try:
            import cudnn as _cudnn  # type: ignore[import-not-found]
            cudnn = _cudnn
            _info["frontend_version"] = getattr(_cudnn, "__version__", "?")
        except ImportError as e:
            reason = f"the cuDNN frontend is not installed ({e}); {INSTALL_HINT}"
        except Exception as e:  # noqa: BLE001 - broken installation
            reason = f"importing the cuDNN frontend failed: {type(e).__name__}: {e}"
        if reason is None:
            try:
                _info["cudnn_version"] = int(cudnn.backend_version())
            except Exception as e:  # noqa: BLE001 - library missing or wrong version
                reason = (f"the cuDNN frontend is installed but the cuDNN library cannot be used: "
                          f"{type(e).__name__}: {e}; {INSTALL_HINT}")
        if reason is None:
            reason = _check_cupy()
        _reason = reason
        _checked = True


def _check_simulated() -> str | None:
    """The gpu backend runs on plexnet's CuPy simulator (PLEXNET_CUDA_SIMULATE): there is
    no GPU, so cuDNN cannot run and the xp implementations take over."""
    try:
        from plexnet_device_cuda import cupy_loader  # type: ignore[import-not-found]
    except ImportError:
        return None
    if getattr(cupy_loader, "simulated", False):
        return ("the gpu backend is SIMULATED on the host (PLEXNET_CUDA_SIMULATE, plexnet's CuPy simulator): "
                "cuDNN needs a real GPU, so the xp implementations of plexnet-ops-basic run instead")
    return None


def _check_cupy() -> str | None:
    global cupy
    try:  # the gpu backend's own probe, when that plugin is installed
        from plexnet_device_cuda import cupy_loader  # type: ignore[import-not-found]
        if not cupy_loader.available:
            return f"the gpu backend is unavailable: {cupy_loader.reason}"
        cupy = cupy_loader.cupy
        return None
    except ImportError:
        pass
    try:
        import cupy as _cupy  # type: ignore[import-not-found]
    except ImportError as e:
        return f"CuPy is not installed ({e}); install plexnet-device-cuda and cupy-cudaXXx"
    except Exception as e:  # noqa: BLE001
        return f"importing CuPy failed: {type(e).__name__}: {e}"
    try:
        if _cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no CUDA device"
    except Exception as e:  # noqa: BLE001
        return f"CUDA is not usable: {type(e).__name__}: {e}"
    cupy = _cupy
    return None


def available() -> bool:
    """The registry's availability probe for every cuDNN implementation."""
    _check()
    return _reason is None


def reason() -> str | None:
    """Why the cuDNN implementations are unavailable (None when they are available)."""
    _check()
    return _reason


available.reason = reason  # type: ignore[attr-defined]  # read by the registry's messages


def status() -> dict[str, Any]:
    _check()
    return {"available": _reason is None, "reason": _reason, **_info}


def _reset_for_tests() -> None:
    global _checked, _reason, cudnn, cupy
    with _lock:
        _checked, _reason, cudnn, cupy = False, None, None, None
        _info.clear()
