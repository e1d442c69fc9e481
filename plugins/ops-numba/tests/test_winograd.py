"""Winograd F(4x4, 3x3) (the default) and F(2x2, 3x3) for 3x3 stride-1 float32
convolutions: forward, data and weight gradients equal ops-basic's im2col results to
float32 rounding (another order of additions), every req; the bias gradient is
ops-basic's (bit-equal); everything outside the rule runs the im2col path. Every test
runs for both algorithms."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from _numba_harness import assert_same, force_split, prop, run_pair
from plexnet_ops_basic.nn.convolution import ConvolutionOp
from plexnet_ops_numba import _base, winograd
from plexnet_ops_numba.convolution import NumbaConvolutionOp

pytestmark = pytest.mark.timeout(180)

#: relative to each array's largest magnitude: the transforms' rounding, about 1e-6 for
#: F(2x2, 3x3) and 1e-5 for F(4x4, 3x3) (its points +-2 give its matrices entries up to 8)
TOLS = {2: 2e-5, 4: 8e-5}


@pytest.fixture(autouse=True, params=[(4, 64), (4, 0), (2, 64)], ids=["F4x4", "F4x4-VUt", "F2x2"])
def tile(request, monkeypatch):
    """F(4x4) twice: with the default ``FEW_COLUMNS`` (the tests' small chunks take the
    ``M^T = U V^T`` GEMMs) and with 0 (every chunk ``M = V U^T``, as ResNet's bigger ones)."""
    t, few = request.param
    monkeypatch.setattr(winograd, "TILE", t)
    monkeypatch.setattr(winograd, "FEW_COLUMNS", few)
    return t


#: the passes a training step's forward (req, then write) and backward run: F(4x4)'s
#: backward takes both gradients in one pass, F(2x2)'s calls the two functions
STEP = {4: ["forward", "forward", "backward"],
        2: ["forward", "forward", "backward", "backward_data", "backward_weight"]}


@pytest.fixture
def TOL(tile):
    return dict(rtol=TOLS[tile], atol=TOLS[tile])


def pair(kw):
    pr = prop("Convolution", kw)
    return [ConvolutionOp(pr.param), NumbaConvolutionOp(pr)]


@pytest.fixture
def calls(monkeypatch):
    """Count the Winograd passes that run (any size takes the numba path)."""
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(winograd, "MIN_TILES", 0)
    seen: list = []
    for name in ("forward", "backward", "backward_data", "backward_weight"):
        f = getattr(winograd, name)
        monkeypatch.setattr(winograd, name, lambda *a, _f=f, _n=name: seen.append(_n) or _f(*a))
    return seen


def _scaled(res):
    """Each array divided by the largest magnitude among the implementations' copies of it."""
    (o1, g1), (o2, g2) = res
    out = [[], []]
    for a, b in zip(list(o1) + list(g1), list(o2) + list(g2)):
        if a is None:
            continue
        s = max(1.0, float(np.abs(a).max()))
        out[0].append(a / s)
        out[1].append(b / s)
    return out


CASES = [
    (dict(kernel=(3, 3), num_filter=32, pad=(1, 1)), (3, 32, 8, 8)),                 # ResNet-like, bias
    (dict(kernel=(3, 3), num_filter=40, pad=(1, 1), no_bias=True), (2, 33, 7, 9)),   # odd sizes
    (dict(kernel=(3, 3), num_filter=32), (2, 32, 9, 6)),                             # no padding
    (dict(kernel=(3, 3), num_filter=32, pad=(2, 1)), (2, 32, 5, 5)),                 # asymmetric padding
    (dict(kernel=(3, 3), num_filter=64, pad=(1, 1), no_bias=True), (4, 64, 16, 16)),  # several chunks
]


@pytest.mark.parametrize("kw,shape", CASES)
@pytest.mark.parametrize("req", ["write", "add", "null"])
def test_matches_im2col(calls, kw, shape, req, TOL, tile):
    a, b = _scaled(run_pair("Convolution", kw, [shape], pair(kw), req=req))
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, **TOL, err_msg=f"{kw} {shape} {req}")
    # forward with req, forward write before the backward, the backward's two gradients
    # (req null: no gradient pass below ``backward``)
    assert calls == (STEP[tile] if req != "null" else STEP[4])


def test_chunks_shared_with_the_helper_thread(calls, monkeypatch, TOL, tile):
    """With a second core free the batch's chunks run on this thread and ops-basic's helper
    thread at once (the weight gradient summed per thread): the same values as on one
    thread, to float32 rounding (the weight gradient's sums are grouped differently)."""
    kw = dict(kernel=(3, 3), num_filter=48, pad=(1, 1))
    one = run_pair("Convolution", kw, [(3, 40, 9, 7)], pair(kw))[1]
    shared = force_split(monkeypatch)
    two = run_pair("Convolution", kw, [(3, 40, 9, 7)], pair(kw))[1]
    if tile == 4:
        # the batch is one chunk: each forward and the backward share their GEMMs by
        # position (the filter transforms of 48 x 40 filters are too small to share)
        assert shared == [2, 2, 2]
    else:   # two forwards, the data and the weight gradient: the batch in 2 chunks each
        assert shared == [2, 2, 2, 2]
    a, b = _scaled([one, two])
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, **TOL)


def test_bias_gradient_is_im2col_bit_for_bit(calls):
    kw = dict(kernel=(3, 3), num_filter=32, pad=(1, 1))
    (_, g1), (_, g2) = run_pair("Convolution", kw, [(2, 32, 6, 6)], pair(kw))
    np.testing.assert_array_equal(g1[2], g2[2])


@pytest.mark.parametrize("kw,shape,dtype", [
    (dict(kernel=(3, 3), num_filter=32, pad=(1, 1)), (2, 32, 6, 6), np.float64),      # float64: im2col
    (dict(kernel=(3, 3), num_filter=32, stride=(2, 2), pad=(1, 1)), (2, 32, 7, 7), np.float32),
    (dict(kernel=(3, 3), num_filter=32, dilate=(2, 2), pad=(2, 2)), (2, 32, 7, 7), np.float32),
    (dict(kernel=(3, 3), num_filter=32, num_group=2, pad=(1, 1)), (2, 32, 6, 6), np.float32),
    (dict(kernel=(3, 3), num_filter=8, pad=(1, 1)), (2, 32, 6, 6), np.float32),          # few filters
    (dict(kernel=(3, 3), num_filter=32, pad=(1, 1)), (2, 8, 6, 6), np.float32),          # few channels
    (dict(kernel=(5, 5), num_filter=32, pad=(2, 2)), (2, 32, 6, 6), np.float32),
    (dict(kernel=(3, 3), num_filter=32, pad=(3, 3)), (2, 32, 6, 6), np.float32),         # padding > 2
])
def test_outside_the_rule_runs_im2col_bit_for_bit(calls, kw, shape, dtype):
    assert_same(run_pair("Convolution", kw, [shape], pair(kw), dtype=dtype), what=str(kw))
    assert calls == []


def test_few_tiles_run_im2col(calls, monkeypatch, tile):
    """Below ``MIN_TILES`` output tiles in the batch (a deep layer at batch 1) the filter
    transforms would cost more than the GEMMs save: im2col, bit for bit."""
    monkeypatch.setattr(winograd, "MIN_TILES", 256)
    kw = dict(kernel=(3, 3), num_filter=32, pad=(1, 1))
    assert_same(run_pair("Convolution", kw, [(1, 32, 14, 14)], pair(kw)))   # 49 tiles
    assert calls == []
    run_pair("Convolution", kw, [(6, 32, 14, 14)], pair(kw))                # 294 tiles
    assert calls == STEP[tile]


def test_weight_gradient_by_im2col_when_switched_off(calls, monkeypatch):
    monkeypatch.setattr(winograd, "WEIGHT_GRADIENT", False)
    kw = dict(kernel=(3, 3), num_filter=32, pad=(1, 1))
    (o1, g1), (o2, g2) = run_pair("Convolution", kw, [(2, 32, 6, 6)], pair(kw))
    np.testing.assert_array_equal(g1[1], g2[1])   # weight: ops-basic's GEMM, bit for bit
    np.testing.assert_array_equal(g1[2], g2[2])
    assert calls == ["forward", "forward", "backward_data"]


def test_switch_and_missing_kernels(calls, monkeypatch):
    kw = dict(kernel=(3, 3), num_filter=32, pad=(1, 1))
    monkeypatch.setattr(winograd, "ENABLED", False)
    assert_same(run_pair("Convolution", kw, [(2, 32, 6, 6)], pair(kw)))
    monkeypatch.setattr(winograd, "ENABLED", True)
    monkeypatch.setattr(_base, "_kernels", {"_winokern": None, "_winokern4": None})
    assert_same(run_pair("Convolution", kw, [(2, 32, 6, 6)], pair(kw)))
    assert calls == []


def test_non_finite_values_spread_as_in_the_direct_sum(calls, tile):
    """A NaN or inf in the input reaches every output block whose window holds it (and
    only those; the transforms add zeros for padding, never 0 * inf)."""
    kw = dict(kernel=(3, 3), num_filter=32, pad=(1, 1), no_bias=True)
    x = np.random.default_rng(0).standard_normal((1, 32, 6, 6)).astype(np.float32)
    x[0, 3, 0, 0] = np.nan
    w = np.random.default_rng(1).standard_normal((32, 32, 3, 3)).astype(np.float32)
    outs = []
    for op in pair(kw):
        y = np.zeros((1, 32, 6, 6), np.float32)
        from _numba_harness import ctx
        from plexnet.operator import OpReqType
        op.forward(ctx(prop("Convolution", kw), [x.shape, w.shape]), [x, w], [OpReqType.write], [y], [])
        outs.append(np.isnan(y))
    # Winograd's m x m blocks read an (m + 2)-square tile: every NaN of the direct sum is
    # there, and the block holding it may spread it to its other outputs (never further)
    assert outs[0].any() and (outs[1] >= outs[0]).all()
    assert not outs[1][:, :, tile:, :].any() and not outs[1][:, :, :, tile:].any()


def test_chunk_size():
    assert winograd.chunk_size(32, 64, 256, 4) == 4          # 1 MiB of transformed input per sample
    assert winograd.chunk_size(32, 512, 4, 4) == 32          # at least 256 GEMM columns
    assert winograd.chunk_size(0, 64, 256, 4) == 1
    assert winograd.chunk_size(3, 64, 1, 4) == 3


# the ``tile`` fixture is a constant for all inputs (it only selects the algorithm)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 3), c=st.integers(32, 40), f=st.integers(32, 40), h=st.integers(1, 9),
       w=st.integers(1, 9), pr=st.integers(0, 2), pc=st.integers(0, 2))
def test_property_equals_the_direct_convolution(tile, n, c, f, h, w, pr, pc):
    """Any shape the rule admits: Winograd's forward and data gradient equal the direct
    float64 sums within float32 rounding."""
    if h + 2 * pr < 3 or w + 2 * pc < 3:
        return
    rng = np.random.default_rng(n * 1000 + h * 10 + w)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((f, c, 3, 3)).astype(np.float32)
    p = prop("Convolution", dict(kernel=(3, 3), num_filter=f, pad=(pr, pc), no_bias=True)).param
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pr, pr), (pc, pc)))
    Ho, Wo = h + 2 * pr - 2, w + 2 * pc - 2
    ref = np.zeros((n, f, Ho, Wo))
    for i in range(3):
        for j in range(3):
            ref += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + Ho, j:j + Wo], wt[:, :, i, j].astype(np.float64))
    y = np.empty((n, f, Ho, Wo), np.float32)
    from plexnet.operator import OpReqType
    winograd.forward(p, x, wt, None, y, OpReqType.write)
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(y / scale, ref / scale, rtol=0, atol=TOLS[tile] / 2)
    dy = rng.standard_normal((n, f, Ho, Wo)).astype(np.float32)
    dx_ref = np.zeros_like(xp)
    for i in range(3):
        for j in range(3):
            dx_ref[:, :, i:i + Ho, j:j + Wo] += np.einsum("nfhw,fc->nchw", dy.astype(np.float64),
                                                          wt[:, :, i, j].astype(np.float64))
    dx_ref = dx_ref[:, :, pr:pr + h, pc:pc + w]
    dx = np.empty_like(x)
    winograd.backward_data(p, wt, dy, dx, OpReqType.write)
    scale = max(1.0, float(np.abs(dx_ref).max()))
    np.testing.assert_allclose(dx / scale, dx_ref / scale, rtol=0, atol=TOLS[tile] / 2)
    dw_ref = np.zeros((f, c, 3, 3))
    for i in range(3):
        for j in range(3):
            dw_ref[:, :, i, j] = np.einsum("nfhw,nchw->fc", dy.astype(np.float64), xp[:, :, i:i + Ho, j:j + Wo])
    dw = np.ones((f, c, 3, 3), np.float32)
    winograd.backward_weight(p, x, dy, dw, OpReqType.add)
    scale = max(1.0, float(np.abs(dw_ref).max()))
    np.testing.assert_allclose((dw - 1) / scale, dw_ref / scale, rtol=0, atol=TOLS[tile])


def test_even_chunks_for_two_threads(calls, monkeypatch, TOL):
    """With two threads the batch runs in an even number of nearly equal chunks (8 samples
    in chunks of at most 3: four of 2, not 3, 3, 2), with the values of one thread."""
    kw = dict(kernel=(3, 3), num_filter=32, pad=(1, 1), no_bias=True)
    one = run_pair("Convolution", kw, [(8, 32, 8, 8)], pair(kw))[1]
    monkeypatch.setattr(winograd, "chunk_size", lambda *a, **k: 3)
    spans = force_split(monkeypatch)
    two = run_pair("Convolution", kw, [(8, 32, 8, 8)], pair(kw))[1]
    assert 4 in spans and 3 not in spans
    a, b = _scaled([one, two])
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, **TOL)


def test_big_filter_transforms_are_shared(monkeypatch, TOL, tile):
    """From ``FILTER_SPLIT_MIN`` filter pairs the filter transforms (and the weight
    gradient's) run in halves on the two threads, with the values of one thread."""
    from plexnet.operator import OpReqType
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 40, 6, 6)).astype(np.float32)
    w = rng.standard_normal((48, 40, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((2, 48, 6, 6)).astype(np.float32)
    p = prop("Convolution", dict(kernel=(3, 3), num_filter=48, pad=(1, 1), no_bias=True)).param

    def grads():
        dx, dw = np.empty_like(x), np.empty_like(w)
        winograd.backward(p, x, w, dy, dx, OpReqType.write, dw, OpReqType.write)
        return dx, dw
    one = grads()
    monkeypatch.setattr(winograd, "FILTER_SPLIT_MIN", 0)
    shared = force_split(monkeypatch)
    two = grads()
    if tile == 4:   # the filters, the GEMMs (by position), the weight gradient's transform
        assert shared == [2, 2, 2]
    for a, b in zip(one, two):
        s = max(1.0, float(np.abs(a).max()))
        np.testing.assert_allclose(b / s, a / s, **TOL)


def test_first_call_of_a_shape_stays_out_of_the_split_self_check(monkeypatch, tile):
    """A shape's first call (fresh scratch pages faulted in by both threads) does not count
    in ``_split.observe``; the next calls do."""
    from plexnet_ops_basic.nn import _split
    from plexnet.operator import OpReqType
    monkeypatch.setattr(winograd, "_seen", set())
    force_split(monkeypatch)
    flags: list = []
    run_items = _split.run_items
    monkeypatch.setattr(_split, "run_items", lambda n, fn, obs=True: flags.append(obs) or run_items(n, fn, obs))
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 32, 8, 8)).astype(np.float32)
    w = rng.standard_normal((32, 32, 3, 3)).astype(np.float32)
    p = prop("Convolution", dict(kernel=(3, 3), num_filter=32, pad=(1, 1), no_bias=True)).param
    y = np.empty_like(x)
    winograd.forward(p, x, w, None, y, OpReqType.write)
    first = list(flags)
    flags.clear()
    winograd.forward(p, x, w, None, y, OpReqType.write)
    assert first and not any(first)
    assert flags and all(flags)


def test_run_items_without_observing_leaves_the_self_check_alone(monkeypatch):
    from plexnet_ops_basic.nn import _split
    seen: list = []
    monkeypatch.setattr(_split, "observe", lambda cpu, wall: seen.append((cpu, wall)))
    monkeypatch.setattr(_split.blas, "lend_core", lambda: True)     # a core is free
    monkeypatch.setattr(_split.blas, "return_core", lambda: None)
    assert sum(_split.run_items(2, lambda i, slot: None, False)) == 2
    assert seen == []
    _split.run_items(2, lambda i, slot: None)
    assert len(seen) == 1
