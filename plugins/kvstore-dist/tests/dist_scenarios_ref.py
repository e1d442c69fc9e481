"""Single-process numpy references for ``dist_scenarios.py``."""
import numpy as np

SHAPES = {"w": (30, 20), "big": (100, 70), "b": (5,)}
STEPS = 6


def grads(rank, step):
    rng = np.random.default_rng(1000 * step + rank)
    return {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}


def init_vals():
    rng = np.random.default_rng(7)
    return {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}


def serial_sgd(workers, steps, lr=0.05, mom=0.9, wd=0.01, rescale=0.5):
    """One process over the union of every worker's batch: the summed gradient."""
    w = {k: v.astype(np.float64) for k, v in init_vals().items()}
    m = {k: np.zeros_like(v) for k, v in w.items()}
    for step in range(steps):
        gs = [grads(r, step) for r in range(workers)]
        for k in w:
            g = sum(x[k] for x in gs).astype(np.float64) * rescale
            m[k] = mom * m[k] - lr * wd * w[k] - lr * g
            w[k] = w[k] + m[k]
    return w


def compressed_sums(workers, steps, t):
    res = [np.zeros(1000, np.float32) for _ in range(workers)]
    out = []
    for step in range(steps):
        total = np.zeros(1000, np.float32)
        for r in range(workers):
            g = grads(r, step)["big"].reshape(-1)[:1000] * 0.5
            res[r] += g
            q = np.where(res[r] >= t, t, np.where(res[r] <= -t, -t, 0)).astype(np.float32)
            res[r] -= q
            total += q
        out.append(total)
    return np.stack(out)
