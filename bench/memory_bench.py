"""Executor memory planning on ResNet-18 (CIFAR-style), compared with MXNet 1.9.1.

ResNet-18 for 32x32 inputs (3x3 stem, no max-pool, four stages of two basic blocks,
1x1 projection shortcuts, global average pooling, FC-10, SoftmaxOutput), batch 32,
float32, built through the ``sym`` API of the library under test. For inference
(``grad_req='null'``) and training (``grad_req='write'``) it prints the bytes the
executor plans for its internal values (forward values, outputs, internal gradients:
what MXNet's ``debug_str()`` counts as "Total N MB allocated") and the naive total (every
value in a buffer of its own).

    python bench/memory_bench.py                 # plexnet figures
    python bench/memory_bench.py --compare       # + MXNet's, run in its venv
    python bench/memory_bench.py --anchor        # + anchor_bench mlp/lenet, both libraries
    /work/mxvenv/bin/python bench/memory_bench.py --lib mxnet   # MXNet's figures alone

``--shortcut-bn`` puts BatchNorm on the projection shortcuts (MXNet: 24 / 158 MB).
MXNet is run with ``MXNET_SUBGRAPH_BACKEND=NONE`` so that its MKLDNN subgraph fusion does
not change the graph being planned.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_PY = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")
ANCHOR = os.environ.get("PLEXNET_ANCHOR_BENCH", "/work/shared/bench/anchor_bench.py")
MB = 1 << 20


def resnet18(sym, num_classes: int = 10, shortcut_bn: bool = False):
    def conv_bn(x, nf, stride, name, act=True, k=3, pad=1):
        x = sym.Convolution(x, num_filter=nf, kernel=(k, k), stride=(stride, stride), pad=(pad, pad),
                            no_bias=True, name=name + "_conv")
        x = sym.BatchNorm(x, fix_gamma=False, eps=1e-5, momentum=0.9, name=name + "_bn")
        if act:
            x = sym.Activation(x, act_type="relu", name=name + "_relu")
        return x

    def block(x, nf, stride, name, proj):
        h = conv_bn(x, nf, stride, name + "_a")
        h = conv_bn(h, nf, 1, name + "_b", act=False)
        if not proj:
            sc = x
        elif shortcut_bn:
            sc = conv_bn(x, nf, stride, name + "_sc", act=False, k=1, pad=0)
        else:
            sc = sym.Convolution(x, num_filter=nf, kernel=(1, 1), stride=(stride, stride), no_bias=True,
                                 name=name + "_sc")
        return sym.Activation(h + sc, act_type="relu", name=name + "_out")

    data = sym.Variable("data")
    x = conv_bn(data, 64, 1, "stem")
    nin = 64
    for i, nf in enumerate([64, 128, 256, 512]):
        for j in range(2):
            stride = 2 if (i > 0 and j == 0) else 1
            x = block(x, nf, stride, f"s{i}b{j}", proj=(stride != 1 or nin != nf))
            nin = nf
    x = sym.Pooling(x, global_pool=True, pool_type="avg", kernel=(4, 4), name="gap")
    x = sym.Flatten(x, name="flat")
    x = sym.FullyConnected(x, num_hidden=num_classes, name="fc")
    return sym.SoftmaxOutput(x, name="softmax")


def figures(lib: str, shortcut_bn: bool, batch: int = 32) -> dict:
    mx = importlib.import_module(lib)
    net = resnet18(mx.sym, shortcut_bn=shortcut_bn)
    out: dict = {"lib": lib}
    for mode, req in (("inference", "null"), ("training", "write")):
        t = time.perf_counter()
        exe = net.simple_bind(mx.cpu(), data=(batch, 3, 32, 32), grad_req=req)
        bind_s = time.perf_counter() - t
        if lib == "mxnet":
            m = re.search(r"Total (\d+) MB allocated", exe.debug_str())
            out[mode] = {"total_mb_reported": int(m.group(1)) if m else None, "bind_s": bind_s}
        else:
            r = exe.memory_report()
            out[mode] = {"planned_bytes": r["planned_bytes"], "naive_bytes": r["naive_bytes"],
                         "peak_live_bytes": r["peak_live_bytes"], "strategy": r["strategy"],
                         "alternatives": r["alternatives"], "num_inplace": r["num_inplace"],
                         "total_mb_reported": r["planned_bytes"] // MB, "bind_s": bind_s,
                         "arg_bytes": r["arg_bytes"], "grad_bytes": r["grad_bytes"], "aux_bytes": r["aux_bytes"]}
            exe.plan.verify(exe.exec_graph.entries)
    return out


def mxnet_figures(shortcut_bn: bool) -> dict | None:
    if not os.path.exists(MXNET_PY):
        return None
    cmd = [MXNET_PY, os.path.abspath(__file__), "--lib", "mxnet", "--json"] + (["--shortcut-bn"] if shortcut_bn else [])
    env = dict(os.environ, MXNET_SUBGRAPH_BACKEND="NONE")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        print("MXNet run failed:\n" + r.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def anchor(lib_py: str, lib: str, only: str) -> dict[str, float]:
    env = dict(os.environ, MXNET_SUBGRAPH_BACKEND="NONE") if lib == "mxnet" else dict(os.environ)
    r = subprocess.run([lib_py, ANCHOR, "--lib", lib, "--only", only], capture_output=True, text=True, env=env,
                       timeout=1200)
    res = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                res[parts[0]] = float(parts[1])
            except ValueError:
                pass
    if r.returncode != 0:
        print(f"anchor bench ({lib}) failed:\n" + r.stderr[-2000:], file=sys.stderr)
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", default="plexnet")
    p.add_argument("--shortcut-bn", action="store_true", help="BatchNorm on projection shortcuts")
    p.add_argument("--compare", action="store_true", help="also run MXNet 1.9.1 (its venv) for its figures")
    p.add_argument("--anchor", action="store_true", help="also run anchor_bench.py mlp,lenet for both libraries")
    p.add_argument("--anchor-rounds", type=int, default=3, help="alternating rounds; the best time of each counts")
    p.add_argument("--json", action="store_true", help="print one JSON line (used for the MXNet subprocess)")
    a = p.parse_args()
    f = figures(a.lib, a.shortcut_bn)
    if a.json:
        print(json.dumps(f))
        return
    variant = "projection shortcuts with BatchNorm" if a.shortcut_bn else "1x1 projection shortcuts"
    print(f"ResNet-18 CIFAR (32x32, batch 32, float32, {variant}) -- {a.lib}")
    mxf = mxnet_figures(a.shortcut_bn) if a.compare else None
    for mode in ("inference", "training"):
        r = f[mode]
        if a.lib == "mxnet":
            print(f"  {mode:9s}: Total {r['total_mb_reported']} MB allocated (MXNet debug_str)")
            continue
        line = (f"  {mode:9s}: planned {r['planned_bytes'] / MB:8.2f} MB, naive {r['naive_bytes'] / MB:8.2f} MB, "
                f"ratio {r['planned_bytes'] / r['naive_bytes']:.3f}, peak of live values "
                f"{r['peak_live_bytes'] / MB:.2f} MB, strategy {r['strategy']} "
                f"({', '.join(f'{k} {v / MB:.2f} MB' for k, v in r['alternatives'].items())}), "
                f"{r['num_inplace']} in-place")
        print(line)
        if mxf is not None:
            m = mxf[mode]["total_mb_reported"]
            ours = r["planned_bytes"] / MB
            print(f"  {'':9s}  MXNet 1.9.1: Total {m} MB allocated -> plexnet/MXNet {ours / m:.3f} "
                  f"(MXNet reports whole MB, rounded down)")
        print(f"  {'':9s}  (outside the plan: args {r['arg_bytes'] / MB:.2f} MB, grads {r['grad_bytes'] / MB:.2f} MB, "
              f"aux {r['aux_bytes'] / MB:.3f} MB; bind {r['bind_s'] * 1e3:.0f} ms)")
    if a.anchor:
        best: dict[str, dict[str, float]] = {"plexnet": {}, "mxnet": {}}
        for _ in range(a.anchor_rounds):
            for lib, py in (("mxnet", MXNET_PY), ("plexnet", sys.executable)):
                if lib == "mxnet" and not os.path.exists(MXNET_PY):
                    continue
                for k, v in anchor(py, lib, "mlp,lenet").items():
                    best[lib][k] = min(v, best[lib].get(k, float("inf")))
        print(f"anchor_bench mlp/lenet (best of {a.anchor_rounds} alternating runs):")
        for k in sorted(best["plexnet"]):
            pv, mv = best["plexnet"][k], best["mxnet"].get(k)
            ratio = f", plexnet/MXNet {pv / mv:.2f}" if mv else ""
            print(f"  {k}: plexnet {pv:.3f} ms" + (f", MXNet {mv:.3f} ms" if mv else "") + ratio)


if __name__ == "__main__":
    main()
