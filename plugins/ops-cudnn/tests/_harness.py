"""Run one operator straight through the operator contract on any context, with a
chosen implementation (``impl``: ``"xp"``, ``"cudnn"`` or None for the registry's
choice). Same conventions as ops-basic's ``opcheck``: hidden outputs are written,
backward only gets the arrays ``declare_backward_dependency`` names (others are None),
``req="inplace"`` aliases the pairs the property declares, ``write`` outputs start as NaN
garbage so an operator that forgets to write is caught.
"""
from __future__ import annotations

import contextlib
from typing import Any, Sequence

import numpy as np

import plexnet
from plexnet.context import RunContext
from plexnet.operator import OpContext, OpReqType
from plexnet.plugins import registries

try:
    from plexnet_ops_cudnn import _loader
    CUDNN_OK = _loader.available()
    CUDNN_REASON = _loader.reason()
except Exception as e:  # noqa: BLE001
    CUDNN_OK, CUDNN_REASON = False, f"plexnet_ops_cudnn failed to import: {e}"

cp: Any = None
try:
    from plexnet_device_cuda import cupy_loader
    GPU_OK, GPU_REASON = cupy_loader.available, cupy_loader.reason
    if GPU_OK:
        cp = cupy_loader.cupy  # CuPy, or plexnet's CuPy simulator under PLEXNET_CUDA_SIMULATE
except Exception as e:  # noqa: BLE001
    GPU_OK, GPU_REASON = False, f"plexnet-device-cuda is not usable: {e}"


def make_prop(name: str, kwargs: dict | None = None) -> Any:
    return registries().operators.create_property(name, dict(kwargs or {}))


def create_operator(prop: Any, ctx: Any, impl: str | None) -> Any:
    reg = registries().operators
    if impl is None:
        return prop.create_operator(ctx)
    reg.force_impl(prop.op_name, ctx.device_type, impl)
    try:
        return prop.create_operator(ctx)
    finally:
        reg.force_impl(prop.op_name, ctx.device_type, None)


def _host(a: Any) -> np.ndarray:
    return cp.asnumpy(a) if cp is not None and isinstance(a, cp.ndarray) else np.array(a, copy=True)


class Result(dict):
    """``out``, ``aux``, ``grad`` (lists of numpy arrays), ``op`` (the operator used)."""


def run(name: str, kwargs: dict | None, inputs: Sequence[np.ndarray], ctx: Any, impl: str | None = None, *,
        aux: Sequence[np.ndarray] | None = None, is_train: bool = True, fwd_req: str = "write",
        bwd_req: str | Sequence[str] = "write", out_grads: Sequence[np.ndarray] | None = None,
        backward: bool = True, prefill: float = 0.5) -> Result:
    prop = make_prop(name, kwargs)
    ins_np = [np.asarray(a) for a in inputs]
    in_shapes, out_shapes, aux_shapes = prop.infer_shape([a.shape for a in ins_np])
    _, out_types, aux_types = prop.infer_type([a.dtype for a in ins_np])
    gpu = ctx.device_type == "gpu"
    xp = cp if gpu else np
    stream = cp.cuda.Stream(non_blocking=True) if gpu else None
    dev = cp.cuda.Device(ctx.device_id) if gpu else contextlib.nullcontext()
    res = Result()
    with dev, (stream if gpu else contextlib.nullcontext()):
        ins = [xp.array(a) for a in ins_np]
        if aux is not None:
            auxs = [xp.array(a) for a in aux]
        else:
            auxs = [xp.zeros(s, t or np.float32) for s, t in zip(aux_shapes, aux_types)]
        nout, nvis, nin = prop.num_outputs(), prop.num_visible_outputs(), len(ins)
        fr = [OpReqType.parse(fwd_req)] * nvis + [OpReqType.write] * (nout - nvis)
        outs = []
        for s, t, r in zip(out_shapes, out_types, fr):
            t = t or ins[0].dtype
            outs.append(xp.full(s, prefill if r == OpReqType.add else (0 if r == OpReqType.null else np.nan), t))
        if fr[0] == OpReqType.inplace:
            pairs = prop.forward_inplace_option(list(range(nin)), list(range(nin, nin + nout)))
            src = [i for i, o in pairs if o == nin]
            assert src, f"{name} declares no forward in-place option"
            outs[0] = ins[src[0]]
        op = create_operator(prop, ctx, impl)
        res["op"] = op
        rctx = RunContext(ctx, stream, xp, "test")
        requested = [plexnet.resource.get().request(ctx, r) for r in prop.forward_resource(in_shapes)]
        op.forward(OpContext(bool(is_train), rctx, requested), ins, fr, outs, auxs)
        res["out"] = [_host(o) for o in outs]
        res["aux"] = [_host(a) for a in auxs]
        if backward:
            og = ([xp.array(g).astype(outs[i].dtype) for i, g in enumerate(out_grads)] if out_grads is not None
                  else [xp.ones_like(outs[i]) for i in range(nvis)])
            br = ([OpReqType.parse(bwd_req)] * nin if isinstance(bwd_req, str)
                  else [OpReqType.parse(r) for r in bwd_req])
            ig = [xp.full(x.shape, prefill if r == OpReqType.add else (0 if r == OpReqType.null else np.nan),
                          x.dtype) for x, r in zip(ins, br)]
            og_ids = list(range(nvis))
            in_ids = list(range(nvis, nvis + nin))
            out_ids = list(range(nvis + nin, nvis + nin + nout))
            deps = set(prop.declare_backward_dependency(og_ids, in_ids, out_ids))
            if any(r == OpReqType.inplace for r in br):
                ig_ids = list(range(nvis + nin + nout, nvis + 2 * nin + nout))
                pairs = prop.backward_inplace_option(og_ids, in_ids, out_ids, ig_ids)
                by_id = dict(zip(og_ids, og))
                for k, r in enumerate(br):
                    if r == OpReqType.inplace:
                        src = [i for i, g in pairs if g == ig_ids[k]]
                        assert src, f"{name} declares no backward in-place option for in_grad {k}"
                        ig[k] = by_id[src[0]]
                        deps.add(src[0])
            pick = lambda ids, arrs: [a if i in deps else None for i, a in zip(ids, arrs)]  # noqa: E731
            brequested = [plexnet.resource.get().request(ctx, r) for r in prop.backward_resource(in_shapes)]
            op.backward(OpContext(True, rctx, brequested), pick(og_ids, og), pick(in_ids, ins),
                        pick(out_ids, outs), br, ig, auxs)
            res["grad"] = [_host(g) for g in ig]
            res["aux_after_backward"] = [_host(a) for a in auxs]
        if stream is not None:
            stream.synchronize()
    return res


def assert_close(actual: Any, expected: Any, rtol: float, atol: float, msg: str) -> None:
    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{msg}: shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=msg)
