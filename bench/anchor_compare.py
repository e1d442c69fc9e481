"""Run ../shared/bench/anchor_bench.py for plexnet and Apache MXNet 1.9.1 in one sitting,
round by round, and print each round's ratio against the targets of issues 16 and 17.

    python bench/anchor_compare.py --mxnet-python /work/mxvenv/bin/python --rounds 6 \\
        --only mlp,lenet,gluon_mlp_imperative,gluon_mlp_hybrid,gluon_lenet_imperative,gluon_lenet_hybrid

Each round runs plexnet (``--plexnet-runs`` processes, default 2: as many as MXNet gets),
then MXNet at its default threading, then MXNet with ``OMP_NUM_THREADS=2`` (faster for big
convolutions), both MXNet runs with ``OPENBLAS_CORETYPE=SkylakeX`` (its bundled OpenBLAS
does not recognise this CPU model). A round's ratio is plexnet's best value against the
better of the two MXNet values of that round (each library's best of two processes;
before session 11 plexnet had one): on a shared host both libraries' times swing 30-40 %
between processes, so ratios are only comparable within a round. The summary gives the
median and the range of the per-round ratios. Extra environment for plexnet (e.g.
``PLEXNET_PLUGINS_BLOCK=ops_torch`` for the default plugin set in a venv that has the
opt-in torch plugin) is passed through.

**OpenBLAS's kernel set.** Some of these machines set ``OPENBLAS_CORETYPE=Haswell`` (and
``OPENBLAS_L2_SIZE``) in every process's environment, for older OpenBLAS builds that
compute wrong results on their processors; numpy 2's OpenBLAS then runs its AVX2 kernels
on an AVX-512 CPU (float32 GEMMs 230-250 GFLOP/s against 420-470 with its own choice,
SkylakeX, on the session-11 host). MXNet runs with ``OPENBLAS_CORETYPE=SkylakeX`` (issue
17), so plexnet's runs drop both variables, as that machine's notes say to do for a
benchmark against a current numpy, and the run prints the kernel set plexnet's numpy then
runs. ``--host-openblas`` keeps the machine's variables for plexnet.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR = os.path.join(HERE, "..", "..", "shared", "bench", "anchor_bench.py")

#: workload -> (comparison, target ratio): "<=" for times, ">=" for rates (issues 16, 17 and earlier)
TARGETS: dict[str, tuple[str, float]] = {
    "tiny_chain_us_per_op": ("<=", 0.5), "tiny_indep_us_per_op": ("<=", 0.5),
    "mlp_train_ms_per_batch128": ("<=", 0.6), "lenet_train_ms_per_batch64": ("<=", 0.5),
    "resnet18_cifar_train_ms_per_batch32": ("<=", 0.8), "kv_local_push4_pull_GBps": (">=", 1.0),
    "gluon_mlp_imperative_ms_per_batch128": ("<=", 0.7), "gluon_lenet_imperative_ms_per_batch64": ("<=", 0.7),
    "gluon_mlp_hybrid_ms_per_batch128": ("<=", 0.8), "gluon_lenet_hybrid_ms_per_batch64": ("<=", 0.8),
}


#: the machine-wide OpenBLAS overrides dropped for plexnet's runs (see the module docstring)
HOST_OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def child_env(extra: dict[str, str], drop: tuple[str, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def openblas_core(python: str, env: dict[str, str]) -> str:
    """The OpenBLAS kernel set numpy runs under ``env`` (threadpoolctl's ``architecture``)."""
    code = ("import numpy, threadpoolctl\n"
            "print(','.join(str(i.get('architecture')) for i in threadpoolctl.threadpool_info()"
            " if i.get('internal_api') == 'openblas') or 'none')")
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    return res.stdout.strip() or "unknown (no threadpoolctl)"


def run_anchor(python: str, lib: str, only: str, env: dict[str, str]) -> dict[str, float]:
    cmd = [python, ANCHOR, "--lib", lib] + (["--only", only] if only else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                res[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return res


def better(name: str, *values: float | None) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    rate = TARGETS.get(name, ("<=", 0))[0] == ">="
    return max(vals) if rate else min(vals)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mxnet-python", default=os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="", help="comma-separated anchor workloads (default: all)")
    p.add_argument("--plexnet-runs", type=int, default=2,
                   help="plexnet processes per round, the best value taken (MXNet gets two: default and OMP 2)")
    p.add_argument("--host-openblas", action="store_true",
                   help="keep the machine's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for plexnet's runs")
    args = p.parse_args()
    px_env = child_env({}, () if args.host_openblas else HOST_OPENBLAS_VARS)
    mx_env = child_env({"OPENBLAS_CORETYPE": "SkylakeX"})
    mx_env2 = dict(mx_env, OMP_NUM_THREADS="2")
    print(f"OpenBLAS kernels: plexnet's numpy {openblas_core(sys.executable, px_env)}; "
          f"MXNet's OpenBLAS OPENBLAS_CORETYPE={mx_env['OPENBLAS_CORETYPE']}")
    ratios: dict[str, list[float]] = {}
    for r in range(1, args.rounds + 1):
        runs = [run_anchor(sys.executable, "plexnet", args.only, px_env) for _ in range(max(1, args.plexnet_runs))]
        px = {k: better(k, *(r.get(k) for r in runs)) for k in runs[0]}
        m1 = run_anchor(args.mxnet_python, "mxnet", args.only, mx_env)
        m2 = run_anchor(args.mxnet_python, "mxnet", args.only, mx_env2)
        print(f"round {r}: {os.getloadavg()[0]:.2f} load")
        for k, v in px.items():
            base = better(k, m1.get(k), m2.get(k))
            ratio = v / base if base else float("nan")
            ratios.setdefault(k, []).append(ratio)
            print(f"  {k:40s} plexnet {v:9.4g}  mxnet {m1.get(k, float('nan')):9.4g} / omp2 "
                  f"{m2.get(k, float('nan')):9.4g}  ratio {ratio:.2f}", flush=True)
    print(f"\n{'workload':40s} {'median':>7s} {'range':>13s}  target")
    for k, rs in ratios.items():
        op, goal = TARGETS.get(k, ("", 0.0))
        met = sum((x <= goal) if op == "<=" else (x >= goal) for x in rs) if op else 0
        tgt = f"{op} {goal} (met in {met}/{len(rs)} rounds)" if op else ""
        print(f"{k:40s} {statistics.median(rs):7.2f} {min(rs):6.2f}-{max(rs):<6.2f}  {tgt}")


if __name__ == "__main__":
    main()
