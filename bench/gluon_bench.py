"""Gluon train-step benchmark: plexnet vs Apache MXNet 1.9.1, in one sitting.

A Gluon MLP and LeNet train step (forward under ``autograd.record``, softmax
cross-entropy loss, backward, ``Trainer.step`` with SGD), imperative and hybridized,
plus the same network through ``Module`` (the symbolic path). Each library runs in its
own subprocess (MXNet from ``--mxnet-python``, with ``OPENBLAS_CORETYPE=SkylakeX``);
for every configuration the two libraries run back to back (order alternating by round),
``--rounds`` times, and the median of the per-run bests is reported, as ratios
plexnet / MXNet.

    python bench/gluon_bench.py                 # both libraries, ratios
    python bench/gluon_bench.py --lib plexnet   # one library, JSON lines

Targets (issue 16): hybridized <= 0.8x MXNet's hybridized; imperative <= 0.7x MXNet's
imperative; plexnet hybridized within 1.1x of plexnet's Module on the same network.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CONFIGS = [("mlp", "imperative"), ("mlp", "hybridized"), ("mlp", "module"),
           ("lenet", "imperative"), ("lenet", "hybridized"), ("lenet", "module")]


def _gluon_net(mx, kind):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        if kind == "mlp":
            net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(10))
        else:
            net.add(nn.Conv2D(8, 5, activation="tanh"), nn.MaxPool2D(2, 2), nn.Conv2D(16, 5, activation="tanh"),
                    nn.MaxPool2D(2, 2), nn.Flatten(), nn.Dense(64, activation="tanh"), nn.Dense(10))
    return net


def _symbol(mx, kind):
    s = mx.sym
    x = s.Variable("data")
    if kind == "mlp":
        h = s.Activation(s.FullyConnected(x, num_hidden=256, name="fc1"), act_type="relu")
        h = s.Activation(s.FullyConnected(h, num_hidden=128, name="fc2"), act_type="relu")
        h = s.FullyConnected(h, num_hidden=10, name="fc3")
    else:
        h = s.Activation(s.Convolution(x, kernel=(5, 5), num_filter=8, name="c1"), act_type="tanh")
        h = s.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = s.Activation(s.Convolution(h, kernel=(5, 5), num_filter=16, name="c2"), act_type="tanh")
        h = s.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = s.Activation(s.FullyConnected(s.Flatten(h), num_hidden=64, name="fc1"), act_type="tanh")
        h = s.FullyConnected(h, num_hidden=10, name="fc2")
    return s.SoftmaxOutput(h, name="softmax")


def run_one(lib: str, kind: str, mode: str, steps: int, batch: int) -> float:
    """Seconds per train step (best of three timed blocks of ``steps``)."""
    import numpy as np
    mx = __import__(lib)
    rng = np.random.RandomState(0)
    shape = (batch, 784) if kind == "mlp" else (batch, 1, 28, 28)
    x = mx.nd.array(rng.rand(*shape).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 10, batch).astype(np.float32))
    if mode == "module":
        mod = mx.mod.Module(_symbol(mx, kind), context=mx.cpu())
        mod.bind([("data", shape)], [("softmax_label", (batch,))])
        mod.init_params(mx.init.Xavier())
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01})
        batch_ = mx.io.DataBatch([x], [y])

        def step():
            mod.forward(batch_, is_train=True)
            mod.backward()
            mod.update()
    else:
        net = _gluon_net(mx, kind)
        net.initialize(mx.init.Xavier(), ctx=mx.cpu())
        if mode == "hybridized":
            net.hybridize(static_alloc=True, static_shape=True)
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        if mode == "hybridized":
            loss_fn.hybridize(static_alloc=True, static_shape=True)
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        ag = mx.autograd

        def step():
            with ag.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch)
    for _ in range(5):
        step()
    mx.nd.waitall()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        mx.nd.waitall()
        best = min(best, (time.perf_counter() - t) / steps)
    return best


def op_costs(lib: str, n: int = 200) -> dict:
    """Microseconds per element-wise operator (8x8 arrays, ``y = y * w + 1`` chained):
    not recording, recording, and backward per recorded operator."""
    mx = __import__(lib)
    nd, ag = mx.nd, mx.autograd
    x = nd.ones((8, 8))
    x.attach_grad()
    w = nd.ones((8, 8))

    def chain():
        y = x
        for _ in range(n):
            y = y * w + 1
        return y
    res = {}
    for rec in (False, True):
        best = float("inf")
        for _ in range(5):
            nd.waitall()
            t = time.perf_counter()
            if rec:
                with ag.record():
                    chain()
            else:
                chain()
            nd.waitall()
            best = min(best, time.perf_counter() - t)
        res["record" if rec else "plain"] = best / (2 * n) * 1e6
    best = float("inf")
    for _ in range(5):
        with ag.record():
            y = chain()
        nd.waitall()
        t = time.perf_counter()
        y.backward()
        nd.waitall()
        best = min(best, time.perf_counter() - t)
    res["backward"] = best / (2 * n) * 1e6
    return res


def alternate(lib: str = "plexnet", kinds=("mlp", "lenet"), rounds: int = 8, steps: int = 15,
              batch: int = 64) -> dict:
    """One process: imperative / hybridized / Module alternated ``rounds`` times, best
    seconds per step of each (steadier than medians on a shared machine)."""
    import numpy as np
    mx = __import__(lib)
    res = {}
    for kind in kinds:
        rng = np.random.RandomState(0)
        shape = (batch, 784) if kind == "mlp" else (batch, 1, 28, 28)
        x = mx.nd.array(rng.rand(*shape).astype(np.float32))
        y = mx.nd.array(rng.randint(0, 10, batch).astype(np.float32))
        fns = {}
        for mode in ("imperative", "hybridized", "module"):
            if mode == "module":
                mod = mx.mod.Module(_symbol(mx, kind), context=mx.cpu())
                mod.bind([("data", shape)], [("softmax_label", (batch,))])
                mod.init_params(mx.init.Xavier())
                mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01})
                b = mx.io.DataBatch([x], [y])

                def step(mod=mod, b=b):
                    mod.forward(b, is_train=True)
                    mod.backward()
                    mod.update()
            else:
                net = _gluon_net(mx, kind)
                net.initialize(mx.init.Xavier())
                loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
                if mode == "hybridized":
                    net.hybridize()
                    loss_fn.hybridize()
                tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

                def step(net=net, loss_fn=loss_fn, tr=tr, x=x, y=y):
                    with mx.autograd.record():
                        loss = loss_fn(net(x), y)
                    loss.backward()
                    tr.step(batch)
            fns[mode] = step
        best = dict.fromkeys(fns, float("inf"))
        for _ in range(rounds):
            for mode, f in fns.items():
                for _ in range(3):
                    f()
                mx.nd.waitall()
                t = time.perf_counter()
                for _ in range(steps):
                    f()
                mx.nd.waitall()
                best[mode] = min(best[mode], (time.perf_counter() - t) / steps)
        res[kind] = best
    return res


def _child(lib: str, python: str, steps: int, batch: int, only: str | None = None) -> dict:
    env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX", MXNET_ENGINE_TYPE=os.environ.get("MXNET_ENGINE_TYPE",
                                                                                            "ThreadedEnginePerDevice"))
    cmd = [python, os.path.abspath(__file__), "--lib", lib, "--steps", str(steps), "--batch", str(batch)]
    if only:
        cmd += ["--only", only]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{lib} run failed:\n{out.stderr[-3000:]}")
    res = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            res[(d["net"], d["mode"])] = d["s_per_step"]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", choices=["plexnet", "mxnet"])
    ap.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="one configuration, e.g. mlp:hybridized")
    ap.add_argument("--ops", action="store_true", help="per-operator costs (with --lib: that library only)")
    ap.add_argument("--alternate", action="store_true",
                    help="imperative / hybridized / Module alternated within one process per library (best of)")
    a = ap.parse_args()
    if a.alternate:
        if a.lib:
            print(json.dumps({k: v for k, v in alternate(a.lib, steps=a.steps, batch=a.batch).items()}))
            return
        # both libraries, each in its own process, twice in turn; the best of each
        env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX")
        best: dict = {}
        for lib, py in (("plexnet", sys.executable), ("mxnet", a.mxnet_python)) * 2:
            out = subprocess.run([py, os.path.abspath(__file__), "--alternate", "--lib", lib, "--steps",
                                  str(a.steps), "--batch", str(a.batch)], env=env, capture_output=True, text=True,
                                 timeout=1200)
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            if not line:
                raise RuntimeError(f"{lib} run failed:\n{out.stderr[-3000:]}")
            for kind, modes in json.loads(line[-1]).items():
                for mode, v in modes.items():
                    key = (lib, kind, mode)
                    best[key] = min(best.get(key, float("inf")), v)
        print(f"{'net':6} {'mode':11} {'plexnet ms':>11} {'mxnet ms':>10} {'ratio':>7}")
        for kind in ("mlp", "lenet"):
            for mode in ("imperative", "hybridized", "module"):
                p, m = best[("plexnet", kind, mode)] * 1e3, best[("mxnet", kind, mode)] * 1e3
                print(f"{kind:6} {mode:11} {p:11.3f} {m:10.3f} {p / m:7.2f}")
            h, mo = best[("plexnet", kind, "hybridized")], best[("plexnet", kind, "module")]
            print(f"plexnet {kind}: hybridized / Module = {h / mo:.2f}")
        return
    if a.ops:
        if a.lib:
            print(json.dumps(op_costs(a.lib)))
            return
        env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX")
        for lib, py in (("plexnet", sys.executable), ("mxnet", a.mxnet_python)):
            out = subprocess.run([py, os.path.abspath(__file__), "--ops", "--lib", lib], env=env,
                                 capture_output=True, text=True, timeout=600)
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            print(lib, line[-1] if line else out.stderr[-2000:])
        return
    configs = [tuple(a.only.split(":"))] if a.only else CONFIGS
    if a.lib:
        for kind, mode in configs:
            s = run_one(a.lib, kind, mode, a.steps, a.batch)
            print(json.dumps({"lib": a.lib, "net": kind, "mode": mode, "s_per_step": s}), flush=True)
        return
    # the libraries alternate per configuration, so a burst of load elsewhere on the
    # machine hits both sides of a ratio
    runs: dict = {"plexnet": {c: [] for c in CONFIGS}, "mxnet": {c: [] for c in CONFIGS}}
    for r in range(a.rounds):
        for c in CONFIGS:
            pair = (("plexnet", sys.executable), ("mxnet", a.mxnet_python))
            for lib, py in (pair if r % 2 == 0 else pair[::-1]):
                runs[lib][c].append(_child(lib, py, a.steps, a.batch, ":".join(c))[c])
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    med = {lib: {c: statistics.median(v) for c, v in rs.items()} for lib, rs in runs.items()}
    print(f"{'net':6} {'mode':11} {'plexnet ms':>11} {'mxnet ms':>10} {'ratio':>7}")
    for c in CONFIGS:
        p, m = med["plexnet"][c] * 1e3, med["mxnet"][c] * 1e3
        print(f"{c[0]:6} {c[1]:11} {p:11.3f} {m:10.3f} {p / m:7.2f}")
    for kind in ("mlp", "lenet"):
        h, mod = med["plexnet"][(kind, "hybridized")], med["plexnet"][(kind, "module")]
        print(f"plexnet {kind}: hybridized / Module = {h / mod:.2f}")


if __name__ == "__main__":
    main()
