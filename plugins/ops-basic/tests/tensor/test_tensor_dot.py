"""dot (MXNet's N-D rule, transposes, vectors) and batch_dot."""
from __future__ import annotations


import numpy as np
import pytest
from tensorref import param_error, rand, shape_error

from opcheck import CTX, _opctx, check_forward, check_gradient, check_req, make_prop
from plexnet.operator import OpReqType


def dot_ref(l: np.ndarray, r: np.ndarray, ta: bool, tb: bool) -> np.ndarray:
    """MXNet's rule, written independently: flatten to matrices, multiply, reshape."""
    if l.ndim == 1 and r.ndim == 1:
        return np.array([np.sum(l * r)])
    if ta:
        L, lfree = l.reshape(l.shape[0], -1).T, l.shape[1:]
    else:
        L, lfree = l.reshape(-1, l.shape[-1]), l.shape[:-1]
    if tb:
        R, rfree = r.reshape(-1, r.shape[-1]).T, r.shape[:-1]
    else:
        R, rfree = r.reshape(r.shape[0], -1), r.shape[1:]
    if l.ndim == 1:
        L, lfree = l.reshape(1, -1), ()
    if r.ndim == 1:
        R, rfree = r.reshape(-1, 1), ()
    return (L @ R).reshape(tuple(lfree) + tuple(rfree))


# lhs shape, rhs shape, transpose_a, transpose_b, output shape (as MXNet 1.9.1 reports)
DOT_CASES = [
    ((3, 4), (4, 5), False, False, (3, 5)),
    ((4, 3), (4, 5), True, False, (3, 5)),
    ((3, 4), (5, 4), False, True, (3, 5)),
    ((4, 3), (5, 4), True, True, (3, 5)),
    ((2, 3, 4), (4, 5), False, False, (2, 3, 5)),
    ((4, 2, 3), (4, 5), True, False, (2, 3, 5)),
    ((2, 3, 4), (5, 4), False, True, (2, 3, 5)),
    ((2, 3, 4), (5, 2, 4), False, True, (2, 3, 5, 2)),
    ((2, 3, 4), (4, 2, 2), False, False, (2, 3, 2, 2)),
    ((4,), (4,), False, False, (1,)),
    ((4,), (4, 3), False, False, (3,)),
    ((3, 4), (4,), False, False, (3,)),
    ((4, 3), (4,), True, False, (3,)),
    ((4,), (3, 4), False, True, (3,)),
]


@pytest.mark.parametrize("ls,rs,ta,tb,out", DOT_CASES, ids=str)
def test_dot(ls: tuple, rs: tuple, ta: bool, tb: bool, out: tuple) -> None:
    kw = {"transpose_a": ta, "transpose_b": tb}
    assert make_prop("dot", kw).infer_shape([ls, rs])[1] == [out]
    l, r = rand(ls, seed=1), rand(rs, seed=2)
    check_forward("dot", [l, r], kw, dot_ref(l, r, ta, tb), rtol=1e-12, atol=1e-12)
    check_gradient("dot", [l, r], kw)
    check_req("dot", [l, r], kw, req=("null", "write", "add"))


def test_dot_float32_and_errors() -> None:
    l, r = rand((3, 4), dtype=np.float32), rand((4, 2), seed=1, dtype=np.float32)
    outs = check_forward("dot", [l, r], {}, l.astype(np.float64) @ r, rtol=1e-5, atol=1e-6)
    assert outs[0].dtype == np.float32
    shape_error("dot", {}, (3, 4), (5, 6), match=("(3, 4)", "(5, 6)"))
    shape_error("dot", {"transpose_a": True}, (4,), (4,), match=("transpose",))
    shape_error("dot", {"transpose_b": True}, (2, 3, 4), (4, 2, 5), match=("(2, 3, 4)", "(4, 2, 5)"))
    assert make_prop("dot").infer_shape([None, (4, 5)])[1] == [None]
    param_error("dot", {"transpose_a": "maybe"}, "transpose_a", "maybe")
    param_error("dot", {"forward_stype": "dense"}, "forward_stype", "dense")
    make_prop("dot", {"forward_stype": "default"})


# lhs shape, rhs shape, transpose_a, transpose_b
BATCH_CASES = [
    ((2, 3, 4), (2, 4, 5), False, False),
    ((2, 4, 3), (2, 4, 5), True, False),
    ((2, 3, 4), (2, 5, 4), False, True),
    ((2, 4, 3), (2, 5, 4), True, True),
    ((2, 2, 3, 4), (2, 2, 4, 2), False, False),
]


@pytest.mark.parametrize("ls,rs,ta,tb", BATCH_CASES, ids=str)
def test_batch_dot(ls: tuple, rs: tuple, ta: bool, tb: bool) -> None:
    kw = {"transpose_a": ta, "transpose_b": tb}
    l, r = rand(ls, seed=3), rand(rs, seed=4)
    a = np.swapaxes(l, -1, -2) if ta else l
    b = np.swapaxes(r, -1, -2) if tb else r
    ref = np.einsum("...ij,...jk->...ik", a, b)
    check_forward("batch_dot", [l, r], kw, ref, rtol=1e-12, atol=1e-12)
    check_gradient("batch_dot", [l, r], kw)
    check_req("batch_dot", [l, r], kw, req=("null", "write", "add"))


def test_batch_dot_errors() -> None:
    shape_error("batch_dot", {}, (2, 3, 4), (1, 4, 5), match=("(2, 3, 4)", "(1, 4, 5)"))
    shape_error("batch_dot", {}, (3, 4), (4, 5), match=("(3, 4)",))
    shape_error("batch_dot", {}, (2, 3, 4), (2, 5, 6), match=("(2, 3, 4)", "(2, 5, 6)"))


@pytest.mark.parametrize("name,ls,rs,kw", [
    ("dot", (256, 256), (256, 256), {}),
    ("dot", (256, 256), (256, 256), {"transpose_a": True, "transpose_b": True}),
    ("batch_dot", (8, 64, 64), (8, 64, 64), {}),
])
def test_write_path_allocates_no_output_sized_temporary(name: str, ls: tuple, rs: tuple, kw: dict) -> None:
    """``req=write`` goes straight to BLAS into the output: no temporary result plus copy
    (checked by allocation, not by timing: timed tests flake on shared machines)."""
    import tracemalloc
    prop = make_prop(name, kw)
    op = prop.create_operator(CTX)
    l, r = rand(ls, dtype=np.float32), rand(rs, seed=1, dtype=np.float32)
    out = np.empty(prop.infer_shape([ls, rs])[1][0], dtype=np.float32)
    ctx = _opctx(True, [])
    op.forward(ctx, [l, r], [OpReqType.write], [out], [])  # warm caches
    tracemalloc.start()
    try:
        op.forward(ctx, [l, r], [OpReqType.write], [out], [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < out.nbytes // 2, f"{name}: {peak} bytes allocated for a {out.nbytes}-byte result"
    a = l.T if kw.get("transpose_a") else l
    b = r.T if kw.get("transpose_b") else r
    want = np.dot(a, b) if name == "dot" else np.matmul(l, r)
    np.testing.assert_allclose(out, want, rtol=1e-4)
