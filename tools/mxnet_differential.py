"""Differential check of plexnet against Apache MXNet 1.9.1: every public ``nd`` function
called on fixed inputs (one array in [-2, 2], one in [0.1, 2], one in [-0.9, 0.9], and
two arrays positionally), every optimizer over five updates (float32 and multi-precision
float16) and the learning-rate schedulers, each result compared.

    OPENBLAS_CORETYPE=SkylakeX /path/to/mxnet-venv/bin/python tools/mxnet_differential.py --lib mxnet --out /tmp/mx.pkl
    python tools/mxnet_differential.py --lib plexnet --out /tmp/px.pkl
    python tools/mxnet_differential.py --compare /tmp/mx.pkl /tmp/px.pkl

Prints each difference: a value or dtype that differs, or a call that fails in one library
only. Random operators are compared on shape and dtype only. Session 7 (2026-12-07) found
with it that plexnet refused ``nd.abs(x, y)`` (MXNet binds y to ``out``; fixed) and that
MXNet's multi-precision LAMB never updates its master weights (plexnet's does:
docs/frontend.md); the remaining differences were inputs MXNet refuses and plexnet
accepts (``moments`` without axes, ``cast_storage`` to the same storage, ...).

Other modes (session 9; results and findings in docs/porting.md, "Differential runs"):
``--kwargs`` (every function with the keyword sets of ``KWARGS``), ``--grads`` (input
gradients; with ``--kwargs`` under each keyword set), ``--symbols`` (every ``sym`` function's
arguments, outputs and inferred shapes / types), ``--namespaces`` (``nd.contrib`` / ``linalg``
/ ``image`` / ``sparse``), ``--methods`` (every NDArray method). Gluon layers and losses:
``tools/mxnet_gluon_differential.py``.

``--dtypes`` calls the same functions on int32, int64, uint8, float16 and float64 arrays
(session 8): MXNet's L2 ``norm`` of an integer array is its scaled reducer run in the
integer type (``[3, 4]`` -> 4; now matched); the other differences were float16 results one
unit in the last place apart, casts of out-of-range values to integers (``degrees`` of
uint8, ``erfinv`` of int32: undefined in C++), and inputs MXNet refuses.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pickle
import signal
import sys
from typing import Any, Callable

import numpy as np

#: functions not called: they block on files, devices or the engine, or draw from MXNet's
#: samplers (which hang on these inputs in MXNet 1.9.1)
SKIP = {"waitall", "load", "save", "load_frombuffer", "imdecode", "Custom", "onehot_encode", "histogram",
        "sample_generalized_negative_binomial", "sample_negative_binomial", "sample_poisson", "sample_gamma",
        "sample_exponential", "sample_multinomial", "sample_normal", "sample_uniform"}
RANDOM = ("random", "sample", "shuffle", "uniform", "normal", "poisson", "exponential", "negative",
          "generalized", "randint", "multinomial", "empty", "Dropout")
#: functions that kill MXNet 1.9.1's process on these inputs (``--grads --kwargs``, ``--namespaces``)
CRASHES: set[str] = {"SequenceLast", "contribquantize_asym"}
OPTIMIZERS = [
    ("sgd", {}), ("sgd", dict(momentum=0.9, wd=0.01)),
    ("sgd", dict(momentum=0.9, clip_gradient=0.5, rescale_grad=0.5)), ("nag", dict(momentum=0.9)),
    ("adam", {}), ("adagrad", {}), ("rmsprop", {}), ("rmsprop", dict(centered=True)), ("adadelta", {}),
    ("ftrl", {}), ("adamax", {}), ("nadam", {}), ("signum", {}), ("ftml", {}), ("lamb", {}),
    ("lars", dict(momentum=0.9)), ("lbsgd", dict(momentum=0.9)), ("adamw", {})]


class _Timeout(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _Timeout()


def _record(out: dict, key: tuple, call: Callable[[], Any]) -> None:
    """``out[key] = call()``, or ``"ERR <type>"`` when it raises or runs past 2 s (a
    refusal is a result too)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(2)
    try:
        out[key] = call()
    except BaseException as e:  # noqa: BLE001 - a refusal is a result too
        out[key] = "ERR " + type(e).__name__
    finally:
        signal.alarm(0)


def _value(r: Any) -> tuple:
    """An array result (the first one of a list) as ``(values, dtype)``."""
    r = r[0] if isinstance(r, (list, tuple)) else r
    return (r.asnumpy(), str(r.dtype))


def _callables(module: Any, skip_random: bool = False, prefix: str | None = None) -> list[tuple[str, Any]]:
    """The public functions of ``module`` to call, by name: not ``SKIP``; with
    ``skip_random`` not the samplers; with a ``prefix`` (the namespace, ``""`` for ``nd``)
    not ``CRASHES``."""
    found = []
    for name in sorted(n for n in dir(module) if not n.startswith("_") and n not in SKIP):
        f = getattr(module, name)
        if not callable(f) or isinstance(f, type) or (prefix is not None and prefix + name in CRASHES) or \
                (skip_random and name.startswith(RANDOM)):
            continue
        found.append((name, f))
    return found


def _traced(name: str) -> None:
    """The name on stderr with ``DIFF_TRACE`` set (to find a call that kills MXNet's process)."""
    if os.environ.get("DIFF_TRACE"):
        print(name, file=sys.stderr, flush=True)


def _functions(mx: Any, dtypes: bool = False, ns: str = "") -> dict:
    nd = getattr(mx.nd, ns) if ns else mx.nd
    rng = np.random.RandomState(0)
    inputs = {"a": (rng.uniform(-2, 2, (3, 4)).astype("f4"),), "p": (rng.uniform(0.1, 2, (3, 4)).astype("f4"),),
              "u": (rng.uniform(-0.9, 0.9, (3, 4)).astype("f4"),)}
    inputs["ab"] = (inputs["a"][0], rng.uniform(-2, 2, (3, 4)).astype("f4"))
    if dtypes:   # the same functions on other dtypes (``--dtypes``)
        inputs = {"i32": (rng.randint(-5, 6, (3, 4)).astype("i4"),),
                  "u8": (rng.randint(0, 256, (3, 4)).astype("u1"),),
                  "f16": (rng.uniform(-2, 2, (3, 4)).astype("f2"),),
                  "f64": (rng.uniform(-2, 2, (3, 4)).astype("f8"),),
                  "i32ab": (rng.randint(-5, 6, (3, 4)).astype("i4"), rng.randint(1, 6, (3, 4)).astype("i4")),
                  "i64": (rng.randint(-5, 6, (3, 4)).astype("i8"),)}
    if ns == "image":   # images: HWC and NHWC, and CHW floats for normalize
        inputs = {"hwc": (rng.uniform(0, 255, (4, 5, 3)).astype("f4"),),
                  "nhwc": (rng.uniform(0, 255, (2, 4, 5, 3)).astype("f4"),),
                  "hwc_u8": (rng.randint(0, 256, (4, 5, 3)).astype("u1"),),
                  "chw": (rng.uniform(0, 1, (3, 4, 5)).astype("f4"),)}
    out: dict = {}
    for name, f in _callables(nd, prefix=ns):
        _traced(ns + name)
        for tag, args in inputs.items():
            _record(out, ("nd", ns + name, tag),
                    lambda: _value(f(*[mx.nd.array(x, dtype=x.dtype) for x in args])))  # noqa: B023 - called at once
    return out


#: keyword sets tried on every function by ``--kwargs`` (a refusal in both is equal)
KWARGS = [dict(axis=0), dict(axis=-1, keepdims=True), dict(axis=(0, 1)), dict(axis=1, exclude=True),
          dict(axis=0, k=2), dict(ord=1, axis=1), dict(is_ascend=True, axis=0), dict(ret_typ="both", k=2),
          dict(begin=(0, 1), end=(2, 3)), dict(reps=(2, 1)), dict(shape=(4, 3)), dict(shape=(-1,)),
          dict(transpose_a=True), dict(transpose_b=True), dict(num_outputs=2, axis=1),
          dict(a_min=-0.5, a_max=0.5), dict(scalar=2.0), dict(dtype="float64"), dict(depth=5),
          dict(mode="clip"), dict(mode="wrap"), dict(alpha=0.5), dict(act_type="softrelu"),
          dict(temperature=2.0), dict(axes=(1, 0)), dict(lhs_axes=(0,), rhs_axes=(0,)),
          dict(out_type="float32")]


def _with_kwargs(mx: Any) -> dict:
    """Every function on the first inputs with each keyword set of ``KWARGS``."""
    nd = mx.nd
    rng = np.random.RandomState(1)
    a = rng.uniform(-2, 2, (3, 4)).astype("f4")
    b = rng.uniform(-2, 2, (3, 4)).astype("f4")
    out: dict = {}
    for name, f in _callables(nd, skip_random=True):
        for i, kw in enumerate(KWARGS):
            for nargs in (1, 2):
                _record(out, ("kw", name, i, nargs),
                        lambda: _value(f(*[nd.array(x) for x in (a, b)[:nargs]], **kw)))  # noqa: B023
    return out


#: NDArray methods not called by ``--methods`` (they write files, wait, or mutate the array)
METHOD_SKIP = {"wait_to_read", "attach_grad", "backward", "tostype", "copyto", "to_dlpack_for_read",
               "to_dlpack_for_write", "asscipy", "handle", "writable", "grad", "context", "ctx"}


def _methods(mx: Any) -> dict:
    """Every public NDArray method with no arguments, with one positional argument and
    with each keyword set of ``KWARGS`` (a refusal in both is equal)."""
    nd = mx.nd
    rng = np.random.RandomState(3)
    a = rng.uniform(-2, 2, (3, 4)).astype("f4")
    out: dict = {}
    names = sorted(n for n in dir(nd.NDArray) if not n.startswith("_") and n not in METHOD_SKIP)
    calls: list[tuple[tuple, dict]] = [((), {}), ((0,), {}), ((1,), {}), ((-1,), {}), (((2, 6),), {}),
                                       ((0, 1), {}), (("float64",), {})] + [((), kw) for kw in KWARGS]

    def describe(r: Any) -> tuple:
        r = r[0] if isinstance(r, (list, tuple)) and r else r
        if isinstance(r, nd.NDArray):
            return (r.asnumpy(), str(r.dtype))
        plain = isinstance(r, (np.ndarray, np.generic, int, float, bool, tuple, list))
        return ("desc", repr(np.asarray(r).tolist()) if plain else type(r).__name__)

    for name in names:
        if not callable(getattr(nd.NDArray, name, None)):
            continue
        for i, (args, kw) in enumerate(calls):
            _record(out, ("m", name, i), lambda: describe(getattr(nd.array(a), name)(*args, **kw)))  # noqa: B023
    return out


#: ``sym`` functions not composed by ``--symbols`` (constructors, loaders, scalar helpers)
SYM_SKIP = {"var", "Variable", "Group", "load", "load_json", "fromjson", "zeros", "ones", "full", "arange", "eye",
            "linspace", "empty", "pow", "maximum", "minimum", "hypot", "Symbol"}


def _symbols(mx: Any) -> dict:
    """Every ``sym`` function on one or two variables (with no keywords and with each set
    of ``KWARGS``): its arguments, outputs, auxiliary states, inferred shapes and types."""
    sym = mx.sym

    def attempt(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as e:  # noqa: BLE001
            return "ERR " + type(e).__name__

    def describe(s: Any) -> tuple:
        given = [v for v in s.list_arguments() if v in "ab"]
        shapes = attempt(lambda: [list(map(tuple, x)) if x is not None else None
                                  for x in s.infer_shape(**{v: (3, 4) for v in given})])
        types = attempt(lambda: [[np.dtype(t).name for t in x] if x is not None else None
                                 for x in s.infer_type(**{v: np.float32 for v in given})])
        return ("desc", repr([s.list_arguments(), s.list_outputs(), s.list_auxiliary_states(), shapes, types]))

    out: dict = {}
    for name, f in _callables(sym):
        if name in SYM_SKIP:
            continue
        for i, kw in enumerate([{}] + KWARGS):
            for nargs in (1, 2):
                _record(out, ("sym", name, i, nargs),
                        lambda: describe(f(*[sym.var(v) for v in "ab"[:nargs]], **kw)))  # noqa: B023
    return out


def _gradients(mx: Any, with_kwargs: bool = False) -> dict:
    """Every function's input gradients under ``autograd`` for a non-uniform head
    gradient, on inputs with ties and zeros (where the conventions differ); with
    ``with_kwargs``, on the tie inputs with each keyword set of ``KWARGS``."""
    nd, ag = mx.nd, mx.autograd
    rng = np.random.RandomState(2)
    tie = np.array([[0, 1, 1, -1], [2, 2, 0, -2], [0.5, -0.5, 0, 3]], "f4")
    inputs = {"a": (rng.uniform(-2, 2, (3, 4)).astype("f4"),), "p": (rng.uniform(0.1, 2, (3, 4)).astype("f4"),),
              "u": (rng.uniform(-0.9, 0.9, (3, 4)).astype("f4"),), "tie": (tie,),
              "ab": (rng.uniform(-2, 2, (3, 4)).astype("f4"), rng.uniform(-2, 2, (3, 4)).astype("f4")),
              "tieab": (tie, np.array([[0, 1, 2, -1], [2, 1, 0, 2], [0.5, 0.5, 0, 3]], "f4"))}

    def grads(f: Any, args: tuple, kw: dict) -> tuple:
        xs = [nd.array(x) for x in args]
        for x in xs:
            x.attach_grad()
        with ag.record():
            r = f(*xs, **kw)
            r = r[0] if isinstance(r, (list, tuple)) else r
        r.backward(nd.array(np.arange(1, r.size + 1, dtype="f4").reshape(r.shape) / r.size))
        return (np.concatenate([x.grad.asnumpy().ravel() for x in xs]), "f4")

    out: dict = {}
    for name, f in _callables(nd, skip_random=True, prefix=""):
        _traced(name)
        cases = [(tag, args, {}) for tag, args in inputs.items()] if not with_kwargs else \
            [(f"{tag}{i}", inputs[tag], kw) for i, kw in enumerate(KWARGS) for tag in ("tie", "tieab")]
        for tag, args, kw in cases:
            _record(out, ("grad", name, tag), lambda: grads(f, args, kw))  # noqa: B023
    return out


def _optimizers(mx: Any) -> dict:
    nd = mx.nd
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (3, 4)).astype("f4")
    grads = [rng.uniform(-1, 1, (3, 4)).astype("f4") for _ in range(5)]
    out: dict = {}
    for name, kw in OPTIMIZERS:
        for mp in (False, True):
            key = ("opt", name, str(sorted(kw.items())), mp)
            try:
                opt = mx.optimizer.create(name, learning_rate=0.1, multi_precision=mp, **kw)
                w = nd.array(w0, dtype="float16" if mp else "float32")
                st = opt.create_state_multi_precision(0, w) if mp else opt.create_state(0, w)
                for g in grads:
                    if mp:
                        opt.update_multi_precision(0, w, nd.array(g, dtype="float16"), st)
                    else:
                        opt.update(0, w, nd.array(g), st)
                out[key] = (w.asnumpy().astype("f4"), "mp" if mp else "f4")
            except Exception as e:  # noqa: BLE001
                out[key] = "ERR " + type(e).__name__
    schedulers = [("FactorScheduler", dict(step=2, factor=0.5)),
                  ("MultiFactorScheduler", dict(step=[2, 5], factor=0.1)),
                  ("PolyScheduler", dict(max_update=10, base_lr=1.0, pwr=2)),
                  ("CosineScheduler", dict(max_update=10, base_lr=1.0, final_lr=0.1))]
    for name, kw in schedulers:
        s = getattr(mx.lr_scheduler, name)(**kw)
        out[("sched", name)] = (np.array([s(i) for i in range(12)], "f8"), "f8")
    return out


def compare(a_path: str, b_path: str) -> int:
    a, b = (pickle.load(open(p, "rb")) for p in (a_path, b_path))
    n = 0
    for k, va in a.items():
        vb = b.get(k, "ERR missing")
        if isinstance(va, str) or isinstance(vb, str):
            if isinstance(va, str) != isinstance(vb, str):
                first, second = (v if isinstance(v, str) else "ok" for v in (va, vb))
                print(k, "first:", first, "| second:", second)
                n += 1
            continue
        if isinstance(va[0], str) or isinstance(vb[0], str):   # ("desc", text) of --symbols
            if va != vb:
                print(k, "first:", va[1], "| second:", vb[1])
                n += 1
            continue
        (xa, ta), (xb, tb) = va, vb
        random = k[0] == "nd" and k[1].startswith(RANDOM)
        tol = 2e-2 if ta == "mp" else 2e-3 if ta == "float16" else 1e-4
        if xa.shape != xb.shape or ta != tb or (not random and not np.allclose(
                xa.astype("f8"), xb.astype("f8"), rtol=tol, atol=tol, equal_nan=True)):
            print(k, "shapes", xa.shape, xb.shape, "dtypes", ta, tb)
            n += 1
    print(f"{n} differences of {len(a)}")
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=["mxnet", "plexnet"])
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2)
    ap.add_argument("--dtypes", action="store_true", help="nd functions on int32/int64/uint8/float16/float64")
    ap.add_argument("--grads", action="store_true", help="input gradients of every nd function (with --kwargs: "
                    "under each keyword set)")
    ap.add_argument("--namespaces", action="store_true", help="the functions of nd.contrib / linalg / image / sparse")
    ap.add_argument("--methods", action="store_true", help="every NDArray method with common arguments")
    ap.add_argument("--symbols", action="store_true", help="every sym function: arguments, outputs, "
                    "inferred shapes and types")
    ap.add_argument("--kwargs", action="store_true", help="every nd function with common keyword sets")
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    if not (args.lib and args.out):
        sys.exit("--lib and --out, or --compare A B")
    mx = importlib.import_module(args.lib)
    if args.methods:
        res = _methods(mx)
    elif args.namespaces:
        res = {k: v for ns in ("contrib", "linalg", "image", "sparse")
               for k, v in _functions(mx, args.dtypes, ns).items()}
    elif args.symbols:
        res = _symbols(mx)
    elif args.grads:
        res = _gradients(mx, args.kwargs)
    elif args.kwargs:
        res = _with_kwargs(mx)
    else:
        res = _functions(mx, True) if args.dtypes else {**_functions(mx), **_optimizers(mx)}
    with open(args.out, "wb") as f:
        pickle.dump(res, f)
    print(len(res), "results")


if __name__ == "__main__":
    main()
