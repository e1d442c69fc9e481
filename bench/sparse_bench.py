#!/usr/bin/env python3
"""Sparse workloads, plexnet vs MXNet 1.9.1, alternated round by round (one sitting).

    python bench/sparse_bench.py --rounds 5            # both libraries, ratios per workload
    python bench/sparse_bench.py --lib plexnet --once  # one library, one round (JSON line)

MXNet runs from /work/mxvenv (OPENBLAS_CORETYPE=SkylakeX); each round runs every workload
in a fresh subprocess per library and reports the best of --repeat timings inside it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

MXPY = os.environ.get("MXNET_PYTHON", "/work/mxvenv/bin/python")


def workloads(mx):
    sp = mx.nd.sparse
    rng = np.random.default_rng(0)
    n, d, k = 20000, 20000, 64
    nnz = 200000
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    dense_small = rng.standard_normal((2000, 2000)).astype("float32")
    dense_small[rng.random((2000, 2000)) > 0.01] = 0
    c = mx.nd.array(dense_small).tostype("csr")
    del c
    # a 20000 x 20000 csr with ~200k entries, built from sorted unique coordinates
    key = np.unique(rows * d + cols)
    r, cc = key // d, key % d
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    big = sp.csr_matrix((rng.standard_normal(key.shape[0]).astype("float32"), cc, indptr), shape=(n, d))
    w = mx.nd.array(rng.standard_normal((d, k)).astype("float32"))
    v = mx.nd.array(rng.standard_normal((n, k)).astype("float32"))
    dn = mx.nd.array(dense_small)
    weight = mx.nd.ones((100000, 64))
    g = sp.row_sparse_array((np.ones((256, 64), "float32"), np.sort(rng.choice(100000, 256, replace=False))),
                            shape=(100000, 64))
    return {
        "dot(csr 20k x 20k, 200k nnz; dense x64)": lambda: sp.dot(big, w).wait_to_read(),
        "dot(csr.T, dense x64) -> row_sparse": lambda: sp.dot(big, v, transpose_a=True).wait_to_read(),
        "tostype csr (2000x2000, 1%)": lambda: dn.tostype("csr").wait_to_read(),
        "dense -> csr -> dense (2000x2000, 1%)": lambda: dn.tostype("csr").tostype("default").wait_to_read(),
        "sgd_update lazy (256 of 100k rows x64)":
            lambda: (sp.sgd_update(weight, g, lr=0.1, wd=0.01, out=weight), weight.wait_to_read()),
    }


def run_once(lib, repeat):
    if lib == "mxnet":
        import mxnet as mx
    else:
        import plexnet as mx
    res = {}
    for name, fn in workloads(mx).items():
        fn()  # warm up
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        res[name] = best * 1e3
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=["mxnet", "plexnet"])
    ap.add_argument("--once", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    if a.once:
        run_once(a.lib, a.repeat)
        return
    times = {"plexnet": [], "mxnet": []}
    env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX", MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0")
    for _ in range(a.rounds):
        for lib, py in (("plexnet", sys.executable), ("mxnet", MXPY)):
            out = subprocess.run([py, __file__, "--lib", lib, "--once", "--repeat", str(a.repeat)], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            times[lib].append(json.loads(out))
    print(f"{'workload':45s} {'plexnet ms':>11s} {'mxnet ms':>9s} {'ratio':>6s}  (best of rounds; median ratio)")
    for name in times["plexnet"][0]:
        p = [t[name] for t in times["plexnet"]]
        m = [t[name] for t in times["mxnet"]]
        ratios = [x / y for x, y in zip(p, m)]
        print(f"{name:45s} {min(p):11.2f} {min(m):9.2f} {statistics.median(ratios):6.2f}")


if __name__ == "__main__":
    main()
