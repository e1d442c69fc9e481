"""The linalg family through the front end: namespaces, flat names, symbols, autograd,
errors that name operator, argument and shapes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx
from opcheck import run_forward

NAMES = ["det", "extractdiag", "extracttrian", "gelqf", "gemm", "gemm2", "inverse", "makediag", "maketrian",
         "potrf", "potri", "slogdet", "sumlogdiag", "syevd", "syrk", "trmm", "trsm"]


def test_plugin_is_listed() -> None:
    report = {r["name"]: r for r in mx.plugins.get_manager().report()}
    assert report["ops_linalg"]["status"] == "ok"
    assert {"_linalg_" + n for n in NAMES} <= set(report["ops_linalg"]["registered"]["operators"])


@pytest.mark.parametrize("name", NAMES)
def test_namespaces(name: str) -> None:
    assert callable(getattr(mx.nd.linalg, name)) and callable(getattr(mx.sym.linalg, name))
    if name != "syevd":  # MXNet exports no flat linalg_syevd
        assert callable(getattr(mx.nd, "linalg_" + name)) and callable(getattr(mx.sym, "linalg_" + name))
    assert name in dir(mx.nd.linalg)


def test_unknown_name_in_namespace() -> None:
    with pytest.raises(AttributeError, match="linalg has no operator 'nope'"):
        mx.nd.linalg.nope


def test_nd_gemm2_and_autograd() -> None:
    a = mx.nd.array(np.arange(6).reshape(2, 3), dtype="float64")
    b = mx.nd.array(np.arange(12).reshape(3, 4), dtype="float64")
    try:
        a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.linalg.gemm2(a, b, alpha=2.0)
    except mx.base.PlexnetError as e:  # imperative autograd is being built (issue 14 front end)
        pytest.skip(f"imperative autograd unavailable: {e}")
    y.backward(mx.nd.ones((2, 4), dtype="float64"))
    np.testing.assert_allclose(y.asnumpy(), 2 * a.asnumpy() @ b.asnumpy())
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * np.ones((2, 4)) @ b.asnumpy().T)


def test_symbol_executor_potrf_roundtrip() -> None:
    data = mx.sym.var("A")
    net = mx.sym.linalg.syrk(mx.sym.linalg.potrf(data))
    assert "_linalg_potrf" in net.tojson()
    x = np.array([[4.0, 2.0], [2.0, 3.0]])
    exe = net.simple_bind(mx.cpu(), A=(2, 2), type_dict={"A": np.float64})
    exe.arg_dict["A"][:] = x
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), x, rtol=1e-12)  # L L^T == A
    exe.backward([mx.nd.array(np.eye(2), dtype="float64")])
    np.testing.assert_allclose(exe.grad_dict["A"].asnumpy(), np.eye(2), atol=1e-12)


def test_float32_supported_and_int_rejected() -> None:
    y = mx.nd.linalg.inverse(mx.nd.array([[2.0, 0.0], [0.0, 4.0]]))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), [[0.5, 0], [0, 0.25]])
    with pytest.raises(TypeError, match=r"_linalg_inverse.*float32 and float64.*int32.*'A'"):
        mx.nd.linalg.inverse(mx.nd.ones((2, 2), dtype="int32"))


@pytest.mark.parametrize("call,pattern", [
    (lambda: mx.nd.linalg.gemm2(mx.nd.ones((2, 3)), mx.nd.ones((4, 3))),
     r"_linalg_gemm2: incompatible matrix dimensions.*A=\(2, 3\), B=\(4, 3\)"),
    (lambda: mx.nd.linalg.gemm(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), mx.nd.ones((2, 5))),
     r"_linalg_gemm: argument 'C' must have shape \(2, 4\).*C=\(2, 5\)"),
    (lambda: mx.nd.linalg.potrf(mx.nd.ones((2, 3))), r"_linalg_potrf: argument 'A' must hold square"),
    (lambda: mx.nd.linalg.gelqf(mx.nd.ones((4, 3))), r"_linalg_gelqf: .*no more rows than columns.*\(4, 3\)"),
    (lambda: mx.nd.linalg.trsm(mx.nd.ones((3, 3)), mx.nd.ones((2, 4))), r"_linalg_trsm: .*size 3, B has 2 rows"),
    (lambda: mx.nd.linalg.maketrian(mx.nd.ones((5,))), r"_linalg_maketrian: .*\(5\) is not a triangular"),
    (lambda: mx.nd.linalg.extractdiag(mx.nd.ones((3, 3)), offset=3), r"_linalg_extractdiag: offset 3"),
    (lambda: mx.nd.linalg.trmm(mx.nd.ones((2, 3, 3)), mx.nd.ones((3, 3, 2))), r"_linalg_trmm: arguments 'A' and 'B'"),
])
def test_errors_name_operator_argument_and_shapes(call, pattern) -> None:
    with pytest.raises(mx.base.ShapeError, match=pattern):
        call()


def test_potrf_of_indefinite_matrix_fails_with_the_operator_named() -> None:
    with pytest.raises(Exception, match=r"_linalg_potrf: Cholesky factorization.*not symmetric positive"):
        mx.nd.linalg.potrf(-mx.nd.ones((2, 2))).asnumpy()


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), st.integers(-2, 2), st.booleans(), st.integers(0, 2**31 - 1))
def test_extract_make_trian_roundtrip(batch: int, n: int, offset: int, lower: bool, seed: int) -> None:
    """maketrian(extracttrian(A)) keeps exactly the triangle of A; extracttrian inverts maketrian."""
    if abs(offset) >= n:
        return
    a = np.random.default_rng(seed).normal(size=(batch, n, n))
    kw = {"offset": offset, "lower": lower}
    v = run_forward("_linalg_extracttrian", [a], kw)[0]
    m = run_forward("_linalg_maketrian", [v], kw)[0]
    upper = offset > 0 or (offset == 0 and not lower)
    want = np.triu(a, offset) if upper else np.tril(a, offset)
    np.testing.assert_array_equal(m, want)
    np.testing.assert_array_equal(run_forward("_linalg_extracttrian", [m], kw)[0], v)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_factorizations_reconstruct(batch: int, n: int, seed: int) -> None:
    """potrf, gelqf and syevd reproduce their input; potri/inverse invert it."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, n, n + 1))
    spd = x @ x.swapaxes(-1, -2) + n * np.eye(n)
    l = run_forward("_linalg_potrf", [spd])[0]
    np.testing.assert_allclose(l @ l.swapaxes(-1, -2), spd, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(run_forward("_linalg_potri", [l])[0] @ spd, np.broadcast_to(np.eye(n), spd.shape),
                               atol=1e-9)
    q, lq = run_forward("_linalg_gelqf", [x])
    np.testing.assert_allclose(lq @ q, x, atol=1e-10)
    u, w = run_forward("_linalg_syevd", [spd])
    np.testing.assert_allclose(u.swapaxes(-1, -2) @ (w[..., None] * u), spd, rtol=1e-9, atol=1e-9)
    assert np.all(np.diff(w, axis=-1) >= 0)


@pytest.mark.parametrize("lower,trans", [(True, False), (True, True), (False, False), (False, True)])
def test_triangular_solve_without_scipy_gives_the_same(monkeypatch, lower: bool, trans: bool) -> None:
    """The general-solve fallback (no scipy / cupyx) agrees with the triangular solver."""
    from plexnet_ops_linalg import _common
    rng = np.random.default_rng(4)
    a = rng.normal(size=(2, 4, 4)) + 4 * np.eye(4)
    b = rng.normal(size=(2, 4, 3))
    fast = _common.solve_tri(np, a, b, lower, trans)
    monkeypatch.setattr(_common, "_scipy_linalg", lambda xp: None)
    slow = _common.solve_tri(np, a, b, lower, trans)
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)
    t = np.tril(a) if lower else np.triu(a)
    np.testing.assert_allclose((t.swapaxes(-1, -2) if trans else t) @ fast, b, atol=1e-10)
