"""``mx.test_utils`` against MXNet 1.9.1: messages and tolerances (recorded by
``tests/fixtures/make_mxnet_frontend_fixtures.py``) and each helper's behaviour."""
from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import struct
import sys

import numpy as np
import pytest

import plexnet as mx
from plexnet import test_utils as tu
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_frontend.json")
with open(_FIX) as _f:
    DOC = json.load(_f)["test_utils"]


def _ops(*names):
    missing = [n for n in names if n not in registries().operators]
    if missing:
        pytest.skip(f"needs operators {missing}")


@pytest.mark.parametrize("case", DOC["messages"], ids=lambda c: str(c["b"]))
def test_assert_almost_equal_message_matches_mxnet(case):
    kw = dict(case["kw"])
    if "names" in kw:
        kw["names"] = tuple(kw["names"])
    a, b = np.array(case["a"], dtype="float32"), np.array(case["b"], dtype="float32")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.raises(AssertionError) as ei:
        tu.assert_almost_equal(a, b, **kw)
    assert str(ei.value) == case["message"]
    assert printed.getvalue() == case["printed"]
    # NDArrays are compared the same way
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(AssertionError) as ei:
        tu.assert_almost_equal(mx.nd.array(a), mx.nd.array(b), **kw)
    assert str(ei.value) == case["message"]


def test_tolerances_match_mxnet():
    for t in DOC["tols"]:
        assert tu.get_tols(np.zeros(1, t["a"]), np.zeros(1, t["b"]), None, None) == (t["rtol"], t["atol"])
    assert tu.get_rtol() == DOC["get_rtol"] and tu.get_atol() == DOC["get_atol"]
    assert [tu.almost_equal(np.array([1.0]), np.array([1.0 + d])) for d in (1e-6, 1e-4)] == DOC["almost_equal"]
    assert tu.get_tolerance(np.zeros(1, "float16"), {np.dtype("float16"): 0.5}, tu.default_rtols()) == 0.5
    assert tu.get_tolerance(np.zeros(1), 0.25, tu.default_rtols()) == 0.25
    assert tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1
    assert tu.default_numeric_eps()[np.dtype("float32")] == 1 / 512
    assert tu.default_dtype() is np.float32
    assert tu.effective_dtype(mx.nd.zeros((1,), dtype="float16")) == np.float16


def test_comparisons():
    a = np.arange(6.0).reshape(2, 3)
    tu.assert_almost_equal(a, a * (1 + 1e-7))
    tu.assert_almost_equal(mx.nd.array(a), a)
    tu.assert_allclose(a, a)
    with pytest.raises(AssertionError):
        tu.assert_allclose(a, a + 1e-3)
    assert tu.same(a, a.copy()) and not tu.same(a, a + 1)
    with pytest.raises(AssertionError, match="not equal"):
        tu.checkShapes(a, a.T)
    with pytest.raises(AssertionError):
        tu.almost_equal(a, a[:1], use_broadcast=False)
    b = a.copy()
    b[0, 0] = 100
    tu.assert_almost_equal_with_err(a, b, etol=0.2)  # one of six elements off
    with pytest.raises(AssertionError, match="etol"):
        tu.assert_almost_equal_with_err(a, b, etol=0.1)
    c = a.copy()
    c[1, 1] = np.nan
    tu.assert_almost_equal_ignore_nan(a, c)
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    tu.assert_exception(lambda: 1 / 0, ZeroDivisionError)
    with pytest.raises(AssertionError):
        tu.assert_exception(lambda: 1, ZeroDivisionError)
    x = mx.nd.zeros((2,))
    assert tu.same_array(x, x[:]) and not tu.same_array(x, x.copy())
    tu.compare_ndarray_tuple((mx.nd.ones((2,)), None), (mx.nd.ones((2,)), mx.nd.zeros((1,))))
    with pytest.raises(AssertionError):
        tu.compare_ndarray_tuple((mx.nd.ones((2,)),), (mx.nd.zeros((2,)),))
    np.testing.assert_array_equal(tu.np_reduce(a, 1, True, np.sum), a.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(tu.collapse_sum_like(np.ones((4, 2, 3)), (2, 1)), np.full((2, 1), 12.0))


def test_random_helpers():
    np.random.seed(0)
    s = tu.rand_shape_2d(3, 4)
    assert len(s) == 2 and 1 <= s[0] <= 3 and 1 <= s[1] <= 4
    assert len(tu.rand_shape_3d()) == 3 and len(tu.rand_shape_nd(5, 2)) == 5
    assert all(0 <= d <= 2 for d in tu.rand_shape_nd(20, 2, allow_zero_size=True))
    arrs = tu.random_arrays((2, 3), (4,))
    assert [a.shape for a in arrs] == [(2, 3), (4,)] and arrs[0].dtype == np.float32
    assert tu.random_arrays(()).shape == () and tu.random_arrays((2,)).shape == (2,)
    u = tu.random_uniform_arrays((100,), low=2, high=3)[0]
    assert u.min() >= 2 and u.max() <= 3
    with pytest.raises(TypeError):
        tu.random_uniform_arrays((2,), bad=1)
    assert sorted(tu.random_sample(list(range(5)), 5)) == list(range(5))
    r = tu.rand_ndarray((3, 4), dtype="float64")   # MXNet: random_arrays, standard normal
    assert isinstance(r, mx.nd.NDArray) and r.dtype == np.float64 and r.shape == (3, 4)
    np.random.seed(0)
    c = tu.rand_ndarray((5, 16), "csr", density=0.5, distribution="powerlaw")
    assert c.stype == "csr" and np.diff(c.indptr.asnumpy()).tolist() == [2, 4, 8, 16, 10]  # MXNet's pattern
    rsp, (vals, rows) = tu.rand_sparse_ndarray((6, 3), "row_sparse", density=0.5)
    assert rsp.stype == "row_sparse" and rsp.indices.asnumpy().tolist() == list(rows)
    np.testing.assert_array_equal(rsp.asnumpy()[rows], vals)
    z = tu.create_sparse_array_zd((6, 2), "row_sparse", density=0.9, rsp_indices=[4, 1])
    assert z.indices.asnumpy().tolist() == [1, 4]
    sh = tu.rand_ndarray((4, 9), "csr", density=0.5, shuffle_csr_indices=True)
    np.testing.assert_array_equal(sh.tostype("default").asnumpy(), sh.asnumpy())
    with pytest.raises(AssertionError, match="storage type"):
        tu.rand_sparse_ndarray((2, 2), "bogus")
    with pytest.raises(ValueError, match="density"):
        tu.rand_ndarray((2, 2), "csr", density=1.5)
    x, y = tu.rand_coord_2d(0, 5, 10, 20)
    assert 0 <= x < 5 and 10 <= y < 20
    np.testing.assert_array_equal(tu.create_2d_tensor(3, 2).asnumpy(), [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(tu.create_vector(3).asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(tu.get_identity_mat(2).asnumpy(), np.eye(2))
    assert tu.get_identity_mat_batch(3).shape == (2, 3, 3)
    np.testing.assert_array_equal(tu.assign_each(np.arange(3), lambda v: v * 2), [0, 2, 4])
    np.testing.assert_array_equal(tu.assign_each2(np.arange(3), np.ones(3), lambda a, b: a + b), [1, 2, 3])
    m = tu.new_matrix_with_real_eigvals_2d(4)
    assert np.allclose(np.linalg.eigvals(m).imag, 0, atol=1e-6)
    q = tu.new_orthonormal_matrix_2d(3)
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-10)
    assert tu.new_sym_matrix_with_real_eigvals_nd((2, 3, 3)).shape == (2, 3, 3)
    assert tu.new_matrix_with_real_eigvals_nd((2, 2, 2)).shape == (2, 2, 2)


def test_context_environment_and_process_helpers(tmp_path):
    old = tu.default_context()
    tu.set_default_context(mx.cpu(1))
    try:
        assert tu.default_context() == mx.cpu(1)
    finally:
        tu.set_default_context(old)
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))
    os.environ.pop("PLEXNET_TU_X", None)
    with tu.environment("PLEXNET_TU_X", "1"):
        assert tu.getenv("PLEXNET_TU_X") == "1"
        with tu.environment({"PLEXNET_TU_X": None}):
            assert tu.getenv("PLEXNET_TU_X") is None
        assert os.environ["PLEXNET_TU_X"] == "1"
    assert "PLEXNET_TU_X" not in os.environ
    tu.setenv("PLEXNET_TU_X", "2")
    assert tu.getenv("PLEXNET_TU_X") == "2"
    tu.setenv("PLEXNET_TU_X", None)
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2

    flaky()
    assert len(calls) == 2
    # discard_stderr silences file descriptor 2 (native writes too)
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        with tu.discard_stderr():
            os.write(2, b"hidden")
            print("hidden too", file=sys.stderr)
        os.write(2, b"shown")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(w)
    assert os.read(r, 100) == b"shown"
    os.close(r)
    assert tu.is_op_runnable() and not tu.has_tvm_ops()
    with pytest.raises(ValueError):
        tu.get_cuda_compute_capability(mx.cpu())


def _write_idx(path, arr, gz):
    head = struct.pack(">I", 0x800 + arr.ndim) + b"".join(struct.pack(">I", d) for d in arr.shape)
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(head + arr.tobytes())


def test_local_data_sets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLEXNET_MNIST_DIR", str(tmp_path / "mn"))
    with pytest.raises(FileNotFoundError, match=r"train-labels-idx1-ubyte\.gz"):
        tu.get_mnist()
    (tmp_path / "mn").mkdir()
    rng = np.random.RandomState(0)
    for part, n in (("train", 6), ("t10k", 4)):
        _write_idx(tmp_path / "mn" / f"{part}-images-idx3-ubyte.gz", rng.randint(0, 256, (n, 28, 28)).astype("u1"),
                   True)
        _write_idx(tmp_path / "mn" / f"{part}-labels-idx1-ubyte", rng.randint(0, 10, n).astype("u1"), False)
    d = tu.get_mnist()
    assert d["train_data"].shape == (6, 1, 28, 28) and d["test_label"].shape == (4,)
    assert d["train_data"].dtype == np.float32 and d["train_data"].max() <= 1
    with pytest.raises(FileNotFoundError, match=r"data/train-images-idx3-ubyte"):
        tu.get_mnist_ubyte()
    with pytest.raises(FileNotFoundError, match="does not download"):
        tu.get_mnist_iterator(2, (784,))
    with pytest.raises(FileNotFoundError, match="mnist.pkl.gz"):
        tu.get_mnist_pkl()
    with pytest.raises(FileNotFoundError, match="cifar"):
        tu.get_cifar10()
    with pytest.raises(FileNotFoundError, match=r"place it at .*x\.bin"):
        tu.download("http://example.com/x.bin")
    (tmp_path / "x.bin").write_bytes(b"1")
    assert tu.download("http://example.com/x.bin") == "x.bin"
    with pytest.raises(FileNotFoundError, match="resnet-symbol.json"):
        tu.download_model("resnet", str(tmp_path))
    assert tu.download_model("resnet", str(tmp_path), meta_info={}) == (None, 0)
    os.makedirs("data")
    for part, n in (("train", 6), ("t10k", 4)):
        _write_idx(f"data/{part}-images-idx3-ubyte", rng.randint(0, 256, (n, 28, 28)).astype("u1"), False)
        _write_idx(f"data/{part}-labels-idx1-ubyte", rng.randint(0, 10, n).astype("u1"), False)
    tu.get_mnist_ubyte()
    train, val = tu.get_mnist_iterator(2, (784,))
    batch = next(iter(train))
    assert batch.data[0].shape == (2, 784)
    dummy = tu.DummyIter(val)
    assert dummy.provide_data == val.provide_data and dummy.batch_size == 2
    b1, b2 = next(dummy), dummy.next()
    assert b1 is b2


def test_generator_checks():
    pytest.importorskip("scipy")
    import scipy.stats as ss
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: ss.norm.ppf(p, 0, 1), 5)
    assert len(buckets) == 5 and probs == [0.2] * 5 and buckets[0][0] == -np.inf
    rng = np.random.RandomState(1)
    ps = tu.verify_generator(lambda n: rng.normal(0, 1, n), buckets, probs, nsamples=20000, nrepeat=3)
    assert len(ps) == 3
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: rng.normal(0.5, 1, n), buckets, probs, nsamples=20000, nrepeat=3)
    p, obs, exp = tu.chi_square_check(lambda n: rng.randint(0, 3, n), [0, 1, 2], [1 / 3] * 3, nsamples=3000)
    assert obs.sum() == 3000 and p > 1e-4
    assert tu.mean_check(lambda n: rng.normal(2, 1, n), 2, 1, nsamples=10000)
    assert not tu.mean_check(lambda n: rng.normal(2.5, 1, n), 2, 1, nsamples=10000)
    assert tu.var_check(lambda n: rng.normal(0, 2, n), 2, nsamples=10000)


def _fc():
    data = mx.sym.Variable("data")
    return mx.sym.FullyConnected(data, num_hidden=3, name="fc")


def test_symbolic_checks():
    _ops("FullyConnected", "make_loss", "exp")
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(2, 4), rng.randn(3, 4), rng.randn(3)
    sym = _fc()
    expected = x @ w.T + b
    out = tu.check_symbolic_forward(sym, [x, w, b], [expected], rtol=1e-4, atol=1e-5)
    assert out[0].shape == (2, 3)
    tu.check_symbolic_forward(sym, {"data": x, "fc_weight": w, "fc_bias": b}, {"fc_output": expected})
    with pytest.raises(AssertionError, match="EXPECTED_fc_output"):
        tu.check_symbolic_forward(sym, [x, w, b], [expected + 1])
    with pytest.raises(ValueError, match="do not match"):
        tu.check_symbolic_forward(sym, {"data": x}, [expected])
    og = rng.randn(2, 3)
    grads = {"data": og @ w, "fc_weight": og.T @ x, "fc_bias": og.sum(0)}
    tu.check_symbolic_backward(sym, [x, w, b], [og], grads, rtol=1e-4, atol=1e-5)
    tu.check_symbolic_backward(sym, [x, w, b], [og], grads, grad_req={"data": "add", "fc_weight": "write",
                                                                      "fc_bias": "null"})
    with pytest.raises(AssertionError, match="BACKWARD_fc_weight"):
        tu.check_symbolic_backward(sym, [x, w, b], [og], dict(grads, fc_weight=grads["fc_weight"] + 1))
    tu.check_numeric_gradient(sym, [x, w, b], numeric_eps=1e-3, rtol=1e-2, atol=1e-2)
    tu.check_numeric_gradient(mx.sym.exp(mx.sym.Variable("a")), [rng.rand(3)], grad_nodes={"a": "add"},
                              rtol=1e-2, atol=1e-2)
    exe = sym.simple_bind(mx.cpu(), data=(2, 4))
    ng = tu.numeric_grad(exe, {"data": x.copy(), "fc_weight": w.copy(), "fc_bias": b.copy()}, eps=1e-3,
                         dtype=np.float64)
    np.testing.assert_allclose(ng["fc_bias"], [2, 2, 2], rtol=1e-2)
    np.testing.assert_allclose(tu.simple_forward(sym, data=x, fc_weight=w, fc_bias=b), expected, rtol=1e-4)
    t = tu.check_speed(sym, N=2, data=(2, 4))
    assert t > 0
    assert tu.check_speed(sym, location={"data": x, "fc_weight": w, "fc_bias": b}, N=2, typ="forward") > 0
    with pytest.raises(ValueError, match="typ"):
        tu.check_speed(sym, N=1, typ="bad", data=(2, 4))
    gt = tu.check_consistency(sym, [{"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float64}},
                                    {"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float32}}])
    assert gt["fc_output"].dtype == np.float64 and "fc_weight" in gt
    d = mx.sym.Variable("d")
    assert tu.same_symbol_structure(sym, _fc()) and not tu.same_symbol_structure(mx.sym.exp(d), mx.sym.sin(d))


def test_compare_optimizer():
    o1 = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    o2 = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    tu.compare_optimizer(o1, o2, (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2), (3,),
                             np.float32)
    # sparse weights / gradients: opt1 on dense copies, opt2 on the sparse arrays (MXNet's protocol)
    for w, g in (("default", "row_sparse"), ("row_sparse", "row_sparse"), ("csr", "csr")):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, lazy_update=False, wd=0.01),
                             mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, lazy_update=False, wd=0.01),
                             (5, 3), np.float32, w_stype=w, g_stype=g)
    with pytest.raises(Exception, match="not supported"):
        tu.compare_optimizer(o1, o2, (3,), np.float32, w_stype="bogus")


def test_check_gluon_hybridize_consistency():
    gluon = pytest.importorskip("plexnet.gluon")
    _ops("FullyConnected", "Activation")

    def build(prefix):
        net = gluon.nn.HybridSequential(prefix=prefix)
        with net.name_scope():
            net.add(gluon.nn.Dense(4, activation="relu"))
            net.add(gluon.nn.Dense(2))
        return net

    x = mx.nd.array(np.random.RandomState(0).rand(3, 5))
    tu.check_gluon_hybridize_consistency(build, [x])

    def relu_only(prefix):
        return gluon.nn.Activation("relu", prefix=prefix)

    tu.check_gluon_hybridize_consistency(relu_only, [x - 0.5], numpy_func=lambda a: np.maximum(a, 0))
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(relu_only, [x - 0.5], numpy_func=lambda a: a, test_grad=False)
