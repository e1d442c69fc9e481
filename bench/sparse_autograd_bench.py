"""Sparse training steps under autograd: plexnet vs Apache MXNet 1.9.1, in one sitting.

Two imperative steps with row_sparse gradients and lazy SGD (docs/sparse.md "Autograd"):
a linear model ``square(dot(csr, w) - y).sum()`` (csr 512 x 200k, 50 entries a row) with
``w.attach_grad(stype='row_sparse')``, and ``Embedding(200k x 16, sparse_grad=True)`` over
4096 ids, and Gluon's ``contrib.nn.SparseEmbedding`` (row_sparse weight through
``row_sparse_data``) with a Trainer step. Each library runs in its own subprocess (MXNet from ``--mxnet-python`` with
``OPENBLAS_CORETYPE=SkylakeX``), alternating round by round; per round the best of 5
repeats of 10 steps; reported: the median over rounds, ms per step.

    python bench/sparse_autograd_bench.py --rounds 3
    python bench/sparse_autograd_bench.py --lib plexnet      # one library, JSON lines
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def run(lib: str) -> None:
    if lib == "mxnet":
        import mxnet as mx  # type: ignore[import-not-found]
    else:
        import plexnet as mx
    nd = mx.nd
    rng = np.random.RandomState(0)
    B, D, per_row = 512, 200_000, 50
    cols = np.sort(rng.randint(0, D, size=(B, per_row)), axis=1)
    csr = nd.sparse.csr_matrix((rng.rand(B * per_row).astype("float32"), cols.reshape(-1),
                                np.arange(B + 1) * per_row), shape=(B, D))
    label = nd.array(rng.rand(B, 1))
    w = nd.zeros((D, 1))
    w.attach_grad(stype="row_sparse")
    emb = nd.zeros((D, 16))
    emb.attach_grad(stype="row_sparse")
    idx = nd.array(rng.randint(0, D, size=(B, 8)))

    def linear() -> None:
        with mx.autograd.record():
            loss = nd.square(nd.sparse.dot(csr, w) - label).sum()
        loss.backward()
        nd.sparse.sgd_update(w, w.grad, lr=0.01, out=w)

    def embedding() -> None:
        with mx.autograd.record():
            loss = nd.Embedding(idx, emb, input_dim=D, output_dim=16, sparse_grad=True).sum()
        loss.backward()
        nd.sparse.sgd_update(emb, emb.grad, lr=0.01, out=emb)

    net = mx.gluon.contrib.nn.SparseEmbedding(D, 16)
    net.initialize(mx.init.Uniform())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})

    def gluon_sparse_embedding() -> None:
        with mx.autograd.record():
            loss = net(idx).sum()
        loss.backward()
        trainer.step(B)

    for name, f in (("linear dot(csr 512x200k)", linear), ("Embedding(200k x 16) 4096 ids", embedding),
                    ("gluon contrib SparseEmbedding + Trainer", gluon_sparse_embedding)):
        for _ in range(3):
            f()
        nd.waitall()
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(10):
                f()
            nd.waitall()
            best = min(best, (time.perf_counter() - t) / 10)
        print(json.dumps({"lib": lib, "case": name, "ms": best * 1e3}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", choices=["plexnet", "mxnet"])
    ap.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.lib:
        run(args.lib)
        return
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        order = ["plexnet", "mxnet"] if r % 2 == 0 else ["mxnet", "plexnet"]
        for lib in order:
            exe = args.mxnet_python if lib == "mxnet" else sys.executable
            env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX", MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0")
            out = subprocess.run([exe, __file__, "--lib", lib], capture_output=True, text=True, env=env, timeout=600)
            for line in out.stdout.splitlines():
                if line.startswith("{"):
                    d = json.loads(line)
                    times.setdefault((d["case"], lib), []).append(d["ms"])
    print("| case | plexnet ms | MXNet ms | ratio |\n|---|---|---|---|")
    for case in dict.fromkeys(c for c, _ in times):
        p, m = statistics.median(times[(case, "plexnet")]), statistics.median(times[(case, "mxnet")])
        print(f"| {case} | {p:.2f} | {m:.2f} | {p / m:.2f} |")


if __name__ == "__main__":
    main()
