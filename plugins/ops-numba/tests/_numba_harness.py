"""Run one operator's ops-basic (xp) and numba implementations side by side on the same
arrays, for every req, and compare."""
from __future__ import annotations

from typing import Any

import numpy as np

import plexnet
from plexnet.engine.runctx import run_context
from plexnet.operator import OpContext, OpReqType

REQS = {"write": OpReqType.write, "add": OpReqType.add, "null": OpReqType.null, "inplace": OpReqType.inplace}


def ctx(prop: Any = None, in_shapes: Any = None, backward: bool = False) -> OpContext:
    cpu = plexnet.cpu()
    res: list = []
    if prop is not None:
        rq = prop.backward_resource(in_shapes) if backward else prop.forward_resource(in_shapes)
        res = [plexnet.resource.get().request(cpu, r) for r in rq]
    return OpContext(True, run_context(cpu, "test"), res)


def prop(name: str, kw: dict) -> Any:
    return plexnet.plugins.registries().operators.create_property(name, kw)


def check_equal(a: np.ndarray, b: np.ndarray, what: str, exact: bool = True, tol: Any = None) -> None:
    if exact:
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, err_msg=what, **(tol or {}))


def run_pair(name: str, kw: dict, shapes: list, ops: list, *, dtype: Any = np.float32, req: str = "write",
             seed: int = 0, values: Any = None, backward: bool = True) -> list:
    """Forward (req ``req``) and backward (req ``req``, after a write forward) of each
    operator in ``ops`` on the same inputs; a list of ``(outputs, input gradients)``.
    ``values``: a callable ``(rng, shape) -> array`` for the inputs (default normal)."""
    pr = prop(name, kw)
    ins, outs, _ = pr.infer_shape(list(shapes) + [None] * (len(pr.list_arguments()) - len(shapes)))
    rng = np.random.default_rng(seed)
    gen = values or (lambda r, s: r.standard_normal(s))
    xs = [np.ascontiguousarray(gen(rng, s)).astype(dtype) for s in ins]
    dys = [rng.standard_normal(s).astype(dtype) for s in outs]
    start_out = [rng.standard_normal(s).astype(dtype) for s in outs]
    start_in = [rng.standard_normal(s).astype(dtype) for s in ins]
    r = REQS[req]
    res = []
    for op in ops:
        fc, bc = ctx(pr, ins), ctx(pr, ins, backward=True)
        if req == "inplace":   # not an alias here: inplace is a write to the output
            ys = [np.full(s, np.nan, dtype) for s in outs]
        else:
            ys = [a.copy() for a in start_out]
        op.forward(fc, [a.copy() for a in xs], [r] * len(ys), ys, [])
        grads = None
        if backward:
            yw = [np.empty(s, dtype) for s in outs]
            op.forward(fc, xs, [OpReqType.write] * len(yw), yw, [])
            grads = [np.full(s, np.nan, dtype) if req == "inplace" else a.copy() for s, a in zip(ins, start_in)]
            op.backward(bc, [d.copy() for d in dys], xs, yw, [r] * len(grads), grads, [])
        res.append((ys, grads))
    return res


def assert_same(res: list, exact: bool = True, tol: Any = None, what: str = "") -> None:
    (y0, g0), (y1, g1) = res[0], res[1]
    for i, (a, b) in enumerate(zip(y0, y1)):
        check_equal(a, b, f"{what} output {i}", exact, tol)
    if g0 is not None:
        for i, (a, b) in enumerate(zip(g0, g1)):
            check_equal(a, b, f"{what} gradient {i}", exact, tol)


def default_impl(name: str) -> str:
    """The implementation name the registry picks for ``name`` on cpu when nothing is
    forced: the available one of highest priority (ops-torch's, 10, when installed)."""
    reg = plexnet.plugins.registries().operators
    best = None
    for r in reg.implementations(name):
        if r.device_type not in ("cpu", "*") or (r.available is not None and not r.available()):
            continue
        key = (r.priority, r.device_type == "cpu")
        if best is None or key > best[0]:
            best = (key, r.impl_name)
    assert best is not None
    return best[1]


def numba_record(name: str) -> Any:
    recs = [r for r in plexnet.plugins.registries().operators.implementations(name) if r.impl_name == "numba"]
    assert len(recs) == 1 and recs[0].device_type == "cpu" and recs[0].priority == 5, recs
    return recs[0]


def force_split(monkeypatch: Any) -> list:
    """Every split request of ops-basic's ``_split`` answered with two threads and a lent
    core, whatever the host and the engine's workers (the helper takes part); returns the
    item count of each ``run_items`` call, which still runs."""
    from plexnet_ops_basic.nn import _split
    counts: list = []
    real = _split.run_items
    monkeypatch.setattr(_split, "ways", lambda *a, **k: 2)
    monkeypatch.setattr(_split.blas, "lend_core", lambda: True)
    monkeypatch.setattr(_split.blas, "return_core", lambda: None)
    monkeypatch.setattr(_split, "run_items", lambda n, fn, *a: counts.append(n) or real(n, fn, *a))
    return counts


def record_kernel_calls(monkeypatch: Any, module: str, names: Any) -> list:
    """Wrap the numba kernels ``names`` of ``plexnet_ops_numba.<module>`` so that each call
    appends its name to the returned list (which kernels a case ran)."""
    from plexnet_ops_numba import _base
    K = _base.kernels(module)
    seen: list = []
    for name in names:
        f = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, _f=f, _n=name: seen.append(_n) or _f(*a))
    return seen
