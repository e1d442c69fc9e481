"""The Gluon train steps of ``/work/shared/bench/anchor_bench.py``, imperative and
hybridized, against the same network on the symbolic executor, plexnet vs MXNet 1.9.1.

The configurations are the anchor's: an MLP 784-256-128-10 at batch 128 and a LeNet
(conv 20 and 50 filters, dense 500) at batch 64, ``Uniform(0.07)``, SGD, softmax
cross-entropy; the loss is *not* hybridized (as in the anchor); the symbolic step is
the anchor's ``train`` (``simple_bind`` with ``grad_req='write'``, which also computes
the data gradient, and ``w -= lr / batch * g`` per parameter).

One process per library runs the three steps (``sym``, ``hyb``, ``imp``) alternated,
``--rounds`` blocks each, and reports the best block of each (a shared machine only
ever adds time). The parent runs the libraries' processes alternately, ``--repeat``
times, and prints the median over processes of those bests and the ratios::

    python bench/gluon_anchor_bench.py                         # both libraries
    python bench/gluon_anchor_bench.py --lib plexnet --kind mlp   # one process, JSON

Targets (issue 16): hybridized <= 0.8x MXNet's hybridized; imperative <= 0.7x MXNet's
imperative; plexnet hybridized within 1.1x of plexnet's executor step.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MODES = ("sym", "hyb", "imp")
BATCH = {"mlp": 128, "lenet": 64}
STEPS = {"mlp": 20, "lenet": 5}


def _symbol(mx, kind):
    sym = mx.sym
    data = sym.Variable("data")
    if kind == "mlp":
        h = sym.Activation(sym.FullyConnected(data, num_hidden=256, name="fc1"), act_type="relu")
        h = sym.Activation(sym.FullyConnected(h, num_hidden=128, name="fc2"), act_type="relu")
        h = sym.FullyConnected(h, num_hidden=10, name="fc3")
    else:
        h = sym.Activation(sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1"), act_type="tanh")
        h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
        h = sym.Activation(sym.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2"), act_type="tanh")
        h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
        h = sym.Activation(sym.FullyConnected(sym.Flatten(h), num_hidden=500, name="fc1"), act_type="tanh")
        h = sym.FullyConnected(h, num_hidden=10, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


def _gluon_net(mx, kind):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    if kind == "mlp":
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(10))
    else:
        net.add(nn.Conv2D(20, 5, activation="tanh"), nn.MaxPool2D(2, 2), nn.Conv2D(50, 5, activation="tanh"),
                nn.MaxPool2D(2, 2), nn.Flatten(), nn.Dense(500, activation="tanh"), nn.Dense(10))
    return net


def make_step(mx, kind: str, mode: str):
    """The anchor's train step of ``kind`` in ``mode``, data cycling over 4 batches."""
    import numpy as np
    nd = mx.nd
    batch = BATCH[kind]
    dshape = (batch, 784) if kind == "mlp" else (batch, 1, 28, 28)
    rng = np.random.RandomState(0)
    xs = rng.rand(4, *dshape).astype("f4")
    ys = rng.randint(0, 10, (4, batch)).astype("f4")
    if mode == "sym":
        exe = _symbol(mx, kind).simple_bind(ctx=mx.cpu(), data=dshape, grad_req="write")
        for name, arr in exe.arg_dict.items():
            if name not in ("data", "softmax_label"):
                arr[:] = rng.uniform(-0.07, 0.07, arr.shape)
        params = [n for n in exe.arg_dict if n not in ("data", "softmax_label")]

        def step(i):
            exe.arg_dict["data"][:] = xs[i % 4]
            exe.arg_dict["softmax_label"][:] = ys[i % 4]
            exe.forward(is_train=True)
            exe.backward()
            for n in params:
                w = exe.arg_dict[n]
                w -= 0.1 / batch * exe.grad_dict[n]
        return step
    net = _gluon_net(mx, kind)
    net.initialize(mx.init.Uniform(0.07))
    if mode == "hyb":
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    X = [nd.array(x) for x in xs]
    Y = [nd.array(y) for y in ys]
    ag = mx.autograd

    def step(i):
        with ag.record():
            loss = loss_fn(net(X[i % 4]), Y[i % 4])
        loss.backward()
        trainer.step(batch)
    return step


def phases(lib: str, kind: str, steps: int = 60) -> dict:
    """Calling-thread CPU time (``time.thread_time``, which other processes' load does
    not inflate the way it inflates wall time) of each phase of a Gluon step, median
    over ``steps`` steps, in microseconds: what the front end costs, apart from the
    kernels that the engine's workers run meanwhile."""
    import statistics as st
    mx = __import__(lib)
    out = {}
    for mode in ("imp", "hyb"):
        net = _gluon_net(mx, kind)
        net.initialize(mx.init.Uniform(0.07))
        if mode == "hyb":
            net.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        import numpy as np
        batch = BATCH[kind]
        dshape = (batch, 784) if kind == "mlp" else (batch, 1, 28, 28)
        x = mx.nd.array(np.random.RandomState(0).rand(*dshape).astype("f4"))
        y = mx.nd.array(np.arange(batch) % 10)
        rec = {k: [] for k in ("forward", "loss", "backward", "trainer", "total")}
        tt = time.thread_time
        for i in range(steps + 5):
            mx.nd.waitall()
            t0 = tt()
            with mx.autograd.record():
                o = net(x)
                t1 = tt()
                loss = loss_fn(o, y)
                t2 = tt()
            loss.backward()
            t3 = tt()
            trainer.step(batch)
            t4 = tt()
            if i >= 5:
                for k, v in zip(rec, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
                    rec[k].append(v * 1e6)
        out[mode] = {k: round(st.median(v), 1) for k, v in rec.items()}
    return out


def op_costs(lib: str, n: int = 2000) -> dict:
    """Microseconds per ``nd.FullyConnected`` / ``nd.Activation`` call on 4x8 arrays
    (best of 5 blocks of ``n``), not recording and recording: the per-call cost of the
    generic operator path an imperative Gluon step is made of."""
    mx = __import__(lib)
    nd = mx.nd
    x, w, b = nd.ones((4, 8)), nd.ones((6, 8)), nd.zeros((6,))

    def best(f):
        t_best = float("inf")
        for _ in range(5):
            nd.waitall()
            t = time.perf_counter()
            for _ in range(n):
                f()
            nd.waitall()
            t_best = min(t_best, (time.perf_counter() - t) / n)
        return round(t_best * 1e6, 1)
    fc = (lambda: nd.FullyConnected(x, w, b, num_hidden=6))
    act = (lambda: nd.Activation(x, act_type="relu"))
    res = {"FullyConnected": best(fc), "Activation": best(act)}
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        res["FullyConnected recording"] = best(fc)
        res["Activation recording"] = best(act)
    return res


def blas_at_start(kind: str, mode: str, steps: int = 20) -> dict:
    """plexnet only: for each engine operation of at least 100 us in ``steps`` pipelined
    steps, the BLAS thread count in force when it started (the engine's policy, with its
    load check switched off so that the quiet-machine policy is what shows): a GEMM that
    starts while a second worker is awake gets one thread instead of two."""
    import bisect
    import plexnet as mx
    from plexnet import profiler as prof
    from plexnet.engine import blas
    blas._busy_machine = lambda: False
    log: list = []
    apply = blas._apply

    def logged() -> None:
        apply()
        log.append((time.perf_counter_ns() / 1000.0, blas._current))
    blas._apply = logged
    step = make_step(mx, kind, mode)
    for i in range(5):
        step(i)
    mx.nd.waitall()
    import tempfile
    fn = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.set_config(filename=fn, profile_all=True)
    prof.set_state("run")
    log.clear()
    for i in range(steps):
        step(i)
    mx.nd.waitall()
    prof.set_state("stop")
    t0 = prof._prof.recorder.t0
    prof.dump()
    with open(fn) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e["dur"] >= 100]
    times = [t - t0 for t, _n in log]
    out: dict = {}
    for e in events:
        k = bisect.bisect_right(times, e["ts"]) - 1
        n = log[k][1] if k >= 0 else blas.blas_threads()
        out.setdefault(e["name"], {}).setdefault(str(n), 0)
        out[e["name"]][str(n)] += 1
    return out


def child(lib: str, kind: str, rounds: int) -> dict:
    """Best ms per step of each mode, the modes alternated ``rounds`` times."""
    mx = __import__(lib)
    fns = {m: make_step(mx, kind, m) for m in MODES}
    for f in fns.values():  # first calls: tracing, binding, lazy initialisation
        f(0)
        f(1)
    mx.nd.waitall()
    best = dict.fromkeys(MODES, float("inf"))
    steps = STEPS[kind]
    for _ in range(rounds):
        for m, f in fns.items():
            f(0)
            mx.nd.waitall()
            t = time.perf_counter()
            for i in range(steps):
                f(i)
            mx.nd.waitall()
            best[m] = min(best[m], (time.perf_counter() - t) / steps * 1e3)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", choices=["plexnet", "mxnet"])
    ap.add_argument("--kind", choices=["mlp", "lenet"])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3, help="processes per library and network")
    ap.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    ap.add_argument("--phases", action="store_true",
                    help="calling-thread CPU per phase of the Gluon steps (us), both libraries")
    ap.add_argument("--opcost", action="store_true", help="us per FullyConnected / Activation call, both libraries")
    ap.add_argument("--threads", action="store_true",
                    help="plexnet: BLAS threads in force at the start of each long operation (20 steps)")
    a = ap.parse_args()
    if a.threads:
        for kind in ([a.kind] if a.kind else ["mlp", "lenet"]):
            for mode in MODES:
                print(kind, mode, json.dumps(blas_at_start(kind, mode)), flush=True)
        return
    if a.opcost:
        if a.lib:
            print(json.dumps(op_costs(a.lib)))
            return
        env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX")
        for lib, py in (("plexnet", sys.executable), ("mxnet", a.mxnet_python)):
            out = subprocess.run([py, os.path.abspath(__file__), "--opcost", "--lib", lib], env=env,
                                 capture_output=True, text=True, timeout=600)
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            print(lib, line[-1] if line else out.stderr[-2000:])
        return
    if a.phases:
        if a.lib:
            print(json.dumps({k: phases(a.lib, k) for k in ([a.kind] if a.kind else ["mlp", "lenet"])}))
            return
        env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX")
        for lib, py in (("plexnet", sys.executable), ("mxnet", a.mxnet_python)):
            out = subprocess.run([py, os.path.abspath(__file__), "--phases", "--lib", lib], env=env,
                                 capture_output=True, text=True, timeout=900)
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            if not line:
                raise RuntimeError(f"{lib} failed:\n{out.stderr[-3000:]}")
            for kind, modes in json.loads(line[-1]).items():
                for mode, ph in modes.items():
                    print(f"{lib:8} {kind:6} {mode}  " + "  ".join(f"{k} {v:7.1f}" for k, v in ph.items()))
        return
    if a.lib:
        for kind in ([a.kind] if a.kind else ["mlp", "lenet"]):
            print(json.dumps({"lib": a.lib, "kind": kind, "ms": child(a.lib, kind, a.rounds)}), flush=True)
        return
    env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX")
    res: dict = {}
    for r in range(a.repeat):
        for kind in ("mlp", "lenet"):
            order = [("plexnet", sys.executable), ("mxnet", a.mxnet_python)]
            for lib, py in (order if r % 2 == 0 else order[::-1]):
                out = subprocess.run([py, os.path.abspath(__file__), "--lib", lib, "--kind", kind, "--rounds",
                                      str(a.rounds)], env=env, capture_output=True, text=True, timeout=900)
                line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
                if not line:
                    raise RuntimeError(f"{lib} {kind} failed:\n{out.stderr[-3000:]}")
                for m, v in json.loads(line[-1])["ms"].items():
                    res.setdefault((lib, kind, m), []).append(v)
        print(f"repeat {r + 1}/{a.repeat} done", file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in res.items()}
    print(f"{'net':6} {'step':5} {'plexnet ms':>11} {'mxnet ms':>10} {'ratio':>7}   (median of {a.repeat} "
          f"processes, each the best of {a.rounds} blocks)")
    for kind in ("mlp", "lenet"):
        for m in MODES:
            p, x = med[("plexnet", kind, m)], med[("mxnet", kind, m)]
            print(f"{kind:6} {m:5} {p:11.3f} {x:10.3f} {p / x:7.2f}")
        hp = med[("plexnet", kind, "hyb")] / med[("plexnet", kind, "sym")]
        hm = med[("mxnet", kind, "hyb")] / med[("mxnet", kind, "sym")]
        print(f"plexnet {kind}: hybridized / executor = {hp:.2f}   (mxnet: {hm:.2f})")
    print("per process:", json.dumps({"/".join(k): [round(x, 3) for x in v] for k, v in res.items()}))


if __name__ == "__main__":
    main()
