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
    monkeypatch.setattr(_split.blas, "can_lend", lambda: True)
    monkeypatch.setattr(_split.blas, "lend_core", lambda: True)
    monkeypatch.setattr(_split.blas, "return_core", lambda: None)
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


FC_CASES = [
    (dict(num_hidden=6), (8, 5)),
    (dict(num_hidden=7, no_bias=True), (9, 2, 3)),
    (dict(num_hidden=4, flatten=False), (3, 5, 6)),
]


@pytest.mark.parametrize("kw,dshape", FC_CASES)
@pytest.mark.parametrize("reqs", [(W, W, W), (ADD, ADD, ADD), (NULL, W, ADD), (W, NULL, W), (NULL, NULL, W)])
def test_fully_connected_split_matches_one_thread(split_on, monkeypatch, kw, dshape, reqs):
    """FullyConnected's split (the split CPU policy): rows of the forward and the data
    gradient, output units of the weight gradient; req add falls back to one thread."""
    from plexnet_ops_basic.nn import fully_connected as fc
    monkeypatch.setattr(fc, "SPLIT_MIN_MACS", 1)
    used = []
    orig = fc.run_items
    monkeypatch.setattr(fc, "run_items", lambda n, fn: used.append(n) or orig(n, fn))
    y1, g1 = _run("FullyConnected", kw, dshape, reqs, False, monkeypatch)
    assert not used
    y2, g2 = _run("FullyConnected", kw, dshape, reqs, True, monkeypatch)
    assert used[0] == 2                                  # the forward split
    assert len(used) == (2 if ADD not in reqs[:2] and reqs[:2] != (NULL, NULL) else 1)
    for a, b in zip(y1 + g1, y2 + g2):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_split_is_used_and_balances_blas(split_on, monkeypatch):
    """The helper runs part of the chunks on a core the engine lends for the split
    (``blas.lend_core``), given back afterwards (``blas.return_core``)."""
    seen = []
    calls = []
    monkeypatch.setattr(_split.blas, "lend_core", lambda: calls.append(1) or True)
    monkeypatch.setattr(_split.blas, "return_core", lambda: calls.append(-1))
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
    assert sum(calls) == 0 and calls[:2] == [1, -1] and len(calls) == 2 * len(seen)


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
    monkeypatch.setattr(_split.blas, "can_lend", lambda: False)   # no idle core: no split
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


def _fresh_self_check(monkeypatch, now):
    monkeypatch.setattr(_split, "MIN_EFFICIENCY", 0.7)
    monkeypatch.setattr(_split, "_now", lambda: now[0])
    monkeypatch.setattr(_split, "_window", _split.deque(maxlen=_split.WINDOW))
    monkeypatch.setattr(_split, "_seen", _split.WARMUP)        # past the warm-up
    monkeypatch.setattr(_split, "_backoff", _split.BACKOFF_S)
    monkeypatch.setattr(_split, "_off_until", 0.0)


def test_split_backs_off_when_the_threads_do_not_run_together(split_on, monkeypatch):
    """Both threads busy (CPU ~ 2x wall): the split stays on; when the last WINDOW splits,
    weighted by their wall time, kept the two cores below MIN_EFFICIENCY busy it turns
    itself off for BACKOFF_S, doubled per failure in a row, and reset by a window that
    passes."""
    now = [100.0]
    _fresh_self_check(monkeypatch, now)
    for _ in range(_split.WINDOW):
        _split.observe(cpu=1.9, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 2
    for _ in range(4):
        _split.observe(cpu=1.0, wall=1.0)                # half of the window at 0.5: 0.725
    assert _split.ways(np, 100, 1 << 20) == 2
    _split.observe(cpu=1.0, wall=1.0)                    # five of eight: 0.69
    assert _split.ways(np, 100, 1 << 20) == 1            # off
    now[0] += _split.BACKOFF_S + 0.01
    assert _split.ways(np, 100, 1 << 20) == 2            # tried again: a new window decides
    for _ in range(_split.WINDOW - 1):
        _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 2
    _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 1            # off again, for twice as long
    now[0] += _split.BACKOFF_S + 0.01
    assert _split.ways(np, 100, 1 << 20) == 1
    now[0] += _split.BACKOFF_S
    assert _split.ways(np, 100, 1 << 20) == 2
    for _ in range(_split.WINDOW):
        _split.observe(cpu=1.9, wall=1.0)
    assert _split._backoff == _split.BACKOFF_S           # a window that passed resets it
    _split.observe(cpu=0.0, wall=0.0)                    # nothing measured: no change
    assert _split.ways(np, 100, 1 << 20) == 2


def test_backoff_is_capped(split_on, monkeypatch):
    now = [100.0]
    _fresh_self_check(monkeypatch, now)
    for _ in range(12):
        for _ in range(_split.WINDOW):
            _split.observe(cpu=1.0, wall=1.0)
        now[0] = _split._off_until + 0.01
    assert _split._backoff == _split.MAX_BACKOFF_S


def test_a_long_split_weighs_more_than_short_ones(split_on, monkeypatch):
    """The window is weighted by wall time: seven short poor splits (the helper starting,
    a first call) do not outvote one long split that ran on both cores."""
    now = [100.0]
    _fresh_self_check(monkeypatch, now)
    for _ in range(_split.WINDOW - 1):
        _split.observe(cpu=0.001, wall=0.001)
    _split.observe(cpu=0.19, wall=0.1)
    assert _split.ways(np, 100, 1 << 20) == 2


def test_the_first_splits_of_a_process_are_not_judged(split_on, monkeypatch):
    now = [100.0]
    _fresh_self_check(monkeypatch, now)
    monkeypatch.setattr(_split, "_seen", 0)
    for _ in range(_split.WARMUP):
        _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 2 and not _split._window
    for _ in range(_split.WINDOW):
        _split.observe(cpu=1.0, wall=1.0)
    assert _split.ways(np, 100, 1 << 20) == 1


def test_no_lent_core_runs_both_halves_here(monkeypatch):
    """Where the engine lends no core (another worker awake, a busy host) ``run2`` runs
    both parts on the calling thread and ``run_items`` leaves the self-check alone."""
    monkeypatch.setattr(_split.blas, "lend_core", lambda: False)
    seen = []
    monkeypatch.setattr(_split, "observe", lambda cpu, wall: seen.append(cpu))
    threads = set()
    assert _split.run2(lambda: threads.add(threading.get_ident()), lambda: threads.add(threading.get_ident())) is False
    assert threads == {threading.get_ident()}
    assert _split.run_items(3, lambda i, slot: threads.add(slot)) == [3, 0]
    assert not seen


def test_run_items_reports_cpu_time(monkeypatch):
    seen = []
    monkeypatch.setattr(_split, "observe", lambda cpu, wall: seen.append((cpu, wall)))
    # a core is lent whatever the host's load (a busy machine refuses it, and then the
    # split neither runs nor reports)
    monkeypatch.setattr(_split.blas, "lend_core", lambda: True)
    monkeypatch.setattr(_split.blas, "return_core", lambda: None)

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
