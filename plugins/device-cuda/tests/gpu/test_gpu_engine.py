"""The per-device engine on gpu contexts: each worker has its device current and its
own stream current on its thread, and operations receive that stream in RunContext."""
from __future__ import annotations

import threading

import pytest

import plexnet as mx
from plexnet import engine
from plexnet.backends import get_backend
from plexnet.engine.base import FnProperty

from _gpu_suite import needs_two, num_gpus

pytestmark = pytest.mark.timeout(60)

PROPS = [FnProperty.NORMAL, FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU, FnProperty.GPU_PRIORITIZED]


def _probe(eng, ctx, prop, seen, lock):
    xp = get_backend(ctx).xp

    def fn(rc):
        with lock:
            seen.append({"ctx": ctx, "prop": prop, "thread": threading.current_thread().name,
                         "stream": rc.stream, "current": xp.cuda.get_current_stream(),
                         "device": xp.cuda.Device().id, "xp": rc.xp is xp, "rc_ctx": rc.ctx,
                         "result_device": xp.ones((2,)).device.id})
    eng.push_sync(fn, ctx, (), (eng.new_var(),), prop)


def test_workers_have_their_device_and_stream_current():
    old = engine.get().kind
    eng = engine.set_engine("ThreadedEnginePerDevice")
    try:
        seen, lock = [], threading.Lock()
        ctxs = [mx.gpu(i) for i in range(min(2, num_gpus()))]
        for ctx in ctxs:
            for prop in PROPS:
                for _ in range(3):
                    _probe(eng, ctx, prop, seen, lock)
        eng.wait_for_all()
    finally:
        engine.set_engine(old)
    assert len(seen) == len(ctxs) * len(PROPS) * 3
    for s in seen:
        assert s["stream"] is not None, s
        assert s["stream"] == s["current"], s          # the worker's stream is current on its thread
        assert s["device"] == s["ctx"].device_id, s     # ... and so is its device
        assert s["result_device"] == s["ctx"].device_id, s
        assert s["xp"] and s["rc_ctx"] == s["ctx"]
        assert str(s["ctx"]) in s["thread"], s          # a worker of that device
    by_kind: dict = {}
    for s in seen:
        kind = "copy" if s["prop"] in (FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU) else \
            "priority" if s["prop"] == FnProperty.GPU_PRIORITIZED else "compute"
        by_kind.setdefault((s["ctx"], kind), set()).add(s["stream"].ptr)
    # one stream per worker: at most as many streams per kind as the pool has workers
    import os
    be = get_backend("gpu")
    workers = {"compute": be.compute_workers, "copy": be.copy_workers,
               "priority": int(os.environ.get("PLEXNET_GPU_PRIORITY_NTHREADS", "1"))}
    for (ctx, kind), streams in by_kind.items():
        assert 1 <= len(streams) <= workers[kind], (ctx, kind, streams)
    assert len({p for ps in by_kind.values() for p in ps}) == len(by_kind)  # all distinct


@needs_two
def test_shared_pool_engine_switches_devices_per_operation():
    old = engine.get().kind
    eng = engine.set_engine("ThreadedEngine")
    try:
        seen, lock = [], threading.Lock()
        for dev in (0, 1, 0, 1):
            _probe(eng, mx.gpu(dev), FnProperty.NORMAL, seen, lock)
            eng.wait_for_all()
    finally:
        engine.set_engine(old)
    for s in seen:
        assert s["device"] == s["ctx"].device_id and s["result_device"] == s["ctx"].device_id
        assert s["stream"] == s["current"]


def test_naive_engine_activates_the_device_on_the_pushing_thread():
    old = engine.get().kind
    eng = engine.set_engine("NaiveEngine")
    try:
        seen, lock = [], threading.Lock()
        for dev in range(min(2, num_gpus())):
            _probe(eng, mx.gpu(dev), FnProperty.NORMAL, seen, lock)
    finally:
        engine.set_engine(old)
    for s in seen:
        assert s["device"] == s["ctx"].device_id and s["result_device"] == s["ctx"].device_id
        assert s["stream"] is not None and s["stream"] == s["current"]
