"""MXNet's Python-level ``nd.contrib`` functions (the operators of the namespace come from
``_contrib_*`` registrations, e.g. the ``plexnet-ops-contrib`` plugin).

* ``foreach(body, data, init_states)``, ``while_loop(cond, func, loop_vars,
  max_iterations)``, ``cond(pred, then_func, else_func)``: imperative control flow, a
  Python loop over NDArray operations (so autograd records every step), outputs stacked
  along a new first axis; ``while_loop`` pads its outputs to ``max_iterations`` rows
  whose contents are undefined, as MXNet's does.
* ``isfinite``, ``isnan``, ``isinf``: element-wise tests (1.0 / 0.0 in the input dtype).
* ``boolean_mask(data, index, axis=0)``: the rows of ``data`` whose ``index`` is non-zero;
  the result's shape depends on values, so the call waits for ``index`` and then takes
  the rows (the gradient scatters back through ``take``).
* ``rand_zipfian(true_classes, num_sampled, range_max)``: log-uniform candidate sampling;
  ``uniform`` is ``nd.random.uniform`` (MXNet's contrib module re-exports it).
* ``getnnz``, ``edge_id``, ``dgl_*``: the CSR graph operators (``sparse.graph``).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..context import current_context
from . import op_function
from .ndarray import NDArray, array
from .sparse.graph import (dgl_adjacency, dgl_csr_neighbor_non_uniform_sample, dgl_csr_neighbor_uniform_sample,
                           dgl_graph_compact, dgl_subgraph, edge_id, getnnz)

__all__ = ["current_context", "foreach", "while_loop", "cond", "isfinite", "isnan", "isinf", "boolean_mask",
           "rand_zipfian", "uniform", "adamw_update", "mp_adamw_update", "multi_adamw_update",
           "multi_mp_adamw_update", "multi_lamb_update", "multi_mp_lamb_update",
           # CSR graph operators (plexnet.ndarray.sparse.graph, docs/sparse.md)
           "getnnz", "edge_id", "dgl_adjacency", "dgl_subgraph", "dgl_csr_neighbor_uniform_sample",
           "dgl_csr_neighbor_non_uniform_sample", "dgl_graph_compact"]


def _op(name: str) -> Callable[..., Any]:
    fn = op_function(name)
    if fn is None:
        raise AttributeError(f"nd.contrib: operator {name!r} is not registered (`plexnet plugins` lists what is)")
    return fn


# -- nested lists of NDArrays ---------------------------------------------------------------------
def _flatten(obj: Any, what: str) -> tuple[list[NDArray], Any]:
    """Flat list of NDArrays plus the structure to rebuild ``obj`` (None: a single array)."""
    if isinstance(obj, NDArray):
        return [obj], None
    if not isinstance(obj, (list, tuple)):
        raise TypeError(f"{what} must be an NDArray or a (nested) list of NDArrays, got {type(obj).__name__}")
    flat: list[NDArray] = []
    fmt = []
    for item in obj:
        sub, f = _flatten(item, what)
        flat.extend(sub)
        fmt.append((len(sub), f))
    return flat, fmt


def _regroup(flat: list[Any], fmt: Any) -> Any:
    if fmt is None:
        return flat[0]
    out, i = [], 0
    for n, f in fmt:
        out.append(_regroup(flat[i:i + n], f))
        i += n
    return out


def _scalar(v: Any, kind: type, what: str) -> Any:
    if isinstance(v, NDArray):
        v = v.asscalar()
    try:
        return kind(v)
    except (TypeError, ValueError):
        raise ValueError(f"cannot convert {what} ({v!r}) to {kind.__name__}") from None


# -- control flow ----------------------------------------------------------------------------------
def foreach(body: Callable[[Any, Any], tuple[Any, Any]], data: Any, init_states: Any) -> tuple[Any, Any]:
    """Run ``outs, states = body(data[i], states)`` for every ``i`` of the first axis of
    ``data`` (an NDArray or a list of them); return the stacked outputs and final states."""
    flat_data, _ = _flatten(data, "foreach data")
    _flatten(init_states, "foreach init_states")
    steps = flat_data[0].shape[0]
    states, out_fmt = init_states, None
    per_step: list[list[NDArray]] = []
    for i in range(steps):
        items = data[i] if isinstance(data, NDArray) else [d[i] for d in data]
        outs, states = body(items, states)
        flat, out_fmt = _flatten(outs, "foreach output")
        per_step.append(flat)
    if not per_step:
        return [], states
    stack = _op("stack")
    stacked = [stack(*col, axis=0) for col in zip(*per_step)]
    return _regroup(stacked, out_fmt), states


_NO_STEP: Any = object()  # while_loop's output format before the first step


def while_loop(cond: Callable[..., Any], func: Callable[..., tuple[Any, Any]], loop_vars: Any,
               max_iterations: Any = None) -> tuple[Any, Any]:
    """While ``cond(*loop_vars)`` holds and fewer than ``max_iterations`` steps ran:
    ``step_output, loop_vars = func(*loop_vars)``. Returns the step outputs stacked and
    padded to ``max_iterations`` rows, and the final loop variables."""
    if max_iterations is None:
        raise ValueError("while_loop: max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iterations")
    single = isinstance(loop_vars, NDArray)
    lv = [loop_vars] if single else list(loop_vars)
    if not lv:
        raise ValueError("while_loop: loop_vars should contain at least one element")
    steps, out_fmt = 0, _NO_STEP
    per_step: list[list[NDArray]] = []
    while steps < max_iterations and _scalar(cond(*lv), bool, "the return value of cond"):
        step_out, new_vars = func(*lv)
        new_vars = [] if new_vars is None else ([new_vars] if isinstance(new_vars, NDArray) else list(new_vars))
        if len(new_vars) != len(lv):
            raise ValueError(f"while_loop: func returned {len(new_vars)} loop variables, expected {len(lv)}")
        lv = new_vars
        flat, out_fmt = _flatten([] if step_out is None else step_out, "while_loop output")
        if per_step and len(flat) != len(per_step[0]):
            raise ValueError("while_loop: the number of step outputs must be the same in each step")
        per_step.append(flat)
        steps += 1
    stacked = []
    concat = _op("concat")
    for col in zip(*per_step):
        rows = [x.expand_dims(0) for x in col]
        if steps < max_iterations:
            from .ndarray import empty
            rows.append(empty((max_iterations - steps,) + col[0].shape, ctx=col[0].context, dtype=col[0].dtype))
        stacked.append(concat(*rows, dim=0))
    # as MXNet: the step outputs in the format func gave them (one array, or nested lists);
    # a list when no step ran
    outputs = stacked if out_fmt is _NO_STEP else _regroup(stacked, out_fmt)
    return outputs, (lv[0] if single else lv)


def cond(pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any]) -> Any:
    """``then_func()`` if ``pred`` (a number or a one-element NDArray) is true, else ``else_func()``."""
    return then_func() if _scalar(pred, bool, "pred") else else_func()


# -- element-wise tests ----------------------------------------------------------------------------
def isinf(data: NDArray) -> NDArray:
    """1 where ``data`` is +-inf, else 0."""
    return data.abs() == np.inf


def isnan(data: NDArray) -> NDArray:
    """1 where ``data`` is NaN, else 0."""
    return data != data


def isfinite(data: NDArray) -> NDArray:
    """1 where ``data`` is neither NaN nor +-inf, else 0."""
    return (data == data) * (data.abs() != np.inf)


# -- data-dependent shapes -------------------------------------------------------------------------
def boolean_mask(data: NDArray, index: NDArray, axis: int = 0, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The slices of ``data`` along ``axis`` (MXNet 1.9.1: only 0) where ``index`` is non-zero."""
    if axis != 0:
        raise ValueError(f"_contrib_boolean_mask: axis={axis} is not supported (MXNet 1.9.1 supports axis 0 only)")
    if index.ndim != 1 or index.shape[0] != data.shape[0]:
        from ..base import ShapeError
        raise ShapeError(f"_contrib_boolean_mask: index must be 1-D with one entry per row of data "
                         f"(data shape {data.shape}, index shape {index.shape})")
    rows = np.nonzero(index.asnumpy())[0]
    picked = _op("take")(data, array(rows, ctx=data.context, dtype=np.int64), axis=0)
    if out is not None:
        out[:] = picked
        return out
    return picked


# -- sampling --------------------------------------------------------------------------------------
def uniform(*args: Any, **kwargs: Any) -> Any:
    """``nd.random.uniform`` (MXNet's ``nd.contrib.uniform`` is the same function)."""
    from . import random as _random
    return _random.uniform(*args, **kwargs)


def rand_zipfian(true_classes: NDArray, num_sampled: int, range_max: int, ctx: Any = None) -> tuple:
    """Draw ``num_sampled`` classes from the log-uniform (Zipfian) distribution over
    ``[0, range_max)``; return them (int64) with the expected counts of ``true_classes``
    and of the sampled classes."""
    from . import random as _random
    ctx = ctx or current_context()
    log_range = math.log(range_max + 1)
    draws = _random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    sampled = (draws.exp() - 1).astype("int64") % range_max
    true_f = true_classes.as_in_context(ctx).astype("float64")
    count_true = ((true_f + 2.0) / (true_f + 1.0)).log() / log_range * num_sampled
    sampled_f = sampled.astype("float64")
    count_sampled = ((sampled_f + 2.0) / (sampled_f + 1.0)).log() / log_range * num_sampled
    return sampled, count_true, count_sampled


# -- AdamW (operators from plexnet-ops-contrib) ----------------------------------------------------
def _rescale(rescale_grad: Any, ctx: Any) -> NDArray:
    return rescale_grad.as_in_context(ctx) if isinstance(rescale_grad, NDArray) else \
        array([rescale_grad], ctx=ctx, dtype=np.float32)


def adamw_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray, rescale_grad: Any, lr: float,
                 eta: float, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0,
                 clip_gradient: float = -1, out: NDArray | None = None, name: str | None = None,
                 **kwargs: Any) -> NDArray:
    """One AdamW step (operator ``_adamw_update``); ``rescale_grad`` a number or an NDArray
    (NaN, inf or 0 skip the step); ``mean``/``var`` updated in place."""
    return _op("_adamw_update")(weight=weight, grad=grad, mean=mean, var=var,
                                rescale_grad=_rescale(rescale_grad, weight.context), lr=lr, eta=eta, beta1=beta1,
                                beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out, **kwargs)


def mp_adamw_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray, weight32: NDArray,
                    rescale_grad: Any, lr: float, eta: float, beta1: float = 0.9, beta2: float = 0.999,
                    epsilon: float = 1e-8, wd: float = 0, clip_gradient: float = -1, out: NDArray | None = None,
                    name: str | None = None, **kwargs: Any) -> NDArray:
    """One AdamW step on the float32 master ``weight32`` (operator ``_mp_adamw_update``)."""
    return _op("_mp_adamw_update")(weight=weight, grad=grad, mean=mean, var=var, weight32=weight32,
                                   rescale_grad=_rescale(rescale_grad, weight.context), lr=lr, eta=eta,
                                   beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
                                   out=out, **kwargs)


# -- multi-tensor AdamW / LAMB (operators from plexnet-ops-contrib) --------------------------------
def _interleave(*lists: Any) -> list[NDArray]:
    return [a for group in zip(*lists) for a in group]


def multi_adamw_update(weights: list[NDArray], grads: list[NDArray], mean: list[NDArray], var: list[NDArray],
                       rescale_grad: Any, lrs: Any, wds: Any, etas: Any, out: Any = None, name: str | None = None,
                       size: int = 0, **kwargs: Any) -> Any:
    """AdamW steps of several tensors in one call (operator ``_multi_adamw_update``):
    ``lrs``, ``wds``, ``etas`` one per tensor; ``mean``/``var`` updated in place; pass
    ``out=weights`` to update the weights in place."""
    size = size or len(weights)
    args = _interleave(weights, grads, mean, var) + [_rescale(rescale_grad, weights[0].context)]
    return _op("_multi_adamw_update")(*args, out=out, num_weights=size, lrs=lrs, wds=wds, etas=etas, **kwargs)


def multi_mp_adamw_update(weights: list[NDArray], grads: list[NDArray], mean: list[NDArray], var: list[NDArray],
                          weights32: list[NDArray], rescale_grad: Any, lrs: Any, wds: Any, etas: Any,
                          out: Any = None, name: str | None = None, size: int = 0, **kwargs: Any) -> Any:
    """``multi_adamw_update`` on float32 masters ``weights32`` (updated in place)."""
    size = size or len(weights)
    args = _interleave(weights, grads, mean, var, weights32) + [_rescale(rescale_grad, weights[0].context)]
    return _op("_multi_mp_adamw_update")(*args, out=out, num_weights=size, lrs=lrs, wds=wds, etas=etas, **kwargs)


def multi_lamb_update(weights: list[NDArray], grads: list[NDArray], mean: list[NDArray], var: list[NDArray],
                      step_count: Any, lrs: Any, wds: Any, out: Any = None, num_tensors: int = 0,
                      **kwargs: Any) -> Any:
    """LAMB steps of several tensors in one call (operator ``_multi_lamb_update``):
    ``step_count``, ``lrs``, ``wds`` one per tensor; ``mean``/``var`` updated in place."""
    num_tensors = num_tensors or len(weights)
    return _op("_multi_lamb_update")(*_interleave(weights, grads, mean, var), out=out, num_tensors=num_tensors,
                                     step_count=step_count, learning_rates=lrs, wds=wds, **kwargs)


def multi_mp_lamb_update(weights: list[NDArray], grads: list[NDArray], mean: list[NDArray], var: list[NDArray],
                         weights32: list[NDArray], step_count: Any, lrs: Any, wds: Any, out: Any = None,
                         num_tensors: int = 0, **kwargs: Any) -> Any:
    """``multi_lamb_update`` on float32 masters ``weights32`` (updated in place)."""
    num_tensors = num_tensors or len(weights)
    return _op("_multi_mp_lamb_update")(*_interleave(weights, grads, mean, var, weights32), out=out,
                                        num_tensors=num_tensors, step_count=step_count, learning_rates=lrs,
                                        wds=wds, **kwargs)
