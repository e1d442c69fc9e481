"""Engine reliability promises (issue 13, points 1-4; docs/reliability.md, "Engine").

Anything that could hang runs in a subprocess with a timeout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any, Callable

import numpy as np
import pytest
from plexnet.base import EngineError
from plexnet.context import cpu
from plexnet.engine import ENGINE_TYPES, EngineOpError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_script(code: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=e, cwd=ROOT)


# -- 1. a worker thread never dies ------------------------------------------------------------
WORKER_SURVIVES = """
import threading
from plexnet import engine
from plexnet.context import cpu
from plexnet.engine import EngineOpError

class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("str() is broken too")

class Obs:
    def __init__(self, where):
        self.where = where
    def on_start(self, name, ctx, worker):
        if self.where == "start" and name == "victim":
            raise ValueError("observer on_start failed")
        return name
    def on_end(self, tok):
        if self.where == "end" and tok == "victim":
            raise ValueError("observer on_end failed")

def bad_str(rc):
    raise BadStr()

for kind in engine.ENGINE_TYPES:
    for case in ("start", "end", "badstr", "async-end"):
        eng = engine.create(kind)
        eng.set_observers([Obs(case.replace("async-", ""))] if case != "badstr" else [])
        v, w = eng.new_var(), eng.new_var()
        if case == "badstr":
            eng.push_sync(bad_str, cpu(), (), (v,), name="victim")
        elif case == "async-end":
            eng.push_async(lambda rc, done: threading.Thread(target=done).start(), cpu(), (), (v,),
                           name="victim")
        else:
            eng.push_sync(lambda rc: None, cpu(), (), (v,), name="victim")
        try:
            eng.wait_for_var(v)
            raise SystemExit(f"{kind}/{case}: no error")
        except EngineOpError as e:
            assert e.op_name == "victim", e
            assert str(e)                      # the message never raises
        out = []
        for i in range(20):                    # the (single) worker is alive
            eng.push_sync(lambda rc, i=i: out.append(i), cpu(), (), (w,), name="after")
        eng.wait_for_var(w)
        assert out == list(range(20)), (kind, case, out)
        try:
            eng.wait_for_all()
        except EngineOpError:
            pass
        eng.shutdown()
print("OK")
"""


def test_worker_survives_raising_observers_and_unprintable_exceptions() -> None:
    r = run_script(WORKER_SURVIVES, PLEXNET_CPU_WORKER_NTHREADS="1", MXNET_CPU_WORKER_NTHREADS="1")
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stderr[-3000:]


def test_unprintable_exception_names_itself(eng: Any) -> None:
    class BadStr(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    def fn(rc: Any) -> None:
        raise BadStr()
    v = eng.new_var()
    eng.push_sync(fn, cpu(), (), (v,), name="op")
    with pytest.raises(EngineOpError, match="BadStr: <str\\(\\) of the exception raised RuntimeError>"):
        eng.wait_for_var(v)


# -- 2. NaiveEngine: concurrent pushes, deep nesting ------------------------------------------
@pytest.mark.timeout(60)
def test_concurrent_read_modify_write_loses_no_update(eng: Any) -> None:
    v = eng.new_var()
    cell = [0]
    pair = [0, 0]
    torn: list = []

    def incr(rc: Any) -> None:
        x = cell[0]
        pair[0] = x + 1
        time.sleep(0)                         # invite another thread in
        pair[1] = x + 1
        cell[0] = x + 1

    def read(rc: Any) -> None:
        if pair[0] != pair[1]:
            torn.append(tuple(pair))

    def client() -> None:
        for _ in range(100):
            eng.push_sync(incr, cpu(), (v,), (v,), name="incr")
            eng.push_sync(read, cpu(), (v,), (), name="read")
    ts = [threading.Thread(target=client) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=50)
    eng.wait_for_all()
    assert cell[0] == 400 and not torn


@pytest.mark.timeout(60)
def test_500_nested_pushes(eng: Any) -> None:
    v = eng.new_var()
    depth = [0]

    def nest(rc: Any) -> None:
        depth[0] += 1
        if depth[0] < 500:
            eng.push_sync(nest, cpu(), (), (v,), name="nest")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        eng.push_sync(nest, cpu(), (), (v,), name="nest")
        eng.wait_for_all()
    finally:
        sys.setrecursionlimit(old)
    assert depth[0] == 500


# -- 3. poisoned variables --------------------------------------------------------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ENGINE_TYPES)
def test_failed_ndarray_stays_failed_until_rewritten(kind: str) -> None:
    import plexnet as mx
    from plexnet import engine
    old = engine.get().kind
    eng = engine.set_engine(kind)
    try:
        a = mx.nd.ones((4,))
        before = a + 1                             # pushed before the failure: fine

        def boom(rc: Any) -> None:
            raise ZeroDivisionError("injected")
        eng.push_sync(boom, a.context, (), (a._chunk.var,), name="boom")
        b = a * 2                                  # a dependent pushed before the report
        for arr in (a, b, a, b):                   # every read raises the original error
            with pytest.raises(EngineOpError, match="'boom'.*injected") as ei:
                arr.asnumpy()
            assert isinstance(ei.value.__cause__, ZeroDivisionError)
        c = b + a                                  # a dependent pushed after the report
        with pytest.raises(EngineOpError, match="injected"):
            c.asnumpy()
        a += 1                                     # reads a: skipped, a stays poisoned
        with pytest.raises(EngineOpError, match="injected"):
            a.wait_to_read()
        np.testing.assert_array_equal(before.asnumpy(), 2)
        a[:] = 5                                   # a successful write cures it
        np.testing.assert_array_equal(a.asnumpy(), 5)
        np.testing.assert_array_equal((a * 2).asnumpy(), 10)
        with pytest.raises(EngineOpError, match="injected"):
            b.asnumpy()                            # b was never rewritten
        engine.get().wait_for_all()                # every error was raised at a read
    finally:
        engine.set_engine(old)


# -- 4. exit behaviour, double completion -----------------------------------------------------
EXIT_WITH_PENDING_FAILURE = """
from plexnet import engine
from plexnet.context import cpu
eng = engine.get()
def explode(rc):
    raise KeyError("lost failure")
eng.push_sync(explode, cpu(), (), (eng.new_var(),), name="doomed_op")
print("script end")
"""


@pytest.mark.parametrize("kind", ENGINE_TYPES)
def test_unread_failure_at_exit_is_printed_and_exit_status_is_1(kind: str) -> None:
    r = run_script(EXIT_WITH_PENDING_FAILURE, PLEXNET_ENGINE_TYPE=kind)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "script end" in r.stdout                    # stdout flushed first
    assert "doomed_op" in r.stderr and "KeyError" in r.stderr and "lost failure" in r.stderr


def test_exit_status_opt_out_still_prints() -> None:
    r = run_script(EXIT_WITH_PENDING_FAILURE, PLEXNET_ENGINE_EXIT_ON_ERROR="0")
    assert r.returncode == 0 and "doomed_op" in r.stderr


def test_clean_exit_stays_silent() -> None:
    r = run_script("""
        from plexnet import engine
        from plexnet.context import cpu
        eng = engine.get()
        v = eng.new_var()
        eng.push_sync(lambda rc: (_ for _ in ()).throw(ValueError("seen")), cpu(), (), (v,), name="x")
        try:
            eng.wait_for_var(v)
        except Exception:
            pass
    """)
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.parametrize("kind", ("ThreadedEngine", "ThreadedEnginePerDevice"))
def test_shutdown_timeout_names_dropped_operations(kind: str) -> None:
    r = run_script("""
        import time
        from plexnet import engine
        from plexnet.context import cpu
        eng = engine.get()
        v = eng.new_var()
        eng.push_sync(lambda rc: time.sleep(30), cpu(), (), (v,), name="slow_op")
        eng.push_sync(lambda rc: None, cpu(), (v,), (), name="after_slow")
        time.sleep(0.2)
    """, timeout=25, PLEXNET_ENGINE_TYPE=kind, PLEXNET_ENGINE_SHUTDOWN_TIMEOUT="0.5")
    assert "shutdown timed out" in r.stderr and "slow_op" in r.stderr, r.stderr
    assert "1 more waiting" in r.stderr


@pytest.mark.timeout(30)
def test_on_complete_twice_is_a_clear_error(eng: Any) -> None:
    v = eng.new_var()
    second: list = []

    def afn(rc: Any, done: Callable[..., None]) -> None:
        done()
        try:
            done()
        except EngineError as e:
            second.append(e)
    eng.push_async(afn, cpu(), (), (v,), name="twice")
    with pytest.raises(EngineOpError, match="'twice'.*on_complete was called more than once"):
        eng.wait_for_all()
    assert len(second) == 1 and "more than once" in str(second[0])
    eng.wait_for_var(v)                          # the first completion stands


@pytest.mark.timeout(60)
def test_poisoned_auxiliary_state_stops_the_operator() -> None:
    import plexnet as mx
    from plexnet import engine
    data = mx.nd.ones((2, 3, 4, 4))
    gamma, beta = mx.nd.ones((3,)), mx.nd.zeros((3,))
    mean, var = mx.nd.zeros((3,)), mx.nd.ones((3,))

    def boom(rc: Any) -> None:
        raise ZeroDivisionError("aux poisoned")
    engine.get().push_sync(boom, mean.context, (), (mean._chunk.var,), name="boom_aux")
    out = mx.nd.BatchNorm(data, gamma, beta, mean, var)
    with pytest.raises(EngineOpError, match="boom_aux"):
        out.asnumpy()
    with pytest.raises(EngineOpError, match="boom_aux"):
        var.asnumpy()                              # the skipped operator's other aux state
    data.asnumpy()                                 # its plain inputs are untouched
    mean[:] = 0                                    # cured: the operator runs again
    var[:] = 1
    assert mx.nd.BatchNorm(data, gamma, beta, mean, var).asnumpy().shape == (2, 3, 4, 4)
    engine.get().wait_for_all()


# -- 5. switching engines with arrays and executors made under the old one -----------------------
SWITCH_WITH_OLD_ARRAYS = """
import numpy as np
import plexnet as mx
from plexnet import engine
nd, sym = mx.nd, mx.sym
h = sym.FullyConnected(sym.Variable("data"), num_hidden=256, name="fc1")
exe = sym.SoftmaxOutput(h, name="softmax").simple_bind(ctx=mx.cpu(), data=(128, 784), grad_req="write")
w, g = nd.ones((256, 784)), nd.ones((256, 784))   # large: pooled storage, freed through the engine
X = np.random.RandomState(0).rand(128, 784).astype("f4")
for kind in {kinds!r}:
    eng = engine.set_engine(kind)
    for _ in range(3):
        exe.arg_dict["data"][:] = X
        exe.forward(is_train=True)
        exe.backward()
        w -= 0.1 * g
        exe.arg_dict["fc1_weight"][:] -= 1e-3 * exe.grad_dict["fc1_weight"]
    nd.waitall()
    assert eng._pending == 0, (kind, eng._pending)
print("w", float(w.asnumpy()[0, 0]))
"""


def test_set_engine_with_arrays_and_executor_from_the_old_engine() -> None:
    # Every push used to go to the engine that created the first operand (or, for an
    # executor, the engine at bind time): after a switch, operations ran on the old
    # engine against variables of the new one, and waitall hung for ever.
    kinds = ["NaiveEngine", "ThreadedEnginePerDevice", "NaiveEngine", "ThreadedEngine", "NaiveEngine"]
    r = run_script(SWITCH_WITH_OLD_ARRAYS.format(kinds=kinds), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert abs(float(r.stdout.split()[-1]) - (1 - 0.1 * 15)) < 1e-5
