"""Pushed functions run with numpy's floating-point errors ignored, as MXNet's kernels,
which never warn: under ``-W error`` a RuntimeWarning would otherwise become the
operation's error. The pushing thread's own numpy settings stay as they were."""
from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import plexnet as mx
import pytest
from plexnet.context import cpu
from plexnet.engine import FnProperty


def test_pushed_functions_ignore_floating_point_errors(eng: Any) -> None:
    v = eng.new_var()
    seen: list = []

    def op(rc: Any) -> None:
        seen.append((np.log(np.float32(0)), np.sqrt(np.float64(-1)), np.geterr()["divide"]))

    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eng.push_sync(op, cpu(), (), (v,))
        eng.wait_for_var(v)
    assert np.geterr() == before
    assert len(seen) == 1
    log0, sqrt_neg, divide = seen[0]
    assert log0 == -np.inf and np.isnan(sqrt_neg) and divide == "ignore"


def test_inline_operations_restore_the_pushing_threads_settings(eng: Any) -> None:
    """INLINE operations run on the pushing thread: its settings are back afterwards,
    also when the function raises."""
    v = eng.new_var()
    with np.errstate(divide="raise"):
        eng.push_sync(lambda rc: np.log(np.float32(0)), cpu(), (), (v,), FnProperty.INLINE)
        eng.wait_for_var(v)

        def boom(rc: Any) -> None:
            raise ValueError("boom")
        w = eng.new_var()
        eng.push_sync(boom, cpu(), (), (w,), FnProperty.INLINE)
        with pytest.raises(Exception, match="boom"):
            eng.wait_for_var(w)
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.log(np.float32(0))


def test_nd_operators_do_not_warn_as_mxnet() -> None:
    """MXNet 1.9.1: ``log(0) = -inf``, ``x / 0`` and ``sqrt(-1)`` silently; the gradient of
    ``log`` at 0 is ``inf``."""
    a = mx.nd.array([0.0, 1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(mx.nd.log(a).asnumpy(), [-np.inf, 0, np.nan])
        np.testing.assert_array_equal((a / 0).asnumpy(), [np.nan, np.inf, -np.inf])
        np.testing.assert_array_equal(mx.nd.sqrt(a).asnumpy(), [0, 1, np.nan])
        x = mx.nd.array([0.0, 2.0])
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.log(x)
        y.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), [np.inf, 0.5])


def test_a_user_thread_keeps_its_own_settings() -> None:
    """Worker threads' settings do not leak into other threads."""
    out: list = []

    def user() -> None:
        mx.nd.log(mx.nd.array([0.0])).wait_to_read()
        out.append(np.geterr()["divide"])
    t = threading.Thread(target=user)
    t.start()
    t.join(30)
    assert out == [np.geterr()["divide"]]
