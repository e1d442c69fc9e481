"""LeNet / MLP operators (ops-basic's numpy implementations) forward + backward, timed
in one process under three thread settings, alternated repetition by repetition so that
a shared host's load swings hit all three alike:

* ``blas2``: one thread calls the kernel, OpenBLAS on 2 threads (the engine's choice for
  one awake worker on a quiet 2-core machine, before the batch split);
* ``split``: the kernel's batch halves on two threads, one BLAS thread each (``_split``);
* ``blas1``: one thread, one BLAS thread (the engine's choice on a loaded machine).

    python bench/lenet_ops_bench.py [--reps 40] [--only conv1,conv2,...]

Prints best and median milliseconds (forward + backward) per operator and setting,
``cpu``: the median over repetitions of the largest on-CPU time of any one thread of the
process (``/proc/self/task/*/schedstat``), and ``calm(n)``: the best of the ``n``
repetitions during which the process's threads waited for a CPU less than 2% of the
time (the host's other processes left both cores alone). On a host that other processes load, wall
times mostly measure the load; the busiest thread's CPU time is the critical path a
quiet 2-core machine would see (a waiting thread here blocks, and OpenBLAS's spinning
threads count as busy, so it does not flatter the split).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

LAYERS = {
    "conv1": ("Convolution", dict(kernel=(5, 5), num_filter=20), (64, 1, 28, 28)),
    "tanh1": ("Activation", dict(act_type="tanh"), (64, 20, 24, 24)),
    "pool1": ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (64, 20, 24, 24)),
    "conv2": ("Convolution", dict(kernel=(5, 5), num_filter=50), (64, 20, 12, 12)),
    "tanh2": ("Activation", dict(act_type="tanh"), (64, 50, 8, 8)),
    "pool2": ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (64, 50, 8, 8)),
    "fc1": ("FullyConnected", dict(num_hidden=500), (64, 800)),
    "mlp_fc1": ("FullyConnected", dict(num_hidden=256), (128, 784)),
    "mlp_relu1": ("Activation", dict(act_type="relu"), (128, 256)),
    "mlp_fc2": ("FullyConnected", dict(num_hidden=128), (128, 256)),
}


def make(name, kw, dshape, rng):
    import plexnet
    from plexnet.engine.runctx import run_context
    from plexnet.operator import OpContext, OpReqType
    cpu = plexnet.cpu()
    reg = plexnet.plugins.registries().operators
    prop = reg.create_property(name, kw)
    ins, outs, _ = prop.infer_shape([dshape] + [None] * (len(prop.list_arguments()) - 1))
    x = [rng.uniform(-1, 1, s).astype("f4") for s in ins]
    y = [np.empty(s, "f4") for s in outs]
    op = reg.create_operator(prop, cpu) if hasattr(reg, "create_operator") else prop.create_operator(cpu)
    rc = run_context(cpu, "bench")
    res = plexnet.resource.get()
    fctx = OpContext(True, rc, [res.request(cpu, r) for r in prop.forward_resource(ins)])
    bctx = OpContext(True, rc, [res.request(cpu, r) for r in prop.backward_resource(ins)])
    W = OpReqType.write
    dy = [rng.uniform(-1, 1, s).astype("f4") for s in outs]
    dx = [np.empty_like(a) for a in x]

    def step():
        op.forward(fctx, x, [W] * len(y), y, [])
        op.backward(bctx, dy, x, y, [W] * len(x), dx, [])
    return step, type(op).__name__


def thread_cpu() -> dict:
    """(on-CPU, waiting-for-a-CPU) nanoseconds of each thread of this process."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                run, wait = f.read().split()[:2]
                out[tid] = (int(run), int(wait))
        except OSError:
            pass
    return out


def busiest(before: dict, after: dict) -> float:
    return max((after[t][0] - before.get(t, (0, 0))[0] for t in after), default=0) * 1e-9


def waited(before: dict, after: dict) -> float:
    """Seconds this process's threads spent runnable but not running (other processes
    had the cores)."""
    return sum(after[t][1] - before.get(t, (0, 0))[1] for t in after) * 1e-9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    from threadpoolctl import ThreadpoolController
    from plexnet_ops_basic.nn import _split
    from plexnet.engine import blas
    ctl = ThreadpoolController()
    rng = np.random.default_rng(0)
    names = [n for n in LAYERS if not args.only or n in args.only.split(",")]
    blas.enabled()
    setters = blas._setters

    def threads(n):
        for s in setters:
            s(n)
        blas._current = n

    configs = {"blas2": (False, 2), "split": (True, 2), "blas1": (False, 1)}
    for n in names:
        step, opname = make(*LAYERS[n], rng)
        times = {c: [] for c in configs}
        cpu = {c: [] for c in configs}
        calm = {c: [] for c in configs}
        for c, (sp, t) in configs.items():
            _split._ENABLED = sp
            threads(t)
            step()
        for _ in range(args.reps):
            for c, (sp, t) in configs.items():
                _split._ENABLED = sp
                threads(t)
                c0 = thread_cpu()
                t0 = time.perf_counter()
                step()
                dt = time.perf_counter() - t0
                c1 = thread_cpu()
                times[c].append(dt)
                cpu[c].append(busiest(c0, c1))
                if waited(c0, c1) < 0.02 * dt:
                    calm[c].append(dt)
        threads(2)
        row = "  ".join(f"{c} {min(v) * 1e3:6.2f}/{np.median(v) * 1e3:6.2f}/{np.median(cpu[c]) * 1e3:6.2f}"
                        f"/{(min(calm[c]) * 1e3 if calm[c] else float('nan')):6.2f}({len(calm[c])})"
                        for c, v in times.items())
        print(f"{n:10s} fwd+bwd ms best/median/cpu/calm(n): {row}", flush=True)
    del ctl


if __name__ == "__main__":
    main()
