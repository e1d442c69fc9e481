"""Behaviour of the quantization operators beyond the recorded MXNet cases: the front
ends (``nd.contrib``, ``sym.contrib``), invariants (hypothesis), ``quantize_asym`` (MXNet
1.9.1 crashes on it, so its formula is checked by hand), gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plexnet as mx
from plexnet.base import PlexnetError, ShapeError
from plexnet.operator import ParamError
from plexnet_ops_quantization._base import QuantTypeError

C = mx.nd.contrib


def r(v: float) -> mx.nd.NDArray:
    return mx.nd.array([v])


def test_registered_and_in_namespaces() -> None:
    names = ("quantize", "quantize_v2", "quantize_asym", "dequantize", "requantize", "quantized_conv",
             "quantized_fully_connected", "quantized_pooling", "quantized_act", "quantized_flatten",
             "quantized_concat", "quantized_elemwise_add", "quantized_elemwise_mul", "quantized_batch_norm",
             "quantized_embedding", "calibrate_entropy")
    for n in names:
        assert callable(getattr(mx.nd.contrib, n)) and callable(getattr(mx.sym.contrib, n)), n
    assert "_contrib_quantize_v2" in mx.operator.get_all_registered_operators()


# -- invariants ---------------------------------------------------------------------------------------

floats = st.floats(-4.0, 4.0, allow_nan=False, width=32)


@settings(max_examples=40, deadline=None)
@given(st.lists(floats, min_size=1, max_size=30), st.floats(0.1, 4.0))
def test_quantize_v2_int8_round_trip_within_half_level(xs: list, bound: float) -> None:
    x = np.clip(np.array(xs, np.float32), -bound, bound)
    q, lo, hi = C.quantize_v2(mx.nd.array(x), min_calib_range=-bound, max_calib_range=bound)
    assert q.dtype == np.int8 and lo.asscalar() == np.float32(-bound) and hi.asscalar() == np.float32(bound)
    back = C.dequantize(q, lo, hi).asnumpy()
    level = np.float32(bound) / 127.5
    # rounding half a level, saturation at 127 loses up to one more level at the top
    assert np.all(np.abs(back - x) <= 1.5 * level + 1e-6)
    neg = C.quantize_v2(mx.nd.array(-x), min_calib_range=-bound, max_calib_range=bound)[0].asnumpy()
    inner = (np.abs(q.asnumpy()) < 127) & (np.abs(neg) < 127)  # x = +-bound: 127.5 saturates to 127, -128
    np.testing.assert_array_equal(neg[inner], -q.asnumpy()[inner])  # symmetric: half to even


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2 ** 31 - 1))
def test_fully_connected_is_the_exact_integer_product(n: int, k: int, h: int, seed: int) -> None:
    rng = np.random.RandomState(seed % 2 ** 31)
    x = rng.randint(-128, 128, (n, k)).astype(np.int8)
    w = rng.randint(-128, 128, (h, k)).astype(np.int8)
    out, lo, hi = C.quantized_fully_connected(mx.nd.array(x, dtype="int8"), mx.nd.array(w, dtype="int8"),
                                              r(-1.0), r(1.0), r(-2.0), r(2.0), num_hidden=h, no_bias=True)
    np.testing.assert_array_equal(out.asnumpy(), x.astype(np.int64) @ w.T.astype(np.int64))
    assert out.dtype == np.int32
    # the int32 range is one int8 level of each side per int32 level
    assert hi.asscalar() == pytest.approx(1.0 / 127 * 2.0 / 127 * 2 ** 31, rel=1e-6) and lo.asscalar() == -hi.asscalar()


def test_requantize_of_a_conv_matches_quantizing_its_real_values() -> None:
    rng = np.random.RandomState(0)
    d = rng.randint(0, 256, (1, 3, 6, 6)).astype(np.uint8)
    w = rng.randint(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    out, lo, hi = C.quantized_conv(mx.nd.array(d, dtype="uint8"), mx.nd.array(w, dtype="int8"), r(0.0), r(1.0),
                                   r(-0.5), r(0.5), kernel=(3, 3), num_filter=4, no_bias=True)
    real = out.asnumpy().astype(np.float64) * hi.asscalar() / 2 ** 31
    q8, lo8, hi8 = C.requantize(out, lo, hi)
    assert q8.dtype == np.int8
    want = np.clip(np.rint(real * 127 / hi8.asscalar()), -128, 127)
    assert np.max(np.abs(q8.asnumpy() - want)) <= 1


def test_conv_equals_integer_reference() -> None:
    rng = np.random.RandomState(1)
    d = rng.randint(0, 256, (2, 2, 5, 4)).astype(np.uint8)
    w = rng.randint(-128, 128, (3, 2, 2, 3)).astype(np.int8)
    out = C.quantized_conv(mx.nd.array(d, dtype="uint8"), mx.nd.array(w, dtype="int8"), r(0.0), r(1.0), r(-1.0),
                           r(1.0), kernel=(2, 3), stride=(1, 2), pad=(1, 0), num_filter=3, no_bias=True)[0]
    dp = np.pad(d.astype(np.int64), [(0, 0), (0, 0), (1, 1), (0, 0)])
    want = np.zeros((2, 3, 6, 1), np.int64)
    for y in range(6):
        want[:, :, y, 0] = np.einsum("nchw,fchw->nf", dp[:, :, y:y + 2, 0:3], w.astype(np.int64))
    np.testing.assert_array_equal(out.asnumpy(), want)


# -- quantize_asym (MXNet's formula; its 1.9.1 binary segfaults) -------------------------------------

def test_quantize_asym_float_uses_min_max() -> None:
    x = np.array([[-1.0, -0.25, 0.0, 0.5, 3.0]], np.float32)
    q, scale, shift = C.quantize_asym(mx.nd.array(x))
    s = np.float32(255.0) / np.float32(4.0)
    b = np.float32(255.0) - np.float32(3.0) * s
    assert scale.asscalar() == s and shift.asscalar() == b
    np.testing.assert_array_equal(q.asnumpy(), np.floor(x * s + b + 0.5).astype(np.uint8))
    assert q.dtype == np.uint8 and q.asnumpy()[0, 0] == 0 and q.asnumpy()[0, -1] == 255


def test_quantize_asym_calibrated_saturates_and_quantized_inputs() -> None:
    x = np.array([-5.0, 0.0, 1.0, 9.0], np.float32)
    q, scale, shift = C.quantize_asym(mx.nd.array(x), min_calib_range=0.0, max_calib_range=2.0)
    assert scale.asscalar() == np.float32(127.5) and shift.asscalar() == 0.0
    np.testing.assert_array_equal(q.asnumpy(), [0, 0, 128, 255])
    q, scale, shift = C.quantize_asym(mx.nd.array([-128, -1, 0, 127], dtype="int8"))
    np.testing.assert_array_equal(q.asnumpy(), [0, 127, 128, 255])
    assert (scale.asscalar(), shift.asscalar()) == (1.0, 128.0)
    u = mx.nd.array([0, 7, 255], dtype="uint8")
    q, scale, shift = C.quantize_asym(u)
    np.testing.assert_array_equal(q.asnumpy(), [0, 7, 255])
    assert (scale.asscalar(), shift.asscalar()) == (1.0, 0.0)


# -- front ends -------------------------------------------------------------------------------------

def test_symbolic_conv_infers_parameters_and_matches_imperative() -> None:
    data = mx.sym.var("data")
    s = mx.sym.contrib.quantized_conv(data=data, kernel=(3, 3), num_filter=2, name="qc")
    assert s.list_arguments() == ["data", "qc_weight", "qc_bias", "qc_min_data", "qc_max_data", "qc_min_weight",
                                  "qc_max_weight", "qc_min_bias", "qc_max_bias"]
    assert s.list_outputs() == ["qc_output", "qc_min_output", "qc_max_output"]
    arg_shapes, out_shapes, _ = s.infer_shape(data=(1, 3, 5, 5))
    assert arg_shapes[1:3] == [(2, 3, 3, 3), (2,)] and out_shapes == [(1, 2, 3, 3), (1,), (1,)]
    arg_types, out_types, _ = s.infer_type(data="uint8")
    assert arg_types[1] == np.int8 and arg_types[3] == np.float32 and out_types[0] == np.int32
    rng = np.random.RandomState(2)
    vals = [mx.nd.array(rng.randint(0, 256, (1, 3, 5, 5)), dtype="uint8"),
            mx.nd.array(rng.randint(-128, 128, (2, 3, 3, 3)), dtype="int8"),
            mx.nd.array(rng.randint(-128, 128, (2,)), dtype="int8"),
            r(0.0), r(1.0), r(-1.0), r(1.0), r(-1.0), r(1.0)]
    ex = s.bind(mx.cpu(), dict(zip(s.list_arguments(), vals)), grad_req="null")
    got = ex.forward()
    want = C.quantized_conv(*vals, kernel=(3, 3), num_filter=2)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


def test_elemwise_mul_runs_imperatively_and_float_output_has_one_output() -> None:
    a = mx.nd.array([[100, -7]], dtype="int8")
    b = mx.nd.array([[3, 9]], dtype="int8")
    out, lo, hi = C.quantized_elemwise_mul(a, b, r(-1.0), r(1.0), r(-2.0), r(2.0))
    np.testing.assert_array_equal(out.asnumpy(), [[300, -63]])
    f = C.quantized_elemwise_mul(a, b, r(-1.0), r(1.0), r(-2.0), r(2.0), enable_float_output=True)
    assert isinstance(f, mx.nd.NDArray) and f.dtype == np.float32
    np.testing.assert_allclose(f.asnumpy(), np.array([[300, -63]]) * (1 / 127.5 * 2 / 127.5), rtol=1e-6)


def test_batch_norm_has_aux_states_and_flatten_concat_shapes() -> None:
    bn = mx.sym.contrib.quantized_batch_norm(data=mx.sym.var("d"), min_calib_range=-1.0, max_calib_range=1.0,
                                             name="bn")
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    args, outs, aux = bn.infer_shape(d=(2, 4, 3, 3))
    assert args[1:3] == [(4,), (4,)] and aux == [(4,), (4,)] and outs[0] == (2, 4, 3, 3)
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4) - 12, dtype="int8")
    assert C.quantized_flatten(x, r(-1.0), r(1.0))[0].shape == (2, 12)
    cat = C.quantized_concat(x, x, r(-1.0), r(1.0), r(-1.0), r(1.0), num_args=2, dim=2)
    assert cat[0].shape == (2, 3, 8) and cat[0].dtype == np.int8
    np.testing.assert_array_equal(cat[0].asnumpy()[:, :, 4:], x.asnumpy())


def test_embedding_and_pooling_pass_ranges() -> None:
    w = mx.nd.array([[1, 2], [3, 4], [-5, 6]], dtype="int8")
    out, lo, hi = C.quantized_embedding(mx.nd.array([[2, 0], [9, -3]]), w, r(-0.5), r(0.25), input_dim=3,
                                        output_dim=2)
    np.testing.assert_array_equal(out.asnumpy(), [[[-5, 6], [1, 2]], [[-5, 6], [1, 2]]])
    assert (lo.asscalar(), hi.asscalar()) == (-0.5, 0.25)
    x = mx.nd.array(np.array([[[[1, 2], [3, 6]]]]), dtype="int8")
    p = C.quantized_pooling(x, r(-1.0), r(2.0), kernel=(2, 2), pool_type="avg")
    assert p[0].asnumpy().item() == 3 and p[0].dtype == np.int8  # 12 / 4
    p = C.quantized_pooling(x, r(-1.0), r(2.0), kernel=(1, 1), global_pool=True, pool_type="max")
    assert p[0].asnumpy().item() == 6 and (p[1].asscalar(), p[2].asscalar()) == (-1.0, 2.0)


# -- gradients ----------------------------------------------------------------------------------------

def test_zero_gradients_as_mxnet() -> None:
    x = mx.nd.array([[0.5, -1.0, 2.0]])
    x.attach_grad()
    with mx.autograd.record():
        q = C.quantize_v2(x)
        y = C.dequantize(*q)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((1, 3)))


def test_quantized_act_is_not_differentiable() -> None:
    x = mx.nd.array([[5, -3]], dtype="int8")
    lo, hi = r(-1.0), r(1.0)
    for a in (x, lo, hi):
        a.attach_grad()
    with mx.autograd.record():
        out = C.quantized_act(x, lo, hi, act_type="relu")
    with pytest.raises(PlexnetError, match="non-differentiable"):
        out[0].backward()


# -- errors ------------------------------------------------------------------------------------------

def test_bad_dtypes_name_operator_and_argument() -> None:
    with pytest.raises(QuantTypeError, match=r"_contrib_quantize: argument 'data' has dtype int32, expected float32"):
        C.quantize(mx.nd.array([1, 2], dtype="int32"), r(-1.0), r(1.0))
    with pytest.raises(QuantTypeError, match=r"'weight' has dtype uint8, expected int8"):
        C.quantized_fully_connected(mx.nd.array([[1, 2]], dtype="int8"), mx.nd.array([[1, 2]], dtype="uint8"),
                                    r(-1.0), r(1.0), r(-1.0), r(1.0), num_hidden=1, no_bias=True)
    with pytest.raises(QuantTypeError, match=r"'data' has dtype float32, expected int32"):
        C.requantize(mx.nd.array([1.0]), r(-1.0), r(1.0))
    with pytest.raises(QuantTypeError, match=r"'lhs' has dtype uint8, expected int8"):
        C.quantized_elemwise_mul(mx.nd.array([1], dtype="uint8"), mx.nd.array([1], dtype="int8"), r(-1.0), r(1.0),
                                 r(-1.0), r(1.0))
    with pytest.raises(QuantTypeError, match=r"'min_range' has dtype float64, expected float32"):
        C.dequantize(mx.nd.array([1], dtype="int8"), mx.nd.array([1.0], dtype="float64"), r(1.0))


def test_bad_shapes_and_parameters() -> None:
    x = mx.nd.array(np.zeros((1, 2, 4, 4)), dtype="uint8")
    with pytest.raises(ShapeError, match=r"range input 'min_range' must have shape \(1,\), got \(2,\)"):
        C.quantize(mx.nd.array([1.0]), mx.nd.array([0.0, 1.0]), r(1.0))
    with pytest.raises(ShapeError, match=r"_contrib_quantized_conv: weight must have shape \(3, 2, 3, 3\)"):
        C.quantized_conv(x, mx.nd.array(np.zeros((3, 2, 2, 2)), dtype="int8"), r(0.0), r(1.0), r(-1.0), r(1.0),
                         kernel=(3, 3), num_filter=3, no_bias=True)
    with pytest.raises(ShapeError, match="num_group=2"):
        C.quantized_conv(x, mx.nd.array(np.zeros((2, 1, 3, 3)), dtype="int8"), r(0.0), r(1.0), r(-1.0), r(1.0),
                         kernel=(3, 3), num_filter=2, num_group=2, no_bias=True)
    with pytest.raises(ShapeError, match="pool_type 'lp' is not supported"):
        C.quantized_pooling(x, r(0.0), r(1.0), kernel=(2, 2), pool_type="lp")
    with pytest.raises(ShapeError, match="act_type 'tanh' is not supported"):
        C.quantized_act(mx.nd.array([1], dtype="int8"), r(0.0), r(1.0), act_type="tanh")
    with pytest.raises(ShapeError, match="min_calib_range and max_calib_range are required"):
        C.quantized_batch_norm(mx.nd.array(np.zeros((1, 2, 2)), dtype="int8"), mx.nd.ones(2), mx.nd.ones(2),
                               min_data=r(-1.0), max_data=r(1.0), moving_mean=mx.nd.zeros(2),
                               moving_var=mx.nd.ones(2))
    with pytest.raises(ShapeError, match=r"lhs and rhs must have the same shape .*lhs=\(2,\), rhs=\(3,\)"):
        C.quantized_elemwise_add(mx.nd.array([1, 2], dtype="int8"), mx.nd.array([1, 2, 3], dtype="int8"),
                                 r(-1.0), r(1.0), r(-1.0), r(1.0))
    with pytest.raises(ParamError, match="out_type"):
        C.quantize_v2(mx.nd.array([1.0]), out_type="int16")
    with pytest.raises(ShapeError, match="hist_edges must have len"):
        C.calibrate_entropy(mx.nd.ones(10), mx.nd.ones(10), num_quantized_bins=3)
