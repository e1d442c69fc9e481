"""Worker programs for the launcher tests: ``python dist_scenarios.py SCENARIO OUTDIR``.

Each worker writes ``OUTDIR/<scenario>-<rank>.json`` (or ``.npz``) for the test to check.
"""
import json
import os
import signal
import sys
import time

import numpy as np

import plexnet as mx
from plexnet.base import PlexnetError as KVStoreError  # kvstore errors, or the engine error carrying one

# the data the references are computed on ("big" is sliced when the bound is small); this
# script's folder is on sys.path when it runs as ``python dist_scenarios.py``
from dist_scenarios_ref import SHAPES, STEPS, grads, init_vals  # noqa: E402

scenario, outdir = sys.argv[1], sys.argv[2]


def out(name, **data):
    path = os.path.join(outdir, f"{name}-{kv.rank}.npz")
    np.savez(path, **data)


def train(kv, start, stop, sleep=0.0, split=False):
    keys = sorted(SHAPES)
    outs = [mx.nd.zeros(SHAPES[k]) for k in keys]
    for step in range(start, stop):
        g = grads(kv.rank, step)
        if split:  # two "devices" holding halves of the gradient
            kv.push(keys, [[mx.nd.array(g[k] * 0.25), mx.nd.array(g[k] * 0.75, ctx=mx.cpu(1))] for k in keys])
        else:
            kv.push(keys, [mx.nd.array(g[k]) for k in keys])
        kv.pull(keys, out=outs)
        mx.nd.waitall()
        if sleep:
            time.sleep(sleep)
    return {k: o.asnumpy() for k, o in zip(keys, outs)}


def make_opt():
    return mx.optimizer.SGD(learning_rate=0.05, momentum=0.9, wd=0.01, rescale_grad=0.5)


if scenario == "sync":
    kvtype = os.environ["KVTYPE"]
    kv = mx.kv.create(kvtype)
    # no optimizer yet: pulls give the sum of every worker's pushes
    kv.init("sum", mx.nd.zeros((3,)))
    kv.push("sum", [mx.nd.ones((3,)) * (kv.rank + 1), mx.nd.ones((3,), ctx=mx.cpu(1))])
    s = mx.nd.zeros((3,))
    kv.pull("sum", out=s)
    s = s.asnumpy()
    iv = init_vals()
    kv.init(sorted(SHAPES), [mx.nd.array(iv[k]) for k in sorted(SHAPES)])
    kv.set_optimizer(make_opt())
    res = train(kv, 0, STEPS, split=kvtype == "dist_device_sync")
    out("sync", sum=s, transport=np.array(kv._transport.dp is not None), plane=np.array(kv._transport.plane), **res)

elif scenario == "compress":
    kv = mx.kv.create("dist_sync")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.4})
    kv.init("g", mx.nd.zeros((1000,)))
    o = mx.nd.zeros((1000,))
    pulled = []
    for step in range(4):
        kv.push("g", mx.nd.array(grads(kv.rank, step)["big"].reshape(-1)[:1000] * 0.5))
        kv.pull("g", out=o)
        pulled.append(o.asnumpy())
    out("compress", pulled=np.stack(pulled))

elif scenario == "async":
    kv = mx.kv.create("dist_async")
    rng = np.random.default_rng(kv.rank)
    A = np.random.default_rng(0).standard_normal((200, 10)).astype(np.float32)
    x_true = np.arange(10, dtype=np.float32) / 10
    y = A @ x_true
    kv.init(0, mx.nd.zeros((10,)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
    x = mx.nd.zeros((10,))
    for it in range(150):
        kv.pull(0, out=x)
        xv = x.asnumpy()
        idx = rng.integers(0, 200, 32)
        g = A[idx].T @ (A[idx] @ xv - y[idx]) / 32
        kv.push(0, mx.nd.array(g))
    kv.pull(0, out=x)
    xv = x.asnumpy()
    out("async", loss=np.array(float(np.mean((A @ xv - y) ** 2))), x=xv)

elif scenario == "kill_worker":
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((10,)))
    o = mx.nd.zeros((10,))
    for step in range(3):
        kv.push(0, mx.nd.ones((10,)))
        kv.pull(0, out=o)
        o.wait_to_read()
    if kv.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    t0 = time.time()
    err = ""
    try:
        for step in range(1000):
            kv.push(0, mx.nd.ones((10,)))
            kv.pull(0, out=o)
            o.wait_to_read()
    except KVStoreError as e:
        err = str(e)
    except Exception as e:  # noqa: BLE001
        err = f"{type(e).__name__}: {e}"
    with open(os.path.join(outdir, "kill_worker-0.json"), "w") as f:
        json.dump({"error": err, "seconds": time.time() - t0}, f)
    sys.exit(3)

elif scenario == "uneven":
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((10,)))
    o = mx.nd.zeros((10,))
    n = 2 if kv.rank == 0 else 1
    err, t0 = "", time.time()
    try:
        for _ in range(n):
            kv.push(0, mx.nd.ones((10,)))
            kv.pull(0, out=o)
            o.wait_to_read()
    except KVStoreError as e:
        err = str(e)
    with open(os.path.join(outdir, f"uneven-{kv.rank}.json"), "w") as f:
        json.dump({"error": err, "seconds": time.time() - t0}, f)

elif scenario in ("resume1", "resume2"):
    kv = mx.kv.create("dist_sync")
    iv = init_vals()
    kv.init(sorted(SHAPES), [mx.nd.array(iv[k]) for k in sorted(SHAPES)])
    kv.set_optimizer(make_opt())
    start = kv.resumed_round
    if scenario == "resume1":
        res = train(kv, 0, 4)
        kv.barrier()
        if kv.rank == 0:  # kill the server that holds key "w" (SIGKILL its process)
            info = kv.server_info()
            os.kill(info[0]["pid"], signal.SIGKILL)
        err = ""
        try:
            train(kv, 4, STEPS)
        except KVStoreError as e:
            err = str(e)
        with open(os.path.join(outdir, f"resume1-{kv.rank}.json"), "w") as f:
            json.dump({"error": err}, f)
        sys.exit(4)
    res = train(kv, start, STEPS)
    out("resume2", start=np.array(start), **res)

elif scenario == "hold":  # for the launcher clean-up tests: report, then wait to be killed
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((4,)))
    info = {"pid": os.getpid(), "job": os.environ.get("PLEXNET_LAUNCH_JOB", ""),
            "ray_temp_dir": os.environ.get("PLEXNET_RAY_TEMP_DIR", ""), "kv_job": os.environ["PLEXNET_KV_JOB"]}
    tmp = os.path.join(outdir, f"hold-{kv.rank}.tmp")
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.replace(tmp, os.path.join(outdir, f"hold-{kv.rank}.json"))
    time.sleep(120)
    sys.exit(5)

elif scenario == "hang":  # rank 1 stops itself (SIGSTOP) while rank 0 waits for its push
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((4,)))
    o = mx.nd.zeros((4,))
    if kv.rank == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    kv.push(0, mx.nd.ones((4,)))
    kv.pull(0, out=o)
    o.wait_to_read()

elif scenario == "noop":  # one round, then a clean exit
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((4,)))
    o = mx.nd.zeros((4,))
    kv.push(0, mx.nd.ones((4,)))
    kv.pull(0, out=o)
    o.wait_to_read()
