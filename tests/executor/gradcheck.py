"""Numerical gradient checks of whole bound graphs (float64)."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

import plexnet as mx


def bind_f64(net: Any, shapes: Mapping[str, tuple], grad_req: Any = "write", **kw: Any) -> Any:
    """simple_bind with every argument and aux state in float64."""
    types = {n: "float64" for n in net.list_arguments()}
    return net.simple_bind(mx.cpu(), grad_req=grad_req, type_dict=types, **shapes, **kw)


def randomize(exe: Any, rng: np.random.RandomState, fixed: Mapping[str, np.ndarray] | None = None,
              scale: float = 1.0) -> dict[str, np.ndarray]:
    fixed = dict(fixed or {})
    vals = {}
    for name, arr in exe.arg_dict.items():
        v = fixed[name] if name in fixed else rng.uniform(-scale, scale, arr.shape)
        arr[:] = v
        vals[name] = np.array(v, dtype=np.float64)
    for name, arr in exe.aux_dict.items():
        v = fixed[name] if name in fixed else (np.ones(arr.shape) if name.endswith("var") else np.zeros(arr.shape))
        arr[:] = v
    return vals


def head_objective(out_grads: Sequence[np.ndarray]) -> Callable[[list[np.ndarray]], float]:
    """f = sum_i <output_i, out_grad_i>: its gradient is backward(out_grads)."""
    def f(outs: list[np.ndarray]) -> float:
        return float(sum((o * g).sum() for o, g in zip(outs, out_grads)))
    return f


def cross_entropy(label: np.ndarray, index: int = 0) -> Callable[[list[np.ndarray]], float]:
    """f = -sum log p[label]: its gradient is what SoftmaxOutput's backward gives."""
    lab = label.astype(np.int64)

    def f(outs: list[np.ndarray]) -> float:
        p = outs[index]
        return float(-np.log(p[np.arange(p.shape[0]), lab]).sum())
    return f


def numeric_grads(exe: Any, objective: Callable[[list[np.ndarray]], float], wrt: Sequence[str],
                  is_train: bool = True, eps: float = 1e-6) -> dict[str, np.ndarray]:
    out = {}
    for name in wrt:
        arr = exe.arg_dict[name]
        base = arr.asnumpy().astype(np.float64)
        g = np.zeros_like(base)
        flat = base.reshape(-1)
        for i in range(flat.size):
            for sign in (1, -1):
                x = flat.copy()
                x[i] += sign * eps
                arr[:] = x.reshape(base.shape)
                outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
                g.reshape(-1)[i] += sign * objective(outs)
            g.reshape(-1)[i] /= 2 * eps
        arr[:] = base
        out[name] = g
    return out


def check_graph_gradients(net: Any, shapes: Mapping[str, tuple], *, fixed: Mapping[str, np.ndarray] | None = None,
                          loss_label: str | None = None, wrt: Sequence[str] | None = None, seed: int = 0,
                          rtol: float = 1e-5, atol: float = 1e-7, is_train: bool = True, **bind_kw: Any) -> Any:
    """Bind ``net`` in float64, run forward/backward with random head gradients (or a
    cross-entropy loss through the output when ``loss_label`` names the label argument),
    and compare every gradient of ``wrt`` (default: every argument not in ``fixed``)
    against central differences. Returns the executor."""
    rng = np.random.RandomState(seed)
    exe = bind_f64(net, shapes, **bind_kw)
    randomize(exe, rng, fixed)
    outs = exe.forward(is_train=is_train)
    if loss_label is not None:
        objective = cross_entropy(exe.arg_dict[loss_label].asnumpy())
        exe.backward()
    else:
        ograds = [rng.uniform(-1, 1, o.shape) for o in outs]
        objective = head_objective(ograds)
        exe.backward([mx.nd.array(g, dtype="float64") for g in ograds])
    analytic = {k: v.asnumpy().copy() for k, v in exe.grad_dict.items() if v is not None}
    wrt = list(wrt) if wrt is not None else [n for n in exe.arg_dict if n not in (fixed or {})]
    numeric = numeric_grads(exe, objective, wrt, is_train=is_train)
    for name in wrt:
        np.testing.assert_allclose(analytic[name], numeric[name], rtol=rtol, atol=atol,
                                   err_msg=f"gradient of {name!r}")
    return exe
