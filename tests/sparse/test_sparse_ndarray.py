"""Sparse NDArrays beyond the MXNet fixtures: round trips (property tests), errors that
name the argument and the shapes, engine ordering over the compact arrays, interop."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx
from plexnet.ndarray.sparse import kernels as K

sp = mx.nd.sparse
pytestmark = pytest.mark.timeout(120)


def _rand_dense(seed, rows, cols, density, dtype="float32"):
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((rows, cols)).astype(dtype)
    d[rng.random((rows, cols)) >= density] = 0
    return d


_shapes = st.tuples(st.integers(0, 7), st.integers(0, 6))
_density = st.sampled_from([0.0, 0.2, 0.6, 1.0])


# -- conversions round trip -------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=_shapes, density=_density, seed=st.integers(0, 2**16))
def test_dense_csr_dense_round_trip(shape, density, seed):
    d = _rand_dense(seed, *shape, density)
    c = mx.nd.array(d).tostype("csr")
    assert c.stype == "csr" and c.shape == shape
    np.testing.assert_array_equal(c.asnumpy(), d)
    # dense -> csr keeps exactly the non-zeros, row-major with sorted columns
    assert c.data.shape == (np.count_nonzero(d),)
    np.testing.assert_array_equal(c.indptr.asnumpy(), np.concatenate([[0], np.cumsum((d != 0).sum(1))]))
    c.check_format()
    back = sp.csr_matrix((c.data, c.indices, c.indptr), shape=shape)
    np.testing.assert_array_equal(back.tostype("default").asnumpy(), d)


@settings(max_examples=40, deadline=None)
@given(shape=_shapes, density=_density, seed=st.integers(0, 2**16), extra=st.integers(1, 3))
def test_dense_rsp_dense_round_trip(shape, density, seed, extra):
    d = _rand_dense(seed, *shape, density)
    d3 = np.repeat(d[..., None], extra, axis=-1)  # row_sparse arrays may have any rank
    for x in (d, d3):
        r = mx.nd.array(x).tostype("row_sparse")
        np.testing.assert_array_equal(r.asnumpy(), x)
        rows = np.flatnonzero(x.reshape(x.shape[0], -1).any(1)) if x.size else np.zeros(0, np.int64)
        np.testing.assert_array_equal(r.indices.asnumpy(), rows)
        r.check_format()
        np.testing.assert_array_equal(sp.row_sparse_array((r.data, r.indices), shape=x.shape).asnumpy(), x)


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 6)), n=st.integers(0, 12), seed=st.integers(0, 2**16))
def test_coo_construction_sums_duplicates(shape, n, seed):
    rng = np.random.default_rng(seed)
    r, c = rng.integers(0, shape[0], n), rng.integers(0, shape[1], n)
    v = rng.standard_normal(n).astype("float32")
    want = np.zeros(shape, "float32")
    np.add.at(want, (r, c), v)
    a = sp.csr_matrix((v, (r, c)), shape=shape)
    np.testing.assert_allclose(a.asnumpy(), want, rtol=1e-6)
    a.check_format()  # sorted, unique columns per row


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 5)), density=_density, seed=st.integers(0, 2**16),
       k=st.integers(1, 4))
def test_dot_matches_numpy(shape, density, seed, k):
    d = _rand_dense(seed, *shape, density)
    rng = np.random.default_rng(seed + 1)
    w = rng.standard_normal((shape[1], k)).astype("float32")
    v = rng.standard_normal((shape[0], k)).astype("float32")
    c = mx.nd.array(d).tostype("csr")
    out = sp.dot(c, mx.nd.array(w))
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), d @ w, rtol=1e-5, atol=1e-5)
    out_t = mx.nd.dot(c, mx.nd.array(v), transpose_a=True)
    assert out_t.stype == "row_sparse"
    np.testing.assert_allclose(out_t.asnumpy(), d.T @ v, rtol=1e-5, atol=1e-5)
    out_r = sp.dot(mx.nd.array(d).tostype("row_sparse"), mx.nd.array(w))
    np.testing.assert_allclose(out_r.asnumpy(), d @ w, rtol=1e-5, atol=1e-5)
    out_d = sp.dot(mx.nd.array(v.T), c)
    assert out_d.stype == "csr"
    np.testing.assert_allclose(out_d.asnumpy(), v.T @ d, rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 6)), density=_density, seed=st.integers(0, 2**16),
       data=st.data())
def test_slices_match_numpy(shape, density, seed, data):
    d = _rand_dense(seed, *shape, density)
    c = mx.nd.array(d).tostype("csr")
    r0 = data.draw(st.integers(0, shape[0]))
    r1 = data.draw(st.integers(r0, shape[0]))
    c0 = data.draw(st.integers(0, shape[1]))
    c1 = data.draw(st.integers(c0, shape[1]))
    np.testing.assert_array_equal(c[r0:r1].asnumpy(), d[r0:r1])
    s = sp.slice(c, begin=(r0, c0), end=(r1, c1))
    assert s.stype == "csr"
    np.testing.assert_array_equal(s.asnumpy(), d[r0:r1, c0:c1])
    s.check_format()
    rows = np.array(data.draw(st.lists(st.integers(0, shape[0] - 1), max_size=8)), dtype=np.int64)
    from plexnet.io.libsvm_iter import HostCSR
    h = HostCSR.of(c).take(rows)
    np.testing.assert_array_equal(K.csr_to_dense(h.data, h.indices, h.indptr, h.shape), d[rows].reshape(-1, shape[1]))


@settings(max_examples=25, deadline=None)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 5)), seed=st.integers(0, 2**16))
def test_elementwise_and_reductions_match_numpy(shape, seed):
    a, b = _rand_dense(seed, *shape, 0.5), _rand_dense(seed + 7, *shape, 0.5)
    ca, cb = mx.nd.array(a).tostype("csr"), mx.nd.array(b).tostype("csr")
    ra, rb = mx.nd.array(a).tostype("row_sparse"), mx.nd.array(b).tostype("row_sparse")
    for got, want, stype in [(ca + cb, a + b, "csr"), (ca - cb, a - b, "csr"), (ca * cb, a * b, "csr"),
                             (ra + rb, a + b, "row_sparse"), (ra * rb, a * b, "row_sparse"),
                             (sp.add_n(ra, rb, ra), 2 * a + b, "row_sparse"), (ca * 3, a * 3, "csr"),
                             (sp.sqrt(sp.abs(ca)), np.sqrt(np.abs(a)), "csr"), (sp.exp(ra), np.exp(a), "default")]:
        assert got.stype == stype
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sp.sum(ca, axis=1).asnumpy(), a.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sp.norm(ra).asnumpy(), [np.linalg.norm(a)], rtol=1e-5, atol=1e-6)
    keep = np.array([0, shape[0] - 1])
    got = sp.retain(ra, mx.nd.array(keep))
    want = np.zeros_like(a)
    want[keep] = a[keep]
    np.testing.assert_array_equal(got.asnumpy(), want)
    # MXNet: one row per requested id, none at all when the input stores nothing
    np.testing.assert_array_equal(got.indices.asnumpy(), np.unique(keep) if ra.indices.shape[0] else [])


# -- errors name the argument and the shapes -------------------------------------------------------------------
def test_bad_indptr_length_names_argument_and_shapes():
    with pytest.raises(ValueError, match=r"indptr has shape \(3,\); a csr array of shape \(3, 3\) needs \(4,\)"):
        sp.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(3, 3))


def test_data_indices_length_mismatch():
    with pytest.raises(ValueError, match=r"indices has shape \(3,\) and data \(2,\)"):
        sp.csr_matrix(([1.0, 2.0], [0, 1, 2], [0, 1, 2, 3]), shape=(3, 3))


def test_indptr_must_end_at_nnz():
    with pytest.raises(ValueError, match=r"indptr must start at 0 and end at nnz=2"):
        sp.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 1, 3]), shape=(3, 3))


def test_check_format_names_column_range_and_shape():
    a = sp.csr_matrix(([1.0, 2.0], [0, 7], [0, 1, 2]), shape=(2, 3))  # not checked at construction (MXNet)
    with pytest.raises(mx.base.MXNetError, match=r"indices of a csr array must be in \[0, 3\).*shape \(2, 3\)"):
        a.check_format()
    a.check_format(full_check=False)
    b = sp.csr_matrix(([1.0, 2.0], [2, 0], [0, 2, 2]), shape=(2, 3))
    with pytest.raises(mx.base.MXNetError, match="row 0 must be strictly ascending"):
        b.check_format()


def test_row_sparse_errors():
    with pytest.raises(ValueError, match=r"data must hold one row per index"):
        sp.row_sparse_array(([[1.0, 2.0]], [0, 1]), shape=(3, 2))
    with pytest.raises(ValueError, match=r"data rows have shape \(3,\); a row_sparse array of shape \(3, 2\)"):
        sp.row_sparse_array(([[1.0, 2.0, 3.0]], [0]), shape=(3, 2))
    r = sp.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [2, 1]), shape=(3, 2))
    with pytest.raises(mx.base.MXNetError, match="strictly ascending"):
        r.check_format()
    with pytest.raises(ValueError, match=r"retain: indices must be in \[0, 3\)"):
        sp.retain(r, mx.nd.array([5]))


def test_csr_needs_two_dimensions_and_refused_conversions():
    with pytest.raises(mx.base.MXNetError, match=r"storage type 'csr' needs a 2-D array.*\(2, 2, 2\)"):
        mx.nd.ones((2, 2, 2)).tostype("csr")
    with pytest.raises(mx.base.MXNetError, match="storage type 'csr' needs a 2-D shape"):
        mx.nd.zeros((4,), stype="csr")
    c = mx.nd.ones((2, 2)).tostype("csr")
    with pytest.raises(ValueError, match="cast_storage from csr to row_sparse is not supported"):
        c.tostype("row_sparse")
    with pytest.raises(ValueError, match="unknown storage type 'dense'"):
        c.tostype("dense")


def test_not_supported_methods():
    c = mx.nd.ones((2, 3)).tostype("csr")
    with pytest.raises(sp.NotSupportedForSparseNDArray, match="Function reshape"):
        c.reshape((3, 2))
    with pytest.raises(ValueError, match="continuous slicing"):
        c[::2]
    with pytest.raises(ValueError, match="Assigning numeric types to CSRNDArray"):
        c[:] = 1.0
    with pytest.raises(mx.base.MXNetError, match="a_min=0.5, a_max=2"):
        sp.clip(c, 0.5, 2)


# -- the compact arrays are the source of truth; the engine orders them ----------------------------------------------
def test_writes_through_compact_arrays_are_seen():
    c = mx.nd.array(np.array([[0, 1], [2, 0]], "float32")).tostype("csr")
    c.data[:] = mx.nd.array([10.0, 20.0])
    np.testing.assert_array_equal(c.asnumpy(), [[0, 10], [20, 0]])


def test_dot_reads_before_a_later_write():
    d = np.array([[0, 1, 0], [2, 0, 3]], "float32")
    c = mx.nd.array(d).tostype("csr")
    w = mx.nd.array(np.arange(6, dtype="float32").reshape(3, 2))
    out = sp.dot(c, w)  # pushed on the engine
    w[:] = 0  # ordered after the dot's read of w
    c.data[:] = 0
    np.testing.assert_array_equal(out.asnumpy(), d @ np.arange(6, dtype="float32").reshape(3, 2))


def test_conversion_does_not_alias_source():
    x = mx.nd.array(np.array([[0, 1], [2, 0]], "float32"))
    c, r = x.tostype("csr"), x.tostype("row_sparse")
    x[:] = 7
    np.testing.assert_array_equal(c.asnumpy(), [[0, 1], [2, 0]])
    np.testing.assert_array_equal(r.asnumpy(), [[0, 1], [2, 0]])
    y = c.copy()
    c.data[:] = 0
    np.testing.assert_array_equal(y.asnumpy(), [[0, 1], [2, 0]])


def test_lazy_update_is_an_engine_operation_after_pending_writes():
    w = mx.nd.ones((4, 2))
    g = sp.row_sparse_array((np.ones((1, 2), "float32"), [2]), shape=(4, 2))
    w[:] = 3  # pending (or done) before the update reads w
    sp.sgd_update(w, g, lr=0.5, wd=0.0, out=w)
    np.testing.assert_array_equal(w.asnumpy(), [[3, 3], [3, 3], [2.5, 2.5], [3, 3]])


def test_dense_fallback_for_operators_without_sparse_kernels():
    d = np.array([[0, 1], [2, 0]], "float32")
    c = mx.nd.array(d).tostype("csr")
    out = mx.nd.softmax(c)
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), np.exp(d) / np.exp(d).sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal((c == 1).asnumpy(), d == 1)
    np.testing.assert_array_equal(c.T.asnumpy(), d.T)
    np.testing.assert_array_equal((mx.nd.ones((2, 2)) + c).asnumpy(), d + 1)


# -- interop ------------------------------------------------------------------------------------------------------
def test_pickle_round_trip():
    c = mx.nd.array(np.array([[0, 1], [2, 0]], "float32")).tostype("csr")
    r = c.tostype("default").tostype("row_sparse")
    for a in (c, r):
        b = pickle.loads(pickle.dumps(a))
        assert type(b) is type(a) and b.shape == a.shape
        np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_scipy_interop():
    spsp = pytest.importorskip("scipy.sparse")
    m = spsp.random(5, 4, density=0.4, format="csr", dtype=np.float32, random_state=0)
    a = sp.csr_matrix(m)
    np.testing.assert_array_equal(a.asnumpy(), m.toarray())
    back = a.asscipy()
    assert (back != m).nnz == 0
    assert sp.array(m).stype == "csr" and mx.nd.array(m).stype == "csr"
    assert sp.spsp is spsp


def test_repr_properties_and_contexts():
    c = sp.zeros("csr", (3, 4))
    assert repr(c) == "\n<CSRNDArray 3x4 @cpu(0)>"
    assert repr(sp.zeros("row_sparse", (3, 4, 2))) == "\n<RowSparseNDArray 3x4x2 @cpu(0)>"
    assert c.indices.dtype == np.int64 and c.indptr.dtype == np.int64 and c.data.shape == (0,)
    assert isinstance(c, mx.nd.NDArray) and isinstance(c, sp.BaseSparseNDArray)
    assert c.as_in_context(mx.cpu()) is c
    assert c.astype("float32", copy=False) is c
    assert sp.empty("row_sparse", (2, 3)).stype == "row_sparse"
    e = sp.csr_matrix(([1.0, 0.0, 3.0], [1, 0, 2], [0, 1, 2, 3]), shape=(3, 3))
    np.testing.assert_array_equal(e.data.asnumpy(), [1, 0, 3])  # explicit zeros are kept
    assert mx.nd.cast_storage(mx.nd.ones((2, 2)), stype="row_sparse").stype == "row_sparse"


def test_copyto_dense_and_sparse_targets():
    d = np.array([[0, 1], [2, 0]], "float32")
    c = mx.nd.array(d).tostype("csr")
    t = sp.zeros("csr", (2, 2))
    c.copyto(t)
    np.testing.assert_array_equal(t.asnumpy(), d)
    dense = mx.nd.zeros((2, 2))
    c.copyto(dense)
    np.testing.assert_array_equal(dense.asnumpy(), d)
    with pytest.raises(mx.base.MXNetError, match="cannot copy a csr array into a row_sparse array"):
        c.copyto(sp.zeros("row_sparse", (2, 2)))


@pytest.mark.parametrize("use_scipy", [False, True])
def test_matmul_kernels_every_path(monkeypatch, use_scipy):
    if use_scipy:
        pytest.importorskip("scipy.sparse")
    monkeypatch.setattr(K, "USE_SCIPY", use_scipy)
    rng = np.random.default_rng(5)
    for d in (_rand_dense(1, 9, 7, 0.4), np.vstack([np.ones((1, 40), "float32"), np.zeros((30, 40), "float32")])):
        # the second is skewed: one long row (the numpy path's segmented sum instead of the padded product)
        v, i, p = K.dense_to_csr(d)
        rhs = rng.standard_normal((d.shape[1], 3)).astype("float32")
        np.testing.assert_allclose(K.csr_matmul(v, i, p, rhs, d.shape[0]), d @ rhs, rtol=1e-5, atol=1e-5)
        lhs = rng.standard_normal((d.shape[0], 3)).astype("float32")
        vals, keep = K.csr_t_matmul(v, i, p, lhs)
        np.testing.assert_array_equal(keep, np.flatnonzero((d != 0).any(0)))
        np.testing.assert_allclose(vals, (d.T @ lhs)[keep], rtol=1e-5, atol=1e-5)


def test_autograd_through_sparse_dot_gives_dense_weight_gradients():
    d = np.array([[0, 1, 0], [2, 0, 3]], "float32")
    c = mx.nd.array(d).tostype("csr")
    w = mx.nd.ones((3, 2))
    w.attach_grad()
    with mx.autograd.record():
        y = sp.dot(c, w) * 2
    y.backward()
    # MXNet 1.9.1 gives the same dense gradient (its backward falls back to dense too)
    np.testing.assert_allclose(w.grad.asnumpy(), d.T @ np.full((2, 2), 2.0))
    assert y.stype == "default"


def test_retain_method_and_gs_retain_are_retain():
    r = mx.nd.array(np.array([[0, 1], [0, 0], [3, 0]], "float32")).tostype("row_sparse")
    for got in (r.retain(mx.nd.array([2, 1])), sp.gs_retain(r, mx.nd.array([2, 1])), sp.retain(r, [1, 2])):
        assert got.stype == "row_sparse" and got.indices.asnumpy().tolist() == [1, 2]
        np.testing.assert_array_equal(got.asnumpy(), [[0, 0], [0, 0], [3, 0]])
