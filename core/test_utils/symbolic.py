"""Checks of symbols and optimizers in ``mx.test_utils`` (MXNet 1.9.1's semantics):
forward/backward against expected values, gradients against finite differences,
consistency across contexts/dtypes, timing."""
from __future__ import annotations

import json
import time
import traceback
from typing import Any

import numpy as np

from ..ndarray import NDArray, array, waitall, zeros
from ..symbol import Symbol, Variable, op_function
from .compare import (assert_almost_equal, compare_ndarray_tuple, default_context, default_dtype,
                      default_numeric_eps, get_tolerance, get_tols)
from .sparse_data import create_sparse_array

__all__ = ["simple_forward", "numeric_grad", "check_numeric_gradient", "check_symbolic_forward",
           "check_symbolic_backward", "check_speed", "check_consistency", "same_symbol_structure",
           "compare_optimizer"]

_FLOATS = (np.float16, np.float32, np.float64)


def simple_forward(sym: Symbol, ctx: Any = None, is_train: bool = False, **inputs: Any) -> Any:
    """Run ``sym`` once on numpy inputs (by name); numpy output(s)."""
    ctx = ctx or default_context()
    exe = sym.bind(ctx, args={k: array(v, ctx=ctx) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _to_nd(v: Any, ctx: Any, dtype: Any) -> Any:
    if isinstance(v, np.ndarray):
        return array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
    return v


def _parse_location(sym: Symbol, location: Any, ctx: Any, dtype: Any = default_dtype()) -> dict:
    """``{argument name: NDArray}`` from a list (``list_arguments()`` order) or a dict
    holding every argument."""
    if not isinstance(location, (dict, list, tuple)):
        raise TypeError(f"location must be a list, tuple or dict, got {type(location).__name__}")
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError("Symbol arguments and keys of the given location do not match."
                             f"symbol args:{set(names)}, location.keys():{set(location)}")
    else:
        if len(location) != len(names):
            raise ValueError(f"Symbol arguments and the given location do not match: {len(names)} arguments "
                             f"({', '.join(names)}), {len(location)} values")
        location = dict(zip(names, location))
    return {k: _to_nd(location[k], ctx, dtype) for k in sorted(location)}


def _parse_aux_states(sym: Symbol, aux_states: Any, ctx: Any, dtype: Any = default_dtype()) -> dict | None:
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError("Symbol aux_states names and given aux_states do not match."
                             f"symbol aux_names:{set(names)}, aux_states.keys:{set(aux_states)}")
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: _to_nd(v, ctx, dtype) for k, v in aux_states.items()}


def numeric_grad(executor: Any, location: dict, aux_states: dict | None = None, eps: float = 1e-4,
                 use_forward_train: bool = True, dtype: Any = default_dtype()) -> dict:
    """Central finite differences of ``sum(outputs[0])`` for every floating argument in
    ``location`` (numpy arrays by name)."""
    if dtype not in _FLOATS:
        raise ValueError(f"numeric_grad: dtype must be float16, float32 or float64, got {dtype}")
    approx = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = array(v, dtype=dtype)
    for k in location:
        location[k] = np.asarray(location[k], order="C")
    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        old = v.copy()
        for i in range(int(np.prod(v.shape))):
            v.ravel()[i] += eps / 2.0
            executor.arg_dict[k][:] = array(v, dtype=dtype)
            if aux_states is not None:
                for key, val in aux_states.items():
                    executor.aux_dict[key][:] = val
            executor.forward(is_train=use_forward_train)
            f_peps = executor.outputs[0].asnumpy()
            v.ravel()[i] -= eps
            executor.arg_dict[k][:] = array(v, dtype=dtype)
            if aux_states is not None:
                for key, val in aux_states.items():
                    executor.aux_dict[key][:] = val
            executor.forward(is_train=use_forward_train)
            f_neps = executor.outputs[0].asnumpy()
            approx[k].ravel()[i] = (f_peps - f_neps).sum() / eps
            v.ravel()[i] = old.ravel()[i]
        executor.arg_dict[k][:] = array(old, dtype=dtype)
    return approx


def _grad_req_dict(grad_req: Any, names: list[str]) -> dict[str, str]:
    if isinstance(grad_req, str):
        return {k: grad_req for k in names}
    if isinstance(grad_req, (list, tuple)):
        return dict(zip(names, grad_req))
    return dict(grad_req)


def _compare_grad(req: str, name: str, expected: Any, got: Any, before: np.ndarray, rtol: Any, atol: Any,
                  names: tuple, equal_nan: bool = False) -> None:
    if req == "write":
        assert_almost_equal(expected, got, rtol, atol, names, equal_nan=equal_nan)
    elif req == "add":
        assert_almost_equal(expected, got.asnumpy() - before, rtol, atol, names, equal_nan=equal_nan)
    elif req == "null":
        assert_almost_equal(before, got, rtol, atol, names, equal_nan=equal_nan)
    else:
        raise ValueError(f"Invalid grad_req {req} for argument {name}")


def check_numeric_gradient(sym: Symbol, location: Any, aux_states: Any = None, numeric_eps: Any = None,
                           rtol: Any = None, atol: Any = None, grad_nodes: Any = None,
                           use_forward_train: bool = True, ctx: Any = None, grad_stype_dict: dict | None = None,
                           dtype: Any = default_dtype()) -> None:
    """Check ``sym``'s backward against finite differences of a random projection of its
    (single) output. ``grad_nodes``: names to check (list) or ``{name: grad_req}``."""
    if dtype not in _FLOATS:
        raise ValueError(f"check_numeric_gradient: dtype must be a float type, got {dtype}")
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
        grad_nodes = list(grad_nodes)
    else:
        raise ValueError(f"grad_nodes must be None, a list or a dict, got {type(grad_nodes).__name__}")
    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    if out_shape is None or len(out_shape) != 1:
        raise ValueError("check_numeric_gradient needs a symbol with one output of inferable shape")
    out = op_function("make_loss")(sym * Variable("__random_proj"))  # type: ignore[misc]
    location = dict(location)
    location["__random_proj"] = array(np.random.rand(*out_shape[0]) + 0.1, ctx=ctx, dtype=dtype)
    grads_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    grads_npy["__random_proj"] = np.random.normal(0, 0.01, size=out_shape[0])
    args_grad = {k: array(v, ctx=ctx, dtype=dtype) for k, v in grads_npy.items()}
    for k, st in (grad_stype_dict or {}).items():  # MXNet: an empty sparse gradient array
        if k in args_grad and st in ("row_sparse", "csr"):
            args_grad[k] = create_sparse_array(args_grad[k].shape, st, density=0.0, dtype=dtype)
    req = {k: grad_req.get(k, "null") for k in out.list_arguments()}
    req["__random_proj"] = "write"
    executor = out.bind(ctx, args=location, args_grad=args_grad, grad_req=req, aux_states=aux_states)
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16) and eps < 1e-5:
        raise ValueError(f"numeric_eps {eps} is too small for {np.dtype(dtype).name}")
    executor.backward()
    symbolic = executor.grad_dict
    numeric = numeric_grad(executor, location_npy, aux_npy, eps=eps, use_forward_train=use_forward_train,
                           dtype=dtype)
    for name in grad_nodes:
        _compare_grad(grad_req[name], name, numeric[name], symbolic[name], grads_npy[name], rtol, atol,
                      (f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def check_symbolic_forward(sym: Symbol, location: Any, expected: Any, rtol: Any = None, atol: Any = None,
                           aux_states: Any = None, ctx: Any = None, equal_nan: bool = False,
                           dtype: Any = default_dtype()) -> list[NDArray]:
    """Bind ``sym`` at ``location``, run forward (inference) and compare each output with
    ``expected`` (a list in output order or a dict by output name); returns the outputs."""
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    grads = {k: zeros(v.shape, ctx, v.dtype if dtype == "asnumpy" else dtype) for k, v in location.items()}
    executor = sym.bind(ctx, args=location, args_grad=grads, aux_states=aux_states)
    executor.forward(is_train=False)
    for name, expect, output in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(expect, output, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return executor.outputs


def check_symbolic_backward(sym: Symbol, location: Any, out_grads: Any, expected: Any, rtol: Any = None,
                            atol: Any = None, aux_states: Any = None, grad_req: Any = "write", ctx: Any = None,
                            grad_stypes: dict | None = None, equal_nan: bool = False,
                            dtype: Any = default_dtype()) -> dict:
    """Bind ``sym``, run forward (training) and backward with ``out_grads``, compare the
    gradients with ``expected`` (list in argument order, or dict by name), honouring
    ``grad_req`` (``add`` adds to random initial gradients, ``null`` leaves them)."""
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    grads_npy = {k: np.random.normal(size=np.shape(v)) for k, v in sorted(expected.items())}
    grads = {k: array(v, ctx=ctx, dtype=np.asarray(expected[k]).dtype if dtype == "asnumpy" else dtype)
             for k, v in grads_npy.items()}
    for k in grads:  # MXNet: a sparse gradient array starts empty (a list of stypes names no argument)
        st = grad_stypes[k] if grad_stypes is not None and k in grad_stypes else None
        if st is not None and st != "default":
            grads[k] = create_sparse_array(grads[k].shape, st, density=0.0)
    grad_req = _grad_req_dict(grad_req, sym.list_arguments())
    executor = sym.bind(ctx, args=location, args_grad=grads, aux_states=aux_states, grad_req=grad_req)
    executor.forward(is_train=True)
    if isinstance(out_grads, (tuple, list)):
        out_grads = [_to_nd(g, ctx, dtype) for g in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = [_to_nd(out_grads[k], ctx, dtype) for k in sym.list_outputs()]
    elif isinstance(out_grads, np.ndarray):
        out_grads = [_to_nd(out_grads, ctx, dtype)]
    elif out_grads is not None and not isinstance(out_grads, NDArray):
        raise TypeError(f"out_grads must be None, arrays or a dict, got {type(out_grads).__name__}")
    executor.backward(out_grads)
    for name in expected:
        _compare_grad(grad_req[name], name, expected[name], grads[name], grads_npy[name], rtol, atol,
                      (f"EXPECTED_{name}", f"BACKWARD_{name}"), equal_nan)
    return grads


def check_speed(sym: Symbol, location: dict | None = None, ctx: Any = None, N: int = 20,  # noqa: N803
                grad_req: Any = None, typ: str = "whole", **kwargs: Any) -> float:
    """Seconds per ``forward`` (``typ='forward'``) or per forward+backward (``'whole'``),
    averaged over ``N`` runs after one warm-up."""
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0) for k, arr in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise TypeError(f'Expect dict, get "location"={location}')
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **{k: v.shape for k, v in location.items()})
    for name, arr in location.items():
        exe.arg_dict[name][:] = arr.astype(exe.arg_dict[name].dtype)
    if typ == "whole":
        run = (lambda: (exe.forward(is_train=True), exe.backward(out_grads=exe.outputs)))
    elif typ == "forward":
        run = (lambda: exe.forward(is_train=False))
    else:
        raise ValueError('typ can only be "whole" or "forward".')
    run()
    for out in exe.outputs:
        out.wait_to_read()
    tic = time.time()
    for _ in range(N):
        run()
    waitall()
    return (time.time() - tic) / N


def check_consistency(sym: Any, ctx_list: list[dict], scale: float = 1.0, grad_req: Any = "write",
                      arg_params: dict | None = None, aux_params: dict | None = None, rtol: Any = None,
                      atol: Any = None, raise_on_err: bool = True, ground_truth: dict | None = None,
                      equal_nan: bool = False, use_uniform: bool = False, rand_type: Any = np.float64) -> dict:
    """Run ``sym`` (or one symbol per entry) with each ``simple_bind`` spec of
    ``ctx_list`` (``{'ctx': ..., 'data': shape, 'type_dict': ...}``) on the same random
    parameters; compare outputs and gradients with the most precise run. Returns the
    ground truth (outputs and gradients by name)."""
    if len(ctx_list) < 2:
        raise ValueError("check_consistency needs at least two contexts")
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    if len(syms) != len(ctx_list):
        raise ValueError("check_consistency: one symbol per context expected")
    output_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exe_list = []
    for s, spec in zip(syms, ctx_list):
        assert s.list_arguments() == arg_names and s.list_outputs() == output_names
        exe_list.append(s.simple_bind(grad_req=grad_req, **spec))
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for n, arr in sorted(exe_list[0].arg_dict.items()):
        if n not in arg_params:
            arg_params[n] = (np.random.uniform(-0.92 * scale, 0.92 * scale, size=arr.shape) if use_uniform
                             else np.random.normal(size=arr.shape, scale=scale)).astype(rand_type)
    for n in exe_list[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0

    def smaller(dt1: Any, dt2: Any) -> Any:
        return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2

    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exe_list]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    gt = ground_truth
    if gt is None:
        gt = dict(exe_list[gt_idx].output_dict)
        if grad_req != "null":
            gt.update(exe_list[gt_idx].grad_dict)
    for exe in exe_list:
        exe.forward(is_train=False)
    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names, exe.outputs):
            try:
                assert_almost_equal(arr, gt[name], rtol=rtol, atol=atol, equal_nan=equal_nan)
            except AssertionError:
                print(f"Predict Err: ctx {i} vs ctx {gt_idx} at {name}")
                traceback.print_exc()
                if raise_on_err:
                    raise
    if grad_req != "null":
        for exe in exe_list:
            exe.forward(is_train=True)
        least = [out.dtype for out in exe_list[0].outputs]
        for exe in exe_list:
            least = [smaller(o.dtype, dt) for o, dt in zip(exe.outputs, least)]
        golden = [out.astype(dt).asnumpy() for out, dt in zip(exe_list[0].outputs, least)]
        for exe in exe_list:
            exe.backward([array(g, ctx=exe.ctx, dtype=o.dtype) for g, o in zip(golden, exe.outputs)])
        for i, exe in enumerate(exe_list):
            if i == gt_idx:
                continue
            for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
                if gt[name] is None:
                    assert arr is None
                    continue
                gtarr = gt[name]
                try:
                    rt, at = rtol, atol
                    sa, sg = smaller(arr.dtype, dtypes[i]), smaller(gtarr.dtype, dtypes[gt_idx])
                    if sa != arr.dtype or sg != gtarr.dtype:
                        rt, at = get_tols(arr.astype(sa), gtarr.astype(sg), rtol, atol)
                    assert_almost_equal(arr, gtarr, rtol=rt, atol=at, equal_nan=equal_nan)
                except AssertionError:
                    print(f"Train Err: ctx {i} vs ctx {gt_idx} at {name}")
                    traceback.print_exc()
                    if raise_on_err:
                        raise
    return gt


def same_symbol_structure(sym1: Symbol, sym2: Symbol) -> bool:
    """Whether two symbols apply the same operators in the same order."""
    n1 = json.loads(sym1.tojson())["nodes"]
    n2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(n1, n2))


def compare_optimizer(opt1: Any, opt2: Any, shape: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True, ntensors: int = 1) -> None:
    """One update of each optimizer from the same random weight and gradient; compare
    the states and the updated weights (``shape`` a list: ``ntensors`` weights, the second
    optimizer updating them in one multi-tensor call)."""
    ctx = default_context()

    def uniform(s: Any) -> NDArray:
        return array(np.random.uniform(0, 1, size=s), ctx=ctx, dtype=dtype)

    def pair(stype: str, density: float | None) -> tuple[NDArray, NDArray]:
        """(dense copy for opt1, the array of ``stype`` for opt2), as MXNet's."""
        if stype == "default":
            b = uniform(shape)
            return b.copyto(ctx), b
        if stype in ("row_sparse", "csr"):
            from .sparse_data import rand_ndarray
            b = rand_ndarray(shape, stype, density=density, dtype=dtype)
            return b.copyto(ctx).tostype("default"), b
        raise Exception("type not supported yet")  # MXNet's words  # noqa: TRY002

    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError("compare_optimizer: ntensors > 1 needs a list of shapes")
        w1, w2 = pair(w_stype, 1)
        g1, g2 = pair(g_stype, None)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(uniform(s) for s in shape)
    g1 = tuple(uniform(s) for s in shape)
    w2 = tuple(w.copy() for w in w1)
    g2 = tuple(g.copy() for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


