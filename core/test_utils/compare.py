"""Tolerances and comparisons of ``mx.test_utils`` (MXNet 1.9.1 semantics and messages).

Tolerances default per dtype (``default_rtols``/``default_atols``); a comparison of two
arrays uses the looser tolerance of the two dtypes. ``assert_almost_equal`` raises an
``AssertionError`` naming the largest violation (``Error %f exceeds tolerance rtol=%e,
atol=%e (mismatch %f%%). Location of maximum error: ...``) and prints the first
mismatches, as MXNet does.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.testing as npt

from ..context import Context, _set_current, current_context

__all__ = ["default_context", "set_default_context", "default_dtype", "default_rtols", "default_atols",
           "default_numeric_eps", "effective_dtype", "get_tolerance", "get_tols", "get_atol", "get_rtol",
           "get_etol", "same", "checkShapes", "almost_equal", "locationError", "assert_almost_equal",
           "assert_allclose", "assert_almost_equal_with_err", "assert_almost_equal_ignore_nan",
           "assert_exception", "same_array", "compare_ndarray_tuple", "np_reduce", "collapse_sum_like"]

def default_context() -> Context:
    """The context tests run on: the current context (MXNet 1.9.1)."""
    return current_context()


def set_default_context(ctx: Context) -> None:
    """Make ``ctx`` this thread's current context, as MXNet 1.9.1 (arrays created
    without a context go there)."""
    _set_current(ctx)


def default_dtype() -> type:
    return np.float32


_INT_TYPES = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.int16, np.uint16)


def default_rtols() -> dict[np.dtype, float]:
    """Relative tolerances per dtype."""
    d = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
    d.update({np.dtype(t): 0 for t in _INT_TYPES})
    return d


def default_atols() -> dict[np.dtype, float]:
    """Absolute tolerances per dtype."""
    d = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}
    d.update({np.dtype(t): 0 for t in _INT_TYPES})
    return d


def default_numeric_eps() -> dict[np.dtype, float]:
    """Finite-difference step per dtype."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype that decides the tolerance for ``dat`` (no TF32 on plexnet's devices)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat: Any, tol: Any, default_tol: dict) -> float:
    """``tol`` if a number, else the entry for ``dat``'s dtype of ``tol`` (a dict) or of
    ``default_tol``."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol[dtype])


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """Tolerances for comparing ``x`` and ``y``: the looser of the two dtypes'."""
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol: float | None = None, dtype: Any = np.dtype(np.float64)) -> float:
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = np.dtype(np.float64)) -> float:
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol: float | None = None) -> float:
    return 0 if etol is None else etol


def _np(a: Any) -> Any:
    return a.asnumpy() if hasattr(a, "asnumpy") else a


def same(a: Any, b: Any) -> bool:
    """Whether two arrays are equal (shape and values)."""
    return bool(np.array_equal(_np(a), _np(b)))


def checkShapes(a: Any, b: Any) -> None:  # noqa: N802 - MXNet's name
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg([a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} "
                                                               f"are not equal"))


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 use_broadcast: bool = True) -> bool:
    """``np.allclose`` with MXNet's default tolerances (float64's when not given)."""
    a, b = _np(a), _np(b)
    if not use_broadcast:
        checkShapes(a, b)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def locationError(a: Any, b: Any, index: tuple, names: tuple, maxError: bool = False) -> str:  # noqa: N802,N803
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (maximum, str(index), names[0], a[index], names[1],
                                                          b[index])


def _find_max_violation(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> tuple[tuple, float]:
    absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))  # inf == inf counts as equal
    tol = atol + rtol * np.abs(b)
    violation = absdiff / (tol + 1e-20)
    loc = np.argmax(violation)
    return tuple(int(i) for i in np.unravel_index(loc, violation.shape)), float(np.max(violation))


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None, names: tuple = ("a", "b"),
                        equal_nan: bool = False, use_broadcast: bool = True, mismatches: tuple = (10, 10)) -> None:
    """Raise ``AssertionError`` unless ``|a - b| <= atol + rtol * |b|`` everywhere.

    Tolerances: numbers, dicts dtype -> number, or ``None`` for the dtype defaults (the
    looser of ``a``'s and ``b``'s). The message names the largest error, its location
    and the share of mismatching elements; up to ``mismatches[0]`` are printed."""
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    a, b = np.broadcast_arrays(a, b)
    index, rel = _find_max_violation(a, b, rtol, atol)
    if index != ():
        index_err, rel_err = index, rel
        print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
        a_tmp, b_tmp = a.copy(), b.copy()
        i = 1
        while i <= a.size:
            if i <= mismatches[0]:
                print("%3d: Error %f  %s" % (i, rel, locationError(a, b, index, names)))
            a_tmp[index] = b_tmp[index] = 0
            if almost_equal(a_tmp, b_tmp, rtol, atol, equal_nan=equal_nan):
                break
            i += 1
            if i <= mismatches[1] or mismatches[1] <= 0:
                index, rel = _find_max_violation(a_tmp, b_tmp, rtol, atol)
            else:
                break
        degree = "at least " if mismatches[1] > 0 and i > mismatches[1] else ""
        msg = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
            rel_err, rtol, atol, degree, 100 * i / a.size, locationError(a, b, index_err, names, maxError=True))
    else:
        msg = "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (rel, rtol, atol)
    with np.printoptions(threshold=4, suppress=True):
        raise AssertionError(npt.build_err_msg([a, b], err_msg=msg))


def assert_allclose(a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True) -> None:
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a: Any, b: Any, rtol: Any = None, atol: Any = None, etol: float | None = None,
                                 names: tuple = ("a", "b"), equal_nan: bool = False,
                                 mismatches: tuple = (10, 10)) -> None:
    """Like ``assert_almost_equal`` but tolerates a share ``etol`` of mismatching
    elements."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol, atol, names, equal_nan, mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_np(a)), np.asarray(_np(b))
    equals = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(equals) / equals.size
    if err > etol:
        index, rel = _find_max_violation(a, b, rtol, atol)
        msg = "Error %f exceeds tolerance rtol=%e, atol=%e, etol=%e. Error_rate=%f. %s" % (
            rel, rtol, atol, etol, err, locationError(a, b, index, names, maxError=True))
        with np.printoptions(threshold=4, suppress=True):
            raise AssertionError(npt.build_err_msg([a, b], err_msg=msg))


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                   names: tuple = ("a", "b")) -> None:
    """``assert_almost_equal`` where NaNs in either array are ignored."""
    a = np.copy(np.asarray(_np(a)))
    b = np.copy(np.asarray(_np(b)))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Any, exception_type: type, *args: Any, **kwargs: Any) -> None:
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")


def same_array(array1: Any, array2: Any) -> bool:
    """Whether two NDArrays share memory (a write through one shows in the other)."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """Compare (nested tuples of) NDArrays element by element; ``None`` matches all."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def np_reduce(dat: np.ndarray, axis: Any, keepdims: bool, numpy_reduce_func: Any) -> np.ndarray:
    """Reduce ``dat`` over ``axis`` (int, list or None) one axis at a time."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def collapse_sum_like(a: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``a`` down to the broadcastable ``shape`` (the gradient of a broadcast)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    ndim_diff = len(a.shape) - len(shape)
    axes = list(range(ndim_diff))
    for i, s in enumerate(shape):
        if s != a.shape[i + ndim_diff]:
            assert s == 1
            axes.append(i + ndim_diff)
    return np.sum(a, axis=tuple(axes)).reshape(shape)
