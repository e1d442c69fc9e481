"""Bit-for-bit comparison of plexnet with Apache MXNet 1.9.1 (session 10): common ``nd``
functions and reductions, the normalisation layers, the Gluon losses and the metrics on
fixed float32 inputs, compared with ``!=`` rather than a tolerance.

    OPENBLAS_CORETYPE=SkylakeX /path/to/mxnet-venv/bin/python tools/mxnet_bits.py --lib mxnet --out /tmp/mxb.pkl
    python tools/mxnet_bits.py --lib plexnet --out /tmp/pxb.pkl
    python tools/mxnet_bits.py --compare /tmp/mxb.pkl /tmp/pxb.pkl

Prints, per case, the fraction of elements that differ and the largest relative
difference (cases equal bit for bit are counted, not listed). What the session found and
fixed, and what stays different (MXNet's oneDNN kernels), is in docs/porting.md,
"Bit-for-bit comparisons with MXNet 1.9.1". Optimizers have their own recorded cases:
``tests/fixtures/make_mxnet_optimizer_bits_fixtures.py``.
"""
from __future__ import annotations

import argparse
import importlib
import pickle
import sys
from typing import Any, Callable

import numpy as np


def cases(mx: Any) -> dict[str, Callable[[], Any]]:
    nd, L = mx.nd, mx.gluon.loss
    rng = np.random.RandomState(0)
    a, b = rng.randn(64, 33).astype("f4"), rng.randn(64, 33).astype("f4")
    p = (np.abs(a) + 0.1).astype("f4")
    A, B, P = nd.array(a), nd.array(b), nd.array(p)
    pr = rng.rand(16, 10).astype("f4")
    pr /= pr.sum(1, keepdims=True)
    q, t = rng.randn(16, 10).astype("f4"), rng.randn(16, 10).astype("f4")
    Q, T, PR = nd.array(q), nd.array(t), nd.array(pr)
    lab = nd.array(rng.randint(0, 10, 16).astype("f4"))
    sgn = nd.array(np.sign(rng.randn(16, 10)).astype("f4"))
    bits = nd.array(rng.randint(0, 2, (16, 10)).astype("f4"))
    x3 = nd.array((rng.randn(8, 6, 50) * 2 + 1).astype("f4"))
    g6, b6 = nd.array((rng.rand(6) + 0.5).astype("f4")), nd.array(rng.randn(6).astype("f4"))
    g2, b2 = nd.array((rng.rand(2) + 0.5).astype("f4")), nd.array(rng.randn(2).astype("f4"))
    g33, b33 = nd.array((rng.rand(33) + 0.5).astype("f4")), nd.array(rng.randn(33).astype("f4"))
    return {
        # element-wise
        "exp": lambda: nd.exp(A), "log": lambda: nd.log(P), "sin": lambda: nd.sin(A), "tanh": lambda: nd.tanh(A),
        "sigmoid": lambda: nd.sigmoid(A), "pow": lambda: P ** B, "pow_scalar": lambda: P ** 1.7,
        "rpow_scalar": lambda: 2.5 ** A, "div": lambda: A / B, "mul_scalar": lambda: A * 0.1,
        # reductions
        "sum": lambda: nd.sum(A), "sum_axis0": lambda: nd.sum(A, axis=0), "mean_axis1": lambda: nd.mean(A, axis=1),
        "norm": lambda: nd.norm(A), "norm_axis1": lambda: nd.norm(A, axis=1),
        "norm_l1": lambda: nd.norm(A, ord=1, axis=1), "prod_axis1": lambda: nd.prod(P, axis=1),
        # normalisation layers
        "LayerNorm": lambda: nd.LayerNorm(A, g33, b33), "InstanceNorm": lambda: nd.InstanceNorm(x3, g6, b6),
        "GroupNorm": lambda: nd.GroupNorm(x3, g2, b2, num_groups=2), "L2Normalization": lambda: nd.L2Normalization(A),
        # oneDNN in MXNet (expected to differ in the last bits)
        "softmax": lambda: nd.softmax(A), "Activation_tanh": lambda: nd.Activation(A, act_type="tanh"),
        "FullyConnected": lambda: nd.FullyConnected(A, B[:10], nd.zeros(10), num_hidden=10),
        # Gluon losses
        "L1Loss": lambda: L.L1Loss()(Q, T), "L2Loss": lambda: L.L2Loss()(Q, T),
        "HuberLoss": lambda: L.HuberLoss()(Q, T),
        "HingeLoss": lambda: L.HingeLoss()(Q, sgn), "TripletLoss": lambda: L.TripletLoss()(Q, T, PR),
        "SoftmaxCELoss": lambda: L.SoftmaxCrossEntropyLoss()(Q, lab),
        "SigmoidBCELoss": lambda: L.SigmoidBinaryCrossEntropyLoss()(Q, bits),
        "PoissonNLLLoss": lambda: L.PoissonNLLLoss()(Q, PR),
    }


def metrics(mx: Any) -> dict[str, Any]:
    rng = np.random.RandomState(0)
    pred = rng.rand(64, 10).astype("f4")
    pred /= pred.sum(1, keepdims=True)
    label = rng.randint(0, 10, 64).astype("f4")
    reg_p, reg_l = rng.randn(64, 3).astype("f4"), rng.randn(64, 3).astype("f4")
    out = {}
    for name, m, labels, preds in (("Accuracy", mx.metric.Accuracy(), label, pred),
                                   ("TopK", mx.metric.TopKAccuracy(top_k=3), label, pred),
                                   ("CrossEntropy", mx.metric.CrossEntropy(), label, pred),
                                   ("Perplexity", mx.metric.Perplexity(ignore_label=None), label, pred),
                                   ("MAE", mx.metric.MAE(), reg_l, reg_p), ("RMSE", mx.metric.RMSE(), reg_l, reg_p)):
        for _ in range(3):
            m.update([mx.nd.array(labels)], [mx.nd.array(preds)])
        out["metric_" + name] = np.array(m.get()[1], dtype=np.float64)
    return out


def record(lib: str, path: str) -> None:
    mx = importlib.import_module(lib)
    res: dict[str, Any] = {}
    for name, fn in cases(mx).items():
        try:
            res[name] = fn().asnumpy()
        except Exception as e:  # noqa: BLE001 - a failure is a result to compare
            res[name] = f"{type(e).__name__}: {e}"[:160]
    res.update(metrics(mx))
    with open(path, "wb") as f:
        pickle.dump(res, f)


def compare(a_path: str, b_path: str) -> int:
    with open(a_path, "rb") as f:
        a = pickle.load(f)
    with open(b_path, "rb") as f:
        b = pickle.load(f)
    equal = 0
    for name in a:
        x, y = a[name], b.get(name)
        if isinstance(x, str) or isinstance(y, str) or y is None:
            print(f"{name:18s} {x if isinstance(x, str) else 'ok'} | {y if isinstance(y, str) else 'ok'}")
            continue
        if x.shape != y.shape:
            print(f"{name:18s} shape {x.shape} against {y.shape}")
            continue
        ok = np.isfinite(x)
        differ = float(np.mean(x[ok] != y[ok])) if ok.any() else 0.0
        if differ == 0 and np.array_equal(np.isnan(x), np.isnan(y)):
            equal += 1
            continue
        rel = np.max(np.abs(x[ok].astype(np.float64) - y[ok]) / np.maximum(np.abs(x[ok]), 1e-6))
        print(f"{name:18s} differ {differ:.3f}  max relative {rel:.1e}")
    print(f"{equal} of {len(a)} cases equal bit for bit")
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", choices=["mxnet", "plexnet"])
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2)
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not (args.lib and args.out):
        sys.exit("--lib and --out, or --compare A B")
    record(args.lib, args.out)


if __name__ == "__main__":
    main()
