"""Per-operator profile of a symbolic training step (forward + backward, no optimizer).

Builds the workload from ``../shared/bench/anchor_bench.py`` (``resnet18``, ``lenet`` or
``mlp``), binds it for training and runs it node by node on the synchronous engine with
bulking off, so the profiler sees each node as its own engine operation. Prints the
total milliseconds per step of each operator type, forward and backward apart:

    python bench/op_profile.py --net resnet18 --steps 3

Synchronous execution hides the overlap two engine workers give, so the total is a
little above the step time ``anchor_bench.py`` reports; the split is what it is for.
"""
from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

os.environ.setdefault("PLEXNET_ENGINE_TYPE", "NaiveEngine")
os.environ.setdefault("PLEXNET_EXEC_BULK_EXEC_TRAIN", "0")

from _anchor_nets import SHAPES, bind_for_training, load_nets  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--net", default="resnet18", choices=sorted(SHAPES))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=0, help="also print the N slowest nodes")
    args = ap.parse_args()
    import plexnet as mx
    net = load_nets("plexnet")[args.net]()
    dshape = SHAPES[args.net]
    exe, _ = bind_for_training(mx, net, dshape)
    op_of = {n["name"]: n["op"] for n in __import__("json").loads(net.tojson())["nodes"]}

    def step() -> None:
        exe.forward(is_train=True)
        exe.backward()
        mx.nd.waitall()

    step()
    mx.profiler.set_config(aggregate_stats=True)
    mx.profiler.set_state("run")
    t = time.perf_counter()
    for _ in range(args.steps):
        step()
    wall = (time.perf_counter() - t) / args.steps * 1e3
    mx.profiler.set_state("stop")
    agg = mx.profiler._prof.recorder.aggregate()
    agg = agg.get("Time", agg)  # MXNet's {"Time": {domain: ...}, "Memory": ...} form
    rows: dict = defaultdict(lambda: [0.0, 0])
    per_node: dict = defaultdict(float)
    for ops in agg.values():
        for label, s in ops.items():
            per_node[label] += s["total"] / args.steps
            phase, _, node = label.partition(":")
            base = node.split("_backward")[0] if node not in op_of else node
            kind = op_of.get(base, op_of.get(node, "sum" if phase == "backward" else node))
            r = rows[(kind, phase)]
            r[0] += s["total"] / args.steps
            r[1] += s["count"] // args.steps
    total = sum(r[0] for r in rows.values())
    print(f"{args.net}: {wall:.1f} ms per step (forward+backward, synchronous), {total:.1f} ms in operators")
    print(f"{'operator':<22}{'phase':<10}{'nodes':>6}{'ms/step':>10}{'share':>8}")
    for (kind, phase), (ms, n) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        print(f"{kind:<22}{phase:<10}{n:>6}{ms:>10.2f}{ms / total * 100:>7.1f}%")
    for label, ms in sorted(per_node.items(), key=lambda kv: -kv[1])[:args.nodes]:
        print(f"  {label:<40}{ms:>10.2f}")


if __name__ == "__main__":
    main()
