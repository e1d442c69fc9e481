"""Real CuPy's namespace as the simulator sees it: the snapshot ``cupy_names.json``
(loaded once, see ``plexnet_device_cuda.cupy_names``) and the signature checks derived
from it."""
from __future__ import annotations

from typing import Any

from .. import cupy_names as _names

_SNAP = _names.load()
CUPY_VERSION: str = _SNAP["cupy_version"]
#: public names of each CuPy module (``"cupy"``, ``"cupy.linalg"`` ...): kind, params
MODULES: dict[str, dict[str, Any]] = _SNAP["modules"]
#: public members of the classes the simulator imitates (``"cupy.ndarray"`` ...)
CLASSES: dict[str, dict[str, Any]] = _SNAP["classes"]
#: ufunc method (``"reduce"``, ``"at"`` ...) -> the ufuncs CuPy supports it for
UFUNC_SUPPORT: dict[str, set[str]] = {k: set(v) for k, v in _SNAP["ufunc_method_support"].items()}
#: CUDA runtime errors: name -> {"status", "message"}
RUNTIME_ERRORS: dict[str, dict[str, Any]] = _SNAP["runtime_errors"]


class Params:
    """The keyword names and positional count a CuPy signature accepts."""

    __slots__ = ("qual", "kw", "npos", "varkw")

    def __init__(self, qual: str, spec: str | None) -> None:
        self.qual = qual
        self.kw: frozenset[str] | None = None
        self.npos = -1
        self.varkw = True
        if spec is None:
            return
        kw, npos, varpos, varkw, kwonly = set(), 0, False, False, False
        for p in [p.strip() for p in spec.split(",") if p.strip()]:
            if p == "/":
                kw = set()  # positional-only names cannot be keywords
                continue
            if p == "*":
                kwonly = True
            elif p.startswith("**"):
                varkw = True
            elif p.startswith("*"):
                varpos = True
                kwonly = True
            else:
                kw.add(p)
                if not kwonly:
                    npos += 1
        self.kw = frozenset(kw)
        self.npos = -1 if varpos else npos
        self.varkw = varkw

    def check(self, args: tuple, kwargs: dict) -> None:
        if self.kw is None:
            return
        if not self.varkw:
            for k in kwargs:
                if k not in self.kw:
                    raise TypeError(f"{self.qual}() got an unexpected keyword argument '{k}'"
                                    f" [CuPy {CUPY_VERSION} signature, checked by plexnet's CuPy simulator]")
        if self.npos >= 0 and len(args) > self.npos:
            raise TypeError(f"{self.qual}() takes at most {self.npos} positional arguments "
                            f"({len(args)} given)")
