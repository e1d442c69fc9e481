"""The profiler: engine observers, Chrome trace output, aggregate statistics."""
from __future__ import annotations

import json
import threading

import pytest

import plexnet as mx
from plexnet import engine, profiler

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _stopped_profiler(tmp_path):
    profiler.set_config(filename=str(tmp_path / "profile.json"), profile_all=False, profile_memory=False,
                        continuous_dump=False, aggregate_stats=False)
    profiler.set_state("stop")
    profiler._prof.recorder.clear()
    yield
    profiler.set_state("stop")
    profiler._prof.recorder.clear()


def _work():
    a = mx.nd.ones((64, 64))
    b = a + a
    c = b * 3
    d = mx.nd.dot(c, a) if hasattr(mx.nd, "dot") else c
    d.wait_to_read()
    mx.nd.waitall()
    return d


def test_observer_installed_only_while_running():
    e = engine.get()
    assert profiler._prof.recorder not in e.observers
    profiler.set_state("run")
    assert profiler.get_state() == "run"
    assert profiler._prof.recorder in engine.get().observers
    assert profiler._observers() == [profiler._prof.recorder]
    profiler.set_state("stop")
    assert profiler._prof.recorder not in engine.get().observers
    assert profiler._observers() == []


def test_trace_structure(tmp_path):
    fname = str(tmp_path / "trace.json")
    profiler.set_config(filename=fname, profile_all=True)
    profiler.set_state("run")
    _work()
    profiler.set_state("stop")
    assert profiler.dump() == fname
    with open(fname) as f:
        trace = json.load(f)  # valid JSON
    events = trace["traceEvents"]
    ops = [e for e in events if e["ph"] == "X" and e.get("cat") == "operator"]
    assert len(ops) >= 3
    names = {e["name"] for e in ops}
    assert any("mul" in n for n in names) and any("add" in n or "plus" in n for n in names), names
    for e in ops:
        assert isinstance(e["name"], str) and e["name"]
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    meta = [e for e in events if e["ph"] == "M"]
    pnames = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert "cpu(0)" in pnames.values()
    for e in ops:  # every op's process and thread are named
        assert e["pid"] in pnames and (e["pid"], e["tid"]) in tnames
    # events are in time order; memory counters came with profile_all
    ts = [e["ts"] for e in events if e["ph"] != "M"]
    assert ts == sorted(ts)
    assert any(e["ph"] == "C" and e["name"] == "memory" for e in events)
    # dump(finished=True) ended the session; a new run starts a fresh trace
    profiler.set_state("run")
    assert len(profiler._prof.recorder) == 0


def test_nothing_recorded_when_stopped():
    _work()
    assert len(profiler._prof.recorder) == 0
    profiler.set_state("run")
    profiler.pause()
    _work()
    assert len(profiler._prof.recorder) == 0
    profiler.resume()
    _work()
    assert len(profiler._prof.recorder) > 0


def test_dumps_table_and_json():
    assert profiler.dumps() == ""          # as MXNet: no statistics without aggregate_stats
    profiler.set_config(aggregate_stats=True)
    profiler.set_state("run")
    _work()
    profiler.set_state("stop")
    table = profiler.dumps()
    assert "\noperator\n" in table and "Total Count" in table and "Avg Time (ms)" in table
    stats = json.loads(profiler.dumps(format="json", sort_by="count"))
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}     # MXNet 1.9.1's layout
    ops = stats["Time"]["operator"]
    for s in ops.values():
        assert s["Count"] >= 1 and s["Min"] <= s["Avg"] <= s["Max"] + 1e-3
    profiler.dumps(reset=True)
    assert "\noperator\n" not in profiler.dumps()
    with pytest.raises(ValueError):
        profiler.dumps(format="xml")
    with pytest.raises(ValueError):
        profiler.dumps(sort_by="name")


def test_config_validation():
    with pytest.raises(ValueError, match="unknown option"):
        profiler.set_config(bogus=1)
    with pytest.raises(ValueError):
        profiler.set_state("go")
    with pytest.raises(profiler.MXNetError, match="set_kvstore_handle"):  # no dist kvstore given
        profiler.set_state("run", profile_process="server")
    profiler.set_config(profile_memory="false", aggregate_stats="1")
    assert profiler._prof.config["aggregate_stats"] is True
    assert profiler._prof.config["profile_memory"] is False


def test_user_annotations(tmp_path):
    profiler.set_state("run")
    dom = profiler.Domain("train")
    task = dom.new_task("step")
    task.start()
    _work()
    task.stop()
    with profiler.scope("forward"):
        pass
    ctr = dom.new_counter("batches", 0)
    ctr += 2
    dom.new_marker("epoch_end").mark()
    profiler.set_state("stop")
    events = profiler._prof.recorder.events()
    assert any(e["ph"] == "X" and e["name"] == "step" and e["cat"] == "train" for e in events)
    assert any(e["ph"] == "X" and e["name"] == "forward" for e in events)
    assert [e["args"]["batches"] for e in events if e["ph"] == "C" and e["name"] == "batches"] == [0, 2]
    assert any(e["ph"] == "i" and e["name"] == "epoch_end" for e in events)


def test_threads_get_their_own_tid():
    rec = profiler.ChromeTraceRecorder()
    ctx = mx.cpu(0)

    def worker(name):
        for _ in range(5):
            rec.on_end(rec.on_start("op_" + name, ctx, name))
    ts = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    events = rec.events()
    ops = [e for e in events if e["ph"] == "X"]
    assert len(ops) == 15
    assert len({e["tid"] for e in ops}) == 3
    assert len({e["pid"] for e in ops}) == 1
    gpu = rec.on_start("k", mx.gpu(1), "gpu-stream")
    rec.on_end(gpu)
    assert "gpu(1)" in {e["args"]["name"] for e in rec.events() if e["name"] == "process_name"}


def test_plugin_observer_through_hook():
    """A plugin's ``plexnet_engine_observers`` hook is installed next to the profiler."""
    from plexnet.plugins import get_manager

    class Counting(profiler.EngineObserver):
        def __init__(self):
            self.n = 0

        def on_start(self, name, ctx, worker):
            return name

        def on_end(self, token):
            self.n += 1

    obs = Counting()

    class Plugin:
        @mx.hookimpl
        def plexnet_engine_observers(self):
            return [obs]

    pm_pluggy = get_manager().pm  # the pluggy PluginManager
    plugin = Plugin()
    pm_pluggy.register(plugin, name="test-observer-plugin")
    try:
        engine.refresh_observers()
        _work()
        assert obs.n > 0
    finally:
        pm_pluggy.unregister(plugin)
        engine.refresh_observers()
    n = obs.n
    _work()
    assert obs.n == n


def test_continuous_dump(tmp_path):
    import time
    fname = tmp_path / "cont.json"
    profiler.set_config(filename=str(fname), continuous_dump=True, dump_period=0.05)
    profiler.set_state("run")
    _work()
    deadline = time.time() + 5
    while not fname.exists() and time.time() < deadline:
        time.sleep(0.02)
    profiler.set_state("stop")
    assert fname.exists()
    json.loads(fname.read_text())
