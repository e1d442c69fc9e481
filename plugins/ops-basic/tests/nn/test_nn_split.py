"""The two-thread batch split of the convolutions (``nn/_split.py``), the blocked skinny
GEMMs and the csn column layout give the results of the plain one-thread code, for
every req."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import plexnet
from plexnet.engine.runctx import run_context
from plexnet.operator import OpContext, OpReqType
from plexnet_ops_basic.nn import _convcore, _split

W, ADD, NULL = OpReqType.write, OpReqType.add, OpReqType.null


@pytest.fixture
def split_on(monkeypatch):
    """Force the split: every size, whatever the engine's BLAS policy says."""
    monkeypatch.setattr(_split, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(_split, "_ENABLED", True)
    monkeypatch.setattr(_split.blas, "enabled", lambda: True)
    monkeypatch.setattr(_split.blas, "blas_threads", lambda: 2)
    monkeypatch.setattr(_split, "MIN_EFFICIENCY", 0.0)     # no back-off on a loaded test host
    monkeypatch.setattr(_split, "_off_until", 0.0)


def _run(name, kw, dshape, reqs, split, monkeypatch, seed=0):
    """Forward + backward of one operator; returns outputs and gradients."""
    monkeypatch.setattr(_split, "_ENABLED", split)
    cpu = plexnet.cpu()
    reg = plexnet.plugins.registries().operators
    prop = reg.create_property(name, kw)
    ins, outs, _ = prop.infer_shape([dshape] + [None] * (len(prop.list_arguments()) - 1))
    rng = np.random.default_rng(seed)
    x = [rng.uniform(-1, 1, s).astype("f4") for s in ins]
    y = [np.zeros(s, "f4") for s in outs]
    op = prop.create_operator(cpu)
    rc = run_context(cpu, "test")
    res = plexnet.resource.get()
    fctx = OpContext(True, rc, [res.request(cpu, r) for r in prop.forward_resource(ins)])
    bctx = OpContext(True, rc, [res.request(cpu, r) for r in prop.backward_resource(ins)])
    op.forward(fctx, x, [W] * len(y), y, [])
    dy = [rng.uniform(-1, 1, s).astype("f4") for s in outs]
    dx = [np.full_like(a, 0.5) for a in x]          # visible to req add
    op.backward(bctx, dy, x, y, list(reqs)[:len(x)], dx, [])
    return y, dx


CASES = [
    ("Convolution", dict(kernel=(5, 5), num_filter=20), (16, 1, 28, 28)),
    ("Convolution", dict(kernel=(3, 3), num_filter=8, pad=(1, 1), stride=(2, 2)), (9, 4, 11, 11)),
    ("Convolution", dict(kernel=(3, 3), num_filter=6, num_group=2, no_bias=True), (5, 4, 9, 9)),
    ("Deconvolution", dict(kernel=(3, 3), num_filter=5, stride=(2, 2)), (7, 3, 6, 6)),
    ("Deconvolution", dict(kernel=(2, 2), num_filter=3, no_bias=True), (3, 2, 5, 5)),
]


@pytest.mark.parametrize("name,kw,dshape", CASES)
@pytest.mark.parametrize("reqs", [(W, W, W), (ADD, ADD, ADD), (NULL, W, ADD), (W, NULL, W)])
def test_split_matches_one_thread(split_on, monkeypatch, name, kw, dshape, reqs):
    y1, g1 = _run(name, kw, dshape, reqs, False, monkeypatch)
    y2, g2 = _run(name, kw, dshape, reqs, True, monkeypatch)
    for a, b in zip(y1 + g1, y2 + g2):
        # float32 sums in another order (the weight gradient's chunk partial sums)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(a).max())))


def test_split_is_used_and_balances_blas(split_on, monkeypatch):
    """The helper runs part of the chunks; the BLAS policy sees two more awake workers
    while it does, and is back where it was afterwards."""
    seen = []
    calls = []
    monkeypatch.setattr(_split.blas, "worker_awake", lambda: calls.append(1))
    monkeypatch.setattr(_split.blas, "worker_asleep", lambda: calls.append(-1))
    orig = _split.run_items

    def spy(count, fn):
        done = orig(count, fn)
        seen.append(done)
        return done
    monkeypatch.setattr(_split, "run_items", spy)
    import plexnet_ops_basic.nn._convparams as cp
    monkeypatch.setattr(cp, "run_items", spy)
    _run("Convolution", dict(kernel=(5, 5), num_filter=20), (16, 1, 28, 28), (W, W, W), True, monkeypatch)
    assert seen and all(sum(d) >= 2 for d in seen)
    assert sum(calls) == 0 and calls[:2] == [1, 1]


def test_run_items_runs_each_item_once_and_reraises():
    got = []
    lock = threading.Lock()

    def fn(i, slot):
        with lock:
            got.append((i, slot))
    done = _split.run_items(9, fn)
    assert sorted(i for i, _ in got) == list(range(9)) and sum(done) == 9

    def bad(i, slot):
        if i == 3:
            raise ValueError("item 3")
    with pytest.raises(ValueError, match="item 3"):
        _split.run_items(6, bad)


def test_no_split_inside_a_split_or_for_small_work(split_on, monkeypatch):
    inner = []
    _split.run_items(2, lambda i, slot: inner.append(_split.ways(np, 100, 1 << 20)))
    assert inner == [1, 1]
    monkeypatch.setattr(_split, "MIN_ELEMENTS", 1000)
    assert _split.ways(np, 100, 999) == 1 and _split.ways(np, 100, 1000) == 2
    assert _split.ways(np, 1, 1 << 20) == 1
    monkeypatch.setattr(_split.blas, "blas_threads", lambda: 1)   # a loaded machine: no split
    assert _split.ways(np, 100, 1 << 20) == 1


def test_helper_space_grows_and_reuses():
    sp = _split.HelperSpace()
    a = sp.get_space((3, 4), np.float32)
    assert a.shape == (3, 4) and a.dtype == np.float32
    b = sp.get_space(5, np.float64)
    assert b.shape == (5,) and b.dtype == np.float64


@pytest.mark.parametrize("m,k,n", [(20, 25, 5000), (25, 20, 2048), (3, 1, 4100), (64, 64, 3000)])
def test_matmul_wide_blocks(m, k, n):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((k, m)).astype("f4").T          # a transposed view, as conv uses
    b = rng.standard_normal((k, n)).astype("f4")
    out = np.empty((m, n), "f4")
    _convcore.matmul_wide(np, a, b, out)
    np.testing.assert_allclose(out, a.astype("f8") @ b.astype("f8"), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m,k,n", [(25, 5000, 20), (9, 2048, 1), (64, 3333, 64)])
def test_matmul_long_blocks(m, k, n):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k)).astype("f4")
    b = rng.standard_normal((n, k)).astype("f4").T
    got = _convcore.matmul_long(np, a, b)
    np.testing.assert_allclose(got, a.astype("f8") @ b.astype("f8"), rtol=1e-4, atol=1e-3)


GEOMS = [  # N, C, F, G, in_sp, kernel, stride, dilate, pad
    (3, 4, 5, 1, (7,), (3,), (1,), (1,), (1,)),
    (2, 5, 6, 1, (9, 8), (3, 3), (1, 1), (2, 1), (1, 2)),
    (4, 6, 4, 2, (6, 7), (2, 3), (1, 1), (1, 1), (0, 1)),
    (1, 3, 2, 1, (5, 4, 6), (2, 3, 2), (1, 1, 1), (1, 1, 2), (1, 0, 1)),
    (5, 20, 7, 1, (12, 12), (5, 5), (1, 1), (1, 1), (0, 0)),
]


@pytest.mark.parametrize("geom", GEOMS)
@pytest.mark.parametrize("req", [W, ADD])
def test_csn_layout_matches_flat(monkeypatch, geom, req):
    """The csn column layout (batch innermost, no junk columns) computes what the flat
    layout computes: output, data and weight gradient, for write and add."""
    N, C, F, G, in_sp, kernel, stride, dilate, pad = geom
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, C) + in_sp)
    w = rng.standard_normal((F, C // G) + kernel)
    b = rng.standard_normal(F)
    results = []
    for rows in (10 ** 9, 1):
        monkeypatch.setattr(_convcore, "CSN_MIN_ROWS", rows)
        g = _convcore.ConvGeom(N, C, F, G, in_sp, kernel, stride, dilate, pad)
        assert g.csn == (rows == 1)
        y = np.full((N, F) + g.out_sp, 0.25)
        _convcore.conv_forward(np, g, x, w, b, y, req)
        dy = np.random.default_rng(4).standard_normal(y.shape)
        dx, dw, db = np.full_like(x, 0.5), np.full_like(w, 0.5), np.full_like(b, 0.5)
        _convcore.conv_backward(np, g, x, w, dy, dx, req, dw, req, db, req)
        results.append((y, dx, dw, db))
    for a, c in zip(*results):
        np.testing.assert_allclose(c, a, rtol=1e-10, atol=1e-10)


def test_split_backs_off_when_the_threads_do_not_run_together(split_on, monkeypatch):
    """Both threads busy (CPU ~ 2x wall): the split stays on; a helper that waits for a
    core (CPU ~ wall) turns it off for BACKOFF_S, after which it is tried again."""
    now = [100.0]
    monkeypatch.setattr(_split, "MIN_EFFICIENCY", 0.7)
    monkeypatch.setattr(_split, "_now", lambda: now[0])
    monkeypatch.setattr(_split, "_eff", 1.0)
    monkeypatch.setattr(_split, "_off_until", 0.0)
    for _ in range(10):
        _split.observe(cpu=1.9, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 2
    _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 2          # one slow split is averaged
    for _ in range(3):
        _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 1          # off
    now[0] += _split.BACKOFF_S + 0.01
    assert _split.ways(np, 100, 1 << 20) == 2          # tried again
    _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 1          # and off again at once
    _split.observe(cpu=0.0, wall=0.0)                  # nothing measured: no change


def test_run_items_reports_cpu_time(monkeypatch):
    seen = []
    monkeypatch.setattr(_split, "observe", lambda cpu, wall: seen.append((cpu, wall)))

    def spin(i, slot):
        t = _split.time.thread_time()
        while _split.time.thread_time() - t < 0.002:
            pass
    _split.run_items(4, spin)
    (cpu, wall), = seen
    assert cpu >= 0.007 and wall > 0


def test_backed_off_convolution_runs_on_one_blas_thread(split_on, monkeypatch):
    """While the self-check has the split off, a convolution runs its chunks on the
    calling thread with BLAS on one thread (two more awake workers for the policy)."""
    calls = []
    monkeypatch.setattr(_split.blas, "worker_awake", lambda: calls.append(1))
    monkeypatch.setattr(_split.blas, "worker_asleep", lambda: calls.append(-1))
    monkeypatch.setattr(_split, "_now", lambda: 50.0)
    monkeypatch.setattr(_split, "_off_until", 51.0)
    assert _split.backed_off(np) and not _split.backed_off(None)
    assert _split.ways(np, 100, 1 << 20) == 1
    spy = []
    import plexnet_ops_basic.nn._convparams as cp
    monkeypatch.setattr(cp, "run_items", lambda *a: spy.append(a))
    _run("Convolution", dict(kernel=(5, 5), num_filter=20), (16, 1, 28, 28), (W, W, W), True, monkeypatch)
    assert not spy and calls and sum(calls) == 0 and calls[:2] == [1, 1]
    monkeypatch.setattr(_split, "_off_until", 0.0)
    assert not _split.backed_off(np)


def test_split_runs_inline_when_the_pool_refuses_work(monkeypatch):
    """At interpreter exit the helper pool takes no new work (submit raises
    RuntimeError): both halves then run on the calling thread, nothing is lost."""
    class Closed:
        def submit(self, fn):
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")
    monkeypatch.setattr(_split, "_helper", lambda: Closed())
    ran = []
    _split.run2(lambda: ran.append("first"), lambda: ran.append("second"))
    assert ran == ["first", "second"]
    got = []
    assert sum(_split.run_items(5, lambda i, slot: got.append(i))) == 5
    assert sorted(got) == list(range(5))
