#!/usr/bin/env python3
"""Operator families against Apache MXNet 1.9.1, same inputs, same sitting.

    python bench/ops_bench.py                          # every family, plexnet vs MXNet, ratios
    python bench/ops_bench.py --family linalg random   # some families
    python bench/ops_bench.py --sizes 1000             # small inputs only

The driver runs this file once per library per round (plexnet with this interpreter,
MXNet with ``--mxnet-python``, default ``/work/mxvenv/bin/python`` with
``OPENBLAS_CORETYPE=SkylakeX``), alternating them ``--rounds`` times, and reports the
best time of each operator and ``ratio = plexnet / MXNet`` (below 1: plexnet is faster).
Each family is one function ``family_<name>(mx, n)`` returning ``[(label, fn), ...]``
for inputs of about ``n`` elements, written against the API both libraries share; add a
family by adding such a function. Timings on a shared machine are noisy: compare ratios
from one sitting, not across sittings.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

Case = tuple[str, Callable[[], Any]]


def _sync(r: Any) -> None:
    for x in (r if isinstance(r, (list, tuple)) else [r]):
        x.wait_to_read()


# -- families ------------------------------------------------------------------------------------
def family_linalg(mx: Any, n: int) -> list[Case]:
    """Batched linalg: ``n`` elements as a batch of k x k matrices (k=10 for 1e3, 250 for 1e6)."""
    k = 10 if n <= 10_000 else 250
    b = max(1, n // (k * k))
    rng = np.random.default_rng(0)
    a = rng.normal(size=(b, k, k))
    spd = a @ a.transpose(0, 2, 1) + k * np.eye(k)
    A = mx.nd.array(a, dtype="float32")
    S = mx.nd.array(spd, dtype="float32")
    L = mx.nd.linalg.potrf(S)
    L.wait_to_read()
    v = mx.nd.array(rng.normal(size=(b, k * (k + 1) // 2)), dtype="float32")
    la = mx.nd.linalg
    return [
        ("gemm", lambda: la.gemm(A, A, A, alpha=2.0, beta=0.5)),
        ("gemm2", lambda: la.gemm2(A, A, transpose_b=True)),
        ("trmm", lambda: la.trmm(L, A)),
        ("trsm", lambda: la.trsm(L, A)),
        ("syrk", lambda: la.syrk(A)),
        ("potrf", lambda: la.potrf(S)),
        ("potri", lambda: la.potri(L)),
        ("gelqf", lambda: la.gelqf(A)),
        ("syevd", lambda: la.syevd(S)),
        ("inverse", lambda: la.inverse(S)),
        ("det", lambda: la.det(S)),
        ("slogdet", lambda: la.slogdet(S)),
        ("sumlogdiag", lambda: la.sumlogdiag(S)),
        ("extractdiag", lambda: la.extractdiag(A)),
        ("makediag", lambda: la.makediag(A[:, 0, :])),
        ("extracttrian", lambda: la.extracttrian(A)),
        ("maketrian", lambda: la.maketrian(v)),
    ]


def family_random(mx: Any, n: int) -> list[Case]:
    """Samplers of ``n`` draws and densities of ``n`` samples."""
    r = mx.nd.random
    p = mx.nd.array(np.full((10, n // 10 // 10 or 1, 10), 0.1), dtype="float32")
    mu = mx.nd.zeros((10,))
    sd = mx.nd.ones((10,))
    x = mx.nd.array(np.random.default_rng(1).normal(size=(10, n // 10)), dtype="float32")
    pos = mx.nd.array(np.random.default_rng(2).uniform(0.5, 2, size=(10, n // 10)), dtype="float32")
    data = mx.nd.array(np.arange(n, dtype=np.float32).reshape(-1, 10))
    return [
        ("uniform", lambda: r.uniform(0, 1, shape=(n,))),
        ("normal", lambda: r.normal(0, 1, shape=(n,))),
        ("gamma", lambda: r.gamma(2.0, 1.0, shape=(n,))),
        ("exponential", lambda: r.exponential(1.0, shape=(n,))),
        ("poisson", lambda: r.poisson(4.0, shape=(n,))),
        ("negative_binomial", lambda: r.negative_binomial(3, 0.4, shape=(n,))),
        ("generalized_negative_binomial", lambda: r.generalized_negative_binomial(2.0, 0.5, shape=(n,))),
        ("randint", lambda: r.randint(0, 100, shape=(n,))),
        ("sample_normal", lambda: r.normal(mu, sd, shape=(n // 10,))),
        ("multinomial", lambda: r.multinomial(p.reshape((-1, 10)))),
        ("shuffle", lambda: r.shuffle(data)),
        ("pdf_normal", lambda: mx.nd.random_pdf_normal(x, mu, sd)),
        ("pdf_gamma", lambda: mx.nd.random_pdf_gamma(pos, sd * 2, sd)),
    ]


def family_image(mx: Any, n: int) -> list[Case]:
    """One HWC image of about ``n`` values (3 channels)."""
    side = max(4, int(round((n / 3) ** 0.5)))
    rng = np.random.default_rng(3)
    im = mx.nd.array(rng.integers(0, 256, (side, side, 3)), dtype="uint8")
    imf = mx.nd.array(rng.uniform(0, 255, (side, side, 3)), dtype="float32")
    t = mx.nd.image.to_tensor(imf)
    t.wait_to_read()
    im_ = mx.nd.image
    half = side // 2
    return [
        ("to_tensor", lambda: im_.to_tensor(im)),
        ("normalize", lambda: im_.normalize(t, mean=(0.5, 0.4, 0.3), std=(0.2, 0.2, 0.2))),
        ("resize_bilinear", lambda: im_.resize(im, size=(half, half))),
        ("resize_nearest", lambda: im_.resize(im, size=(half, half), interp=0)),
        ("crop", lambda: im_.crop(im, 1, 1, half, half)),
        ("flip_left_right", lambda: im_.flip_left_right(im)),
        ("random_brightness", lambda: im_.random_brightness(im, 0.5, 1.5)),
        ("random_contrast", lambda: im_.random_contrast(im, 0.5, 1.5)),
        ("random_saturation", lambda: im_.random_saturation(im, 0.5, 1.5)),
        ("random_hue", lambda: im_.random_hue(im, 0.0, 0.3)),
        ("random_color_jitter", lambda: im_.random_color_jitter(im, 0.3, 0.3, 0.3, 0.1)),
        ("adjust_lighting", lambda: im_.adjust_lighting(im, alpha=(0.1, 0.1, 0.1))),
    ]


def family_contrib(mx: Any, n: int) -> list[Case]:
    """Detection, resampling and attention helpers on inputs of about ``n`` values."""
    rng = np.random.default_rng(4)
    c = mx.nd.contrib
    nb = max(8, n // 600)  # boxes per batch (two batches of 6-wide rows: ~n/50 values)
    xy = rng.uniform(0, 50, (2, nb, 2))
    det = np.concatenate([rng.integers(0, 5, (2, nb, 1)), rng.uniform(0, 1, (2, nb, 1)), xy,
                          xy + rng.uniform(1, 20, (2, nb, 2))], axis=-1)
    D = mx.nd.array(det, dtype="float32")
    boxes = mx.nd.array(det[0, :, 2:], dtype="float32")
    side = max(4, int(round((n / 16) ** 0.5)))
    fm = mx.nd.array(rng.normal(size=(1, 16, side, side)), dtype="float32")
    rois = mx.nd.array(np.concatenate([np.zeros((32, 1)), rng.uniform(0, side / 2, (32, 2)),
                                       rng.uniform(side / 2, side, (32, 2))], axis=1), dtype="float32")
    L = max(2, int(round((n / 48) ** 0.5)))  # qkv of (L, 2, 3*2*8): scores (4, L, L)
    qkv = mx.nd.array(rng.normal(size=(L, 2, 48)), dtype="float32")
    x = mx.nd.array(rng.normal(size=(n,)), dtype="float32")
    return [
        ("box_iou", lambda: c.box_iou(boxes, boxes)),
        ("box_nms", lambda: c.box_nms(D, overlap_thresh=0.5, id_index=0, topk=200)),
        ("ROIAlign", lambda: c.ROIAlign(fm, rois, pooled_size=(7, 7), spatial_scale=1.0, sample_ratio=2)),
        ("AdaptiveAvgPooling2D", lambda: c.AdaptiveAvgPooling2D(fm, output_size=(7, 7))),
        ("BilinearResize2D", lambda: c.BilinearResize2D(fm, height=2 * side, width=2 * side)),
        ("interleaved_matmul_selfatt_qk", lambda: c.interleaved_matmul_selfatt_qk(qkv, heads=2)),
        ("quadratic", lambda: c.quadratic(x, a=1.0, b=2.0, c=3.0)),
        ("div_sqrt_dim", lambda: c.div_sqrt_dim(x)),
    ]


def family_quantization(mx: Any, n: int) -> list[Case]:
    """int8/uint8 conversions and layers on about ``n`` values (ops-quantization)."""
    rng = np.random.default_rng(5)
    c = mx.nd.contrib
    r = lambda v: mx.nd.array([v], dtype="float32")  # noqa: E731
    x = mx.nd.array(rng.normal(size=(n,)), dtype="float32")
    q8 = mx.nd.array(rng.integers(-128, 128, (n,)), dtype="int8")
    q32 = mx.nd.array(rng.integers(-2 ** 30, 2 ** 30, (n,)), dtype="int32")
    side = max(4, int(round((n / 16) ** 0.5)))  # conv: (1, 16, side, side) uint8 data, 16 3x3 filters
    img = mx.nd.array(rng.integers(0, 256, (1, 16, side, side)), dtype="uint8")
    w = mx.nd.array(rng.integers(-128, 128, (16, 16, 3, 3)), dtype="int8")
    k = max(8, int(round(n ** 0.5)))  # fully connected: (k, k) int8 data times (64, k) weights
    fx = mx.nd.array(rng.integers(-128, 128, (k, k)), dtype="int8")
    fw = mx.nd.array(rng.integers(-128, 128, (64, k)), dtype="int8")
    return [
        ("quantize_v2", lambda: c.quantize_v2(x, min_calib_range=-3.0, max_calib_range=3.0)),
        ("quantize_v2 (data range)", lambda: c.quantize_v2(x)),
        ("dequantize", lambda: c.dequantize(q8, r(-1.0), r(2.0))),
        ("requantize", lambda: c.requantize(q32, r(-1.0), r(1.0), min_calib_range=-0.5, max_calib_range=0.5)),
        ("quantized_elemwise_add", lambda: c.quantized_elemwise_add(q8, q8, r(-1.0), r(1.0), r(-2.0), r(2.0))),
        ("quantized_conv", lambda: c.quantized_conv(img, w, r(0.0), r(1.0), r(-1.0), r(1.0), kernel=(3, 3),
                                                    pad=(1, 1), num_filter=16, no_bias=True)),
        ("quantized_pooling", lambda: c.quantized_pooling(img, r(0.0), r(1.0), kernel=(2, 2), stride=(2, 2),
                                                          pool_type="avg")),
        ("quantized_fully_connected", lambda: c.quantized_fully_connected(fx, fw, r(-1.0), r(1.0), r(-1.0), r(1.0),
                                                                          num_hidden=64, no_bias=True)),
    ]


FAMILIES: dict[str, Callable[[Any, int], list[Case]]] = {
    name[len("family_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("family_")}


# -- worker ----------------------------------------------------------------------------------------
def _time(fn: Callable[[], Any], budget: float = 0.3, max_reps: int = 50) -> float:
    _sync(fn())  # warm up (and let lazy setup happen)
    best, spent, reps = float("inf"), 0.0, 0
    while reps < 3 or (spent < budget and reps < max_reps):
        t0 = time.perf_counter()
        _sync(fn())
        dt = time.perf_counter() - t0
        best, spent, reps = min(best, dt), spent + dt, reps + 1
    return best


def worker(lib: str, families: list[str], sizes: list[int]) -> dict[str, float]:
    mx = __import__(lib)
    out: dict[str, float] = {}
    for fam in families:
        for n in sizes:
            for label, fn in FAMILIES[fam](mx, n):
                try:
                    out[f"{fam}/{label}/{n}"] = _time(fn)
                except Exception as e:  # noqa: BLE001 - report and go on
                    print(f"{lib}: {fam}/{label}/{n} failed: {type(e).__name__}: {e}", file=sys.stderr)
    return out


# -- driver ----------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", nargs="*", default=list(FAMILIES), choices=list(FAMILIES))
    ap.add_argument("--sizes", nargs="*", type=int, default=[1000, 1_000_000])
    ap.add_argument("--rounds", type=int, default=2, help="alternating runs per library (best time kept)")
    ap.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    ap.add_argument("--worker", choices=["plexnet", "mxnet"], help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.family, args.sizes)))
        return
    me = os.path.abspath(__file__)
    common = ["--family", *args.family, "--sizes", *map(str, args.sizes)]
    runs = {"plexnet": [sys.executable, me, "--worker", "plexnet", *common],
            "mxnet": [args.mxnet_python, me, "--worker", "mxnet", *common]}
    env = dict(os.environ, OPENBLAS_CORETYPE="SkylakeX")
    best: dict[str, dict[str, float]] = {"plexnet": {}, "mxnet": {}}
    for _ in range(args.rounds):
        for lib, cmd in runs.items():
            res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
            if res.returncode != 0:
                sys.exit(f"{lib} worker failed:\n{res.stderr[-3000:]}")
            for line in res.stderr.splitlines():
                if "failed:" in line:
                    print(line, file=sys.stderr)
            for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items():
                best[lib][k] = min(v, best[lib].get(k, float("inf")))
    rows = []
    for k in sorted(set(best["plexnet"]) | set(best["mxnet"]), key=lambda s: (s.split("/")[0], int(s.split("/")[2]),
                                                                                  s.split("/")[1])):
        p, m = best["plexnet"].get(k), best["mxnet"].get(k)
        rows.append({"case": k, "plexnet_ms": p and p * 1e3, "mxnet_ms": m and m * 1e3,
                     "ratio": (p / m) if p and m else None})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'family/operator/elements':48s} {'plexnet ms':>11s} {'mxnet ms':>11s} {'ratio':>7s}")
    for r in rows:
        fmt = lambda v, f: (f.format(v) if v is not None else "-")  # noqa: E731
        print(f"{r['case']:48s} {fmt(r['plexnet_ms'], '{:11.3f}'):>11s} {fmt(r['mxnet_ms'], '{:11.3f}'):>11s} "
              f"{fmt(r['ratio'], '{:7.2f}'):>7s}")


if __name__ == "__main__":
    main()
