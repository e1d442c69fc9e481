"""Snapshot of real CuPy's public namespace, for the CuPy simulator.

``cupy_names.json`` (next to this file) records which names CuPy exposes (top level,
``linalg``, ``random``, ``fft``, ``lib.stride_tricks``, ``cuda`` ...), what kind of
object each is, the parameter names of its signature where CuPy publishes one, the
members of the classes the simulator imitates (``ndarray``, ``cuda.Device``,
``cuda.Stream`` ...), which ufunc methods (``reduce``, ``at`` ...) CuPy really
supports for which ufunc, and a few CUDA runtime error messages. The simulator exposes
only these names, so code that uses a numpy-only function fails under simulation as it
would on a GPU.

Regenerate with a Python that can import CuPy (no GPU needed)::

    PYTHONPATH=plugins/device-cuda /path/to/python-with-cupy -m plexnet_device_cuda.cupy_names

which rewrites ``plexnet_device_cuda/cupy_names.json``; ``--out FILE`` writes elsewhere,
``--check`` compares with the checked-in file and exits 1 when they differ.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PATH = os.path.join(HERE, "cupy_names.json")

#: modules whose public names are recorded, by dotted path below ``cupy``
MODULES = ["", "linalg", "random", "fft", "lib", "lib.stride_tricks", "cuda", "cuda.runtime",
           "cuda.memory", "cuda.stream", "cuda.device"]
#: classes whose public members are recorded (dotted path below ``cupy``)
CLASSES = ["ndarray", "cuda.Device", "cuda.Stream", "cuda.Event", "cuda.Memory", "cuda.MemoryPointer",
           "cuda.MemoryPool", "cuda.PinnedMemoryPool", "random.RandomState", "ufunc"]
UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")
#: CUDA runtime statuses whose CuPy messages are recorded
STATUSES = {"cudaErrorInvalidValue": 1, "cudaErrorMemoryAllocation": 2, "cudaErrorInvalidDevice": 101,
            "cudaErrorInvalidResourceHandle": 400, "cudaErrorNoDevice": 100}

_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
          inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
_KIND_NAMES = {k: k.name for k in _KINDS}


def _split_params(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _params_from_doc(name: str, doc: str | None) -> list[list[str]] | None:
    """Cython functions publish ``name(a, b=None, *, c=...)`` as the docstring's first line."""
    if not doc:
        return None
    first = doc.strip().splitlines()[0].replace("\\*", "*")
    m = re.match(r"^[\w.]*?" + re.escape(name) + r"\((.*)\)(\s*->.*)?$", first)
    if not m:
        return None
    params: list[list[str]] = []
    kind = "POSITIONAL_OR_KEYWORD"
    raw = _split_params(m.group(1))
    if "/" in raw:  # everything before '/' is positional-only
        cut = raw.index("/")
        for p in raw[:cut]:
            params.append([p.split("=")[0].strip(), "POSITIONAL_ONLY"])
        raw = raw[cut + 1:]
    for p in raw:
        p = p.split("=")[0].strip()
        if p in ("", "self"):
            continue
        if p == "*":
            kind = "KEYWORD_ONLY"
        elif p.startswith("**"):
            params.append([p[2:], "VAR_KEYWORD"])
        elif p.startswith("*"):
            params.append([p[1:], "VAR_POSITIONAL"])
            kind = "KEYWORD_ONLY"
        elif re.match(r"^\w+$", p):
            params.append([p, kind])
        else:  # "[, out1, out2]" and the like: give up, no check
            return None
    return params


def _params(name: str, obj: Any) -> str | None:
    """The parameter names as a compact signature: ``"a, b, /, c, *, d, **kw"``."""
    try:
        sig = inspect.signature(obj)
        params = [[p.name, _KIND_NAMES[p.kind]] for p in sig.parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        params = _params_from_doc(name, getattr(obj, "__doc__", None))
    if params is None:
        return None
    out: list[str] = []
    star = False
    for i, (n, k) in enumerate(params):
        if k == "VAR_POSITIONAL":
            out.append("*" + n)
            star = True
        elif k == "VAR_KEYWORD":
            out.append("**" + n)
        elif k == "KEYWORD_ONLY":
            if not star:
                out.append("*")
                star = True
            out.append(n)
        else:
            out.append(n)
            if k == "POSITIONAL_ONLY" and (i + 1 == len(params) or params[i + 1][1] != "POSITIONAL_ONLY"):
                out.append("/")
    return ", ".join(out)


def _kind(cupy: Any, np: Any, obj: Any) -> str:
    if isinstance(obj, type(cupy)):
        return "module"
    if isinstance(obj, cupy.ufunc):
        return "ufunc"
    if isinstance(obj, type):
        if issubclass(obj, np.generic):
            return "scalar_type"
        if issubclass(obj, BaseException):
            return "exception"
        return "class"
    if isinstance(obj, (int, float, complex, bool, str)) or obj is None:
        return "constant"
    if callable(obj):
        return "function"
    return "object"


def _module_entry(cupy: Any, np: Any, mod: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sorted(dir(mod)):
        if n.startswith("_") or n == "annotations":
            continue
        try:
            obj = getattr(mod, n)
        except Exception:  # noqa: BLE001 - lazily failing attributes (no CUDA)
            out[n] = {"kind": "unavailable"}
            continue
        k = _kind(cupy, np, obj)
        ent: dict[str, Any] = {"kind": k}
        if k in ("function", "ufunc"):
            ent["params"] = _params(n, obj)
        if k == "ufunc":
            ent["nin"], ent["nout"] = int(obj.nin), int(obj.nout)
        out[n] = ent
    return out


class _Probe:
    """An object whose every attribute access raises: tells whether a ufunc method
    reached the point of using its operand (supported) or refused (NotImplementedError)."""

    class Hit(Exception):
        pass

    def __getattr__(self, name: str) -> Any:
        raise _Probe.Hit(name)


def _ufunc_support(cupy: Any) -> dict[str, list[str]]:
    support: dict[str, list[str]] = {m: [] for m in UFUNC_METHODS}
    for n in sorted(dir(cupy)):
        obj = getattr(cupy, n, None)
        if not isinstance(obj, cupy.ufunc) or n.startswith("_"):
            continue
        for m in ("reduce", "accumulate", "reduceat", "at"):
            try:
                if m == "at":
                    obj.at(_Probe(), 0, 1)
                elif m == "reduceat":
                    obj.reduceat(_Probe(), [0])
                else:
                    getattr(obj, m)(_Probe())
            except _Probe.Hit:
                support[m].append(n)
            except NotImplementedError:
                pass
            except Exception:  # noqa: BLE001 - anything else: it got past the refusal
                support[m].append(n)
        support["outer"].append(n)  # core.array(A) ... self(A, B): every ufunc
    return support


def snapshot() -> dict[str, Any]:
    import numpy as np
    import cupy
    mods: dict[str, Any] = {}
    for path in MODULES:
        mod = cupy
        for part in [p for p in path.split(".") if p]:
            mod = getattr(mod, part)
        mods["cupy" + ("." + path if path else "")] = _module_entry(cupy, np, mod)
    classes: dict[str, Any] = {}
    for path in CLASSES:
        obj = cupy
        for part in path.split("."):
            obj = getattr(obj, part)
        members: dict[str, Any] = {}
        for n in sorted(dir(obj)):
            if n.startswith("_") and not (n.startswith("__") and n.endswith("__")):
                continue
            if n.startswith("__") and n in dir(object):
                continue
            a = getattr(obj, n, None)
            ent: dict[str, Any] = {"kind": "method" if callable(a) and not isinstance(a, (property, type)) else
                                   "attribute"}
            if ent["kind"] == "method" and not n.startswith("__"):
                ent["params"] = _params(n, a)
            members[n] = ent
        classes["cupy." + path] = members
    statuses = {}
    for name, code in STATUSES.items():
        statuses[name] = {"status": code, "message": str(cupy.cuda.runtime.CUDARuntimeError(code))}
    return {
        "cupy_version": cupy.__version__,
        "numpy_version": np.__version__,
        "generated_by": "python -m plexnet_device_cuda.cupy_names",
        "modules": mods,
        "classes": classes,
        "ufunc_method_support": _ufunc_support(cupy),
        "runtime_errors": statuses,
    }


def load(path: str = DEFAULT_PATH) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m plexnet_device_cuda.cupy_names", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=DEFAULT_PATH, help="where to write the snapshot (default: the checked-in file)")
    p.add_argument("--check", action="store_true", help="compare with --out instead of writing; exit 1 if different")
    args = p.parse_args(argv)
    try:
        snap = snapshot()
    except ImportError as e:
        print(f"cannot import CuPy ({e}); run this with a Python that has CuPy installed (no GPU needed)",
              file=sys.stderr)
        return 2
    text = json.dumps(snap, indent=1, sort_keys=True) + "\n"
    if args.check:
        with open(args.out, encoding="utf-8") as f:
            same = f.read() == text
        print("snapshot is up to date" if same else f"{args.out} differs from CuPy {snap['cupy_version']}")
        return 0 if same else 1
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    n = sum(len(v) for v in snap["modules"].values())
    print(f"wrote {args.out}: CuPy {snap['cupy_version']}, {n} module names, {len(snap['classes'])} classes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
