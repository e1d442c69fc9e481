"""Arithmetic corner cases as MXNet 1.9.1 computes them (found by an operator-by-dtype
differential run; expected values printed by MXNet 1.9.1): integer powers go through
floating point and are cast back (numpy refuses negative integer powers), and a float
modulo is +0.0 where the dividend is not negative."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

nd = mx.nd


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_powers_go_through_floating_point(dtype: str) -> None:
    v = nd.array([-7, -1, 0, 3, 8], dtype=dtype)
    low = np.iinfo(dtype).min
    assert (2 ** v).asnumpy().tolist() == [0, 0, 1, 8, 256]
    assert (v ** -3).asnumpy().tolist() == [0, -1, low, 0, 0]
    assert ((-3) ** v).asnumpy().tolist() == [0, 0, 1, -27, 6561]
    assert (0 ** v).asnumpy().tolist() == [low, low, 1, 0, 0]
    assert (v ** 2).dtype == np.dtype(dtype)


def test_small_integer_powers_wrap_as_mxnet() -> None:
    v = nd.array([0, 1, 3, 200, 255], dtype="uint8")
    assert (v ** -3).asnumpy().tolist() == [0, 1, 0, 0, 0]
    assert ((-3) ** v).asnumpy().tolist() == [1, 253, 229, 0, 0]
    w = nd.array([-7, -1, 0, 3, 100], dtype="int8")
    assert (2 ** w).asnumpy().tolist() == [0, 0, 1, 8, 0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_modulo_zero_is_positive_unless_the_dividend_is_negative(dtype: str) -> None:
    v = nd.array([-2.5, -1, 0, 0.5, 3], dtype=dtype)
    r = (2 % v).asnumpy()
    assert r.tolist() == [-0.5, 0.0, 0.0, 0.0, 2.0] and not np.signbit(r[1])
    m = (v % -3).asnumpy()
    assert m.tolist() == [-2.5, -1.0, 0.0, -2.5, 0.0] and not np.signbit(m[2]) and not np.signbit(m[4])
    b = nd.broadcast_mod(nd.array([3.0, -3.0], dtype=dtype), nd.array([-3.0, -3.0], dtype=dtype)).asnumpy()
    assert not np.signbit(b[0]) and np.signbit(b[1])   # MXNet: -fmod(3, 3) = -0.0 for a negative dividend
