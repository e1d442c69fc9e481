"""BatchNorm through cuDNN: ``batchnorm`` (training), ``batchnorm_inference``,
``batchnorm_backward``; MXNet 1.x semantics.

- Arguments ``data, gamma, beta``; auxiliary ``moving_mean, moving_var``; outputs
  ``output, mean, var`` where, as in MXNet, ``mean`` is the batch mean and ``var`` holds
  the *inverse standard deviation* ``1/sqrt(var + eps)`` (at inference: of the moving
  variance), which is exactly what cuDNN saves for the backward pass.
- Moving statistics follow MXNet's formula ``moving = moving * momentum + batch * (1 -
  momentum)`` with the *biased* batch variance (what MXNet's CPU operator uses; cuDNN's
  own running-variance update uses the unbiased one, so its running outputs go to
  scratch and one small CuPy kernel does the update instead). The update happens in the
  training forward (MXNet's CPU operator does it in backward; after a forward+backward
  step the result is the same).
- ``fix_gamma=True``: gamma is taken as 1 (the gamma array is not written) and its
  gradient is 0. ``use_global_stats``: forward is ``batchnorm_inference``; its backward
  is a few CuPy reductions.
- Channel axis 1 only (``axis=1``); 2-d to 5-d data; FP32 or FP16 data with FP32
  gamma/beta/statistics. Other cases, or a graph cuDNN cannot build, run the ops-basic
  xp implementation for that shape (forward and backward together).
- The cuDNN batch-norm engines may only take channels-last (NHWC) tensors: each graph is
  tried NCHW first, then NHWC with the data transposed into scratch and back.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from . import _fe, _loader
from ._base import ADD, NULL, CudnnOp, contiguous, store, writes

OP = "BatchNorm"
LAYOUTS = ("nchw", "nhwc")


def _param(p: Any, name: str, default: Any) -> Any:
    v = getattr(p, name, default)
    return default if v is None else v


def unsupported_params(p: Any) -> str | None:
    if _param(p, "cudnn_off", False):
        return "cudnn_off=True"
    return None


def bn_dims(shape: tuple) -> list[int] | None:
    """4-d/5-d NC... dims for data of 2 to 5 dimensions (None otherwise)."""
    s = [int(v) for v in shape]
    if len(s) == 2:
        return s + [1, 1]
    if len(s) == 3:
        return s + [1]
    if len(s) in (4, 5):
        return s
    return None


def _xstrides(dims: list, layout: str) -> list:
    return _fe.packed_strides(dims) if layout == "nchw" else _fe.nhwc_strides(dims)


def _pdims(dims: list) -> tuple[list, list]:
    pd = [1, dims[1]] + [1] * (len(dims) - 2)
    return pd, _fe.packed_strides(pd)


def train_graphs(dev: int, dtype: Any, dims: list, layout: str, eps: float) -> _fe.Built:
    """Forward-training and backward graphs for one layout (backward in ``extra``)."""
    f32 = np.float32
    xs = _xstrides(dims, layout)
    pd, ps = _pdims(dims)
    spec = _fe.GraphSpec(dtype, dev, "bn_fwd")
    X = spec.input("x", dims, xs)
    S = spec.input("scale", pd, ps, f32)
    B = spec.input("bias", pd, ps, f32)
    RM = spec.input("rmean", pd, ps, f32)
    RV = spec.input("rvar", pd, ps, f32)
    E = spec.scalar("eps", eps)
    M = spec.scalar("momentum", 0.1)  # cuDNN's running outputs go to scratch (see module doc)
    Y, mean, inv, nrm, nrv = spec.graph.batchnorm(input=X, scale=S, bias=B, in_running_mean=RM,
                                                  in_running_var=RV, epsilon=E, momentum=M,
                                                  compute_data_type=_fe.compute_dtype(f32), name="bn")
    spec.output("y", Y, dims, xs)
    spec.output("mean", mean, pd, ps, f32)
    spec.output("inv", inv, pd, ps, f32)
    spec.output("nrmean", nrm, pd, ps, f32)
    spec.output("nrvar", nrv, pd, ps, f32)
    fwd = _fe.build(spec)

    bspec = _fe.GraphSpec(dtype, dev, "bn_bwd")
    DY = bspec.input("dy", dims, xs)
    X2 = bspec.input("x", dims, xs)
    S2 = bspec.input("scale", pd, ps, f32)
    M2 = bspec.input("mean", pd, ps, f32)
    I2 = bspec.input("inv", pd, ps, f32)
    DX, DS, DB = bspec.graph.batchnorm_backward(grad=DY, input=X2, scale=S2, mean=M2, inv_variance=I2,
                                                compute_data_type=_fe.compute_dtype(f32), name="dbn")
    bspec.output("dx", DX, dims, xs)
    bspec.output("dscale", DS, pd, ps, f32)
    bspec.output("dbias", DB, pd, ps, f32)
    bwd = _fe.build(bspec)
    fwd.extra = {"layout": layout, "bwd": bwd}
    return fwd


def infer_graph(dev: int, dtype: Any, dims: list, layout: str) -> _fe.Built:
    f32 = np.float32
    xs = _xstrides(dims, layout)
    pd, ps = _pdims(dims)
    spec = _fe.GraphSpec(dtype, dev, "bn_infer")
    X = spec.input("x", dims, xs)
    M = spec.input("mean", pd, ps, f32)
    I = spec.input("inv", pd, ps, f32)  # noqa: E741
    S = spec.input("scale", pd, ps, f32)
    B = spec.input("bias", pd, ps, f32)
    Y = spec.graph.batchnorm_inference(input=X, mean=M, inv_variance=I, scale=S, bias=B,
                                       compute_data_type=_fe.compute_dtype(f32), name="bn_inf")
    spec.output("y", Y, dims, xs)
    built = _fe.build(spec)
    built.extra = {"layout": layout}
    return built


def _first_layout(fn: Any) -> _fe.Built:
    errors = []
    for layout in LAYOUTS:
        try:
            return fn(layout)
        except Exception as e:  # noqa: BLE001 - try the next layout
            errors.append(f"{layout}: {type(e).__name__}: {e}")
    raise RuntimeError("; ".join(errors))


# -- small CuPy kernels ---------------------------------------------------------------------------------
_kernels: dict = {}
_klock = threading.Lock()


def _kernel(name: str) -> Any:
    k = _kernels.get(name)
    if k is None:
        cp = _loader.cupy
        with _klock:
            if name == "update":
                # MXNet: moving = moving * m + batch * (1 - m), batch var = 1/inv^2 - eps (biased)
                k = cp.ElementwiseKernel(
                    "float32 mean, float32 inv, float32 m, float32 eps", "float32 mm, float32 mv",
                    "mm = mm * m + mean * (1.0f - m); "
                    "float v = 1.0f / (inv * inv) - eps; mv = mv * m + v * (1.0f - m);",
                    "plexnet_bn_update_moving")
            elif name == "invstd":
                k = cp.ElementwiseKernel("float32 var, float32 eps", "float32 inv",
                                         "inv = rsqrtf(var + eps)", "plexnet_bn_invstd")
            _kernels[name] = k
    return k


_ones: dict = {}


def _ones_like_param(cp: Any, dev: int, c: int) -> Any:
    key = (dev, c)
    a = _ones.get(key)
    if a is None:
        with cp.cuda.Device(dev):
            a = cp.ones((c,), dtype=np.float32)
        _ones[key] = a
    return a


class CudnnBatchNorm(CudnnOp):
    kind = OP

    def __init__(self, prop: Any, ctx: Any) -> None:
        super().__init__(prop, ctx)
        p = self.p
        self.eps = float(_param(p, "eps", 1e-3))
        self.momentum = float(_param(p, "momentum", 0.9))
        self.fix_gamma = bool(_param(p, "fix_gamma", True))
        self.global_stats = bool(_param(p, "use_global_stats", False))
        self.axis = int(_param(p, "axis", 1))
        self._mode: dict = {}  # data shape/dtype -> "cudnn" | "xp" (forward and backward agree)

    # -- eligibility ------------------------------------------------------------------------------
    def _eligible(self, x: Any, gamma: Any, aux: Any) -> list | None:
        if not (contiguous(x) and x.dtype in (np.float16, np.float32)):
            return None
        if self.axis % x.ndim != 1:
            return None
        if gamma is not None and gamma.dtype != np.float32:
            return None
        if any(a is not None and (a.dtype != np.float32 or not contiguous(a)) for a in aux):
            return None
        return bn_dims(x.shape)

    def _train_graph(self, dev: int, dtype: Any, dims: list) -> Any:
        """The cached forward-training graph (backward in its ``extra``) or ``Unsupported``."""
        return _fe.CACHE.get_or_build(
            ("bn_train", dev, str(dtype), tuple(dims), self.eps),
            lambda: _first_layout(lambda lay: train_graphs(dev, dtype, dims, lay, self.eps)),
            what=f"{OP} training")

    def _scale(self, dev: int, gamma: Any, c: int) -> Any:
        return _ones_like_param(_loader.cupy, dev, c) if self.fix_gamma else gamma

    # -- forward ------------------------------------------------------------------------------------
    def forward(self, ctx, in_data, req, out_data, aux_states):
        x, gamma, beta = in_data[0], in_data[1], in_data[2]
        mm, mv = aux_states[0], aux_states[1]
        dims = self._eligible(x, gamma, (beta, mm, mv) + tuple(out_data[1:3]))
        key = (tuple(x.shape), str(x.dtype))
        if dims is None:
            self._mode[key] = "xp"
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        dev = _fe.device_id_of(ctx.run_ctx)
        train = bool(ctx.is_train) and not self.global_stats
        if train:
            g = self._train_graph(dev, x.dtype, dims)
        else:
            g = _fe.CACHE.get_or_build(
                ("bn_infer", dev, str(x.dtype), tuple(dims)),
                lambda: _first_layout(lambda lay: infer_graph(dev, x.dtype, dims, lay)),
                what=f"{OP} inference")
        if isinstance(g, _fe.Unsupported):
            self._mode[key] = "xp"
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        self._mode[key] = "cudnn"
        y = out_data[0]
        mean_out = out_data[1] if len(out_data) > 1 else None
        inv_out = out_data[2] if len(out_data) > 2 else None
        c = int(x.shape[1])
        nhwc = g.extra["layout"] == "nhwc"
        cbytes = c * 4
        sizes = [g.workspace, x.nbytes if nhwc else 0, y.nbytes if (nhwc or req[0] == ADD) else 0,
                 cbytes, cbytes, cbytes, cbytes]
        sc = _fe.scratch(ctx, sizes)
        cp = _loader.cupy
        with _fe.on_stream(ctx.run_ctx):
            xin = x
            if nhwc:
                xin = sc.array(1, _nhwc_shape(x.shape), x.dtype)
                xin[...] = cp.moveaxis(x.reshape(dims), 1, -1)
            if nhwc or req[0] == ADD:
                yt = sc.array(2, _nhwc_shape(x.shape) if nhwc else y.shape, y.dtype)
            else:
                yt = y
            r1 = req[1] if len(req) > 1 else NULL
            r2 = req[2] if len(req) > 2 else NULL
            mean_t = mean_out if mean_out is not None and writes(r1) else sc.array(3, (c,), np.float32)
            inv_t = inv_out if inv_out is not None and writes(r2) else sc.array(4, (c,), np.float32)
            scale = self._scale(dev, gamma, c)
            if train:
                _fe.execute(g, ctx.run_ctx, dev,
                            {"x": xin, "scale": scale, "bias": beta, "rmean": mm, "rvar": mv, "y": yt,
                             "mean": mean_t, "inv": inv_t, "nrmean": sc.ptr(5), "nrvar": sc.ptr(6)}, sc.ptr(0))
                _kernel("update")(mean_t, inv_t, np.float32(self.momentum), np.float32(self.eps), mm, mv)
            else:
                _kernel("invstd")(mv, np.float32(self.eps), inv_t)
                _fe.execute(g, ctx.run_ctx, dev,
                            {"x": xin, "mean": mm, "inv": inv_t, "scale": scale, "bias": beta, "y": yt},
                            sc.ptr(0))
                if mean_out is not None:
                    store(mean_out, r1, mm)
            if inv_out is not None and inv_t is not inv_out:
                store(inv_out, r2, inv_t)
            if train and mean_out is not None and mean_t is not mean_out:
                store(mean_out, r1, mean_t)
            if nhwc:
                res = cp.moveaxis(yt, -1, 1).reshape(y.shape)
                store(y, req[0], res)
            elif yt is not y:
                store(y, req[0], yt)
        self.cudnn_ran("forward")

    # -- backward -----------------------------------------------------------------------------------
    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        dy, x, gamma = out_grad[0], in_data[0], in_data[1]
        key = (tuple(x.shape), str(x.dtype))
        mode = self._mode.get(key)
        if mode != "cudnn" or not contiguous(dy) or dy.dtype != x.dtype:
            # forward ran xp for this shape (or never ran here): its saved outputs follow xp's rules
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        if self.global_stats:
            return self._backward_global(ctx, dy, x, gamma, req, in_grad, aux_states)
        dims = bn_dims(x.shape)
        dev = _fe.device_id_of(ctx.run_ctx)
        g = self._train_graph(dev, x.dtype, dims)
        if isinstance(g, _fe.Unsupported):  # evicted and rebuilt differently: cannot happen twice
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        b = g.extra["bwd"]
        nhwc = g.extra["layout"] == "nhwc"
        c = int(x.shape[1])
        cbytes = c * 4
        dx = in_grad[0]
        need_dx_tmp = nhwc or req[0] in (ADD, NULL)
        sizes = [b.workspace, dy.nbytes if nhwc else 0, x.nbytes if nhwc else 0,
                 x.nbytes if need_dx_tmp else 0, cbytes, cbytes, cbytes, cbytes]
        sc = _fe.scratch(ctx, sizes)
        cp = _loader.cupy
        with _fe.on_stream(ctx.run_ctx):
            mean = out_data[1] if len(out_data) > 1 and out_data[1] is not None else None
            inv = out_data[2] if len(out_data) > 2 and out_data[2] is not None else None
            if mean is None or inv is None:  # not kept for backward: recompute the batch statistics
                axes = (0,) + tuple(range(2, x.ndim))
                xf = x.astype(np.float32, copy=False)
                mean = sc.array(6, (c,), np.float32)
                inv = sc.array(7, (c,), np.float32)
                mean[...] = xf.mean(axis=axes)
                _kernel("invstd")(xf.var(axis=axes), np.float32(self.eps), inv)
            dyin, xin = dy, x
            if nhwc:
                dyin = sc.array(1, _nhwc_shape(x.shape), dy.dtype)
                dyin[...] = cp.moveaxis(dy.reshape(dims), 1, -1)
                xin = sc.array(2, _nhwc_shape(x.shape), x.dtype)
                xin[...] = cp.moveaxis(x.reshape(dims), 1, -1)
            dxt = sc.array(3, _nhwc_shape(x.shape) if nhwc else x.shape, x.dtype) if need_dx_tmp else dx
            ds = in_grad[1] if req[1] not in (ADD, NULL) and not self.fix_gamma else sc.array(4, (c,), np.float32)
            db = in_grad[2] if req[2] not in (ADD, NULL) else sc.array(5, (c,), np.float32)
            _fe.execute(b, ctx.run_ctx, dev,
                        {"dy": dyin, "x": xin, "scale": self._scale(dev, gamma, c), "mean": mean, "inv": inv,
                         "dx": dxt, "dscale": ds, "dbias": db}, sc.ptr(0))
            if req[0] != NULL and dxt is not dx:
                store(dx, req[0], cp.moveaxis(dxt, -1, 1).reshape(dx.shape) if nhwc else dxt)
            if self.fix_gamma:
                if req[1] not in (ADD, NULL):
                    in_grad[1][...] = 0
            elif ds is not in_grad[1]:
                store(in_grad[1], req[1], ds)
            if db is not in_grad[2]:
                store(in_grad[2], req[2], db)
        self.cudnn_ran("backward")

    def _backward_global(self, ctx, dy, x, gamma, req, in_grad, aux_states):
        """use_global_stats: dx = dy * gamma * invstd(moving_var); CuPy reductions."""
        cp = _loader.cupy
        mm, mv = aux_states[0], aux_states[1]
        c = int(x.shape[1])
        bshape = (1, c) + (1,) * (x.ndim - 2)
        axes = (0,) + tuple(range(2, x.ndim))
        with _fe.on_stream(ctx.run_ctx):
            inv = cp.empty((c,), np.float32)
            _kernel("invstd")(mv, np.float32(self.eps), inv)
            w = inv if self.fix_gamma else inv * gamma
            dyf = dy.astype(np.float32, copy=False)
            store(in_grad[0], req[0], (dyf * w.reshape(bshape)).astype(in_grad[0].dtype, copy=False))
            if req[1] != NULL:
                if self.fix_gamma:
                    if req[1] != ADD:
                        in_grad[1][...] = 0
                else:
                    xh = (x.astype(np.float32, copy=False) - mm.reshape(bshape)) * inv.reshape(bshape)
                    store(in_grad[1], req[1], (dyf * xh).sum(axis=axes))
            store(in_grad[2], req[2], dyf.sum(axis=axes))
        self.cudnn_ran("backward")


def _nhwc_shape(shape: tuple) -> tuple:
    dims = bn_dims(shape)
    return (dims[0],) + tuple(dims[2:]) + (dims[1],)


def factory(prop: Any, ctx: Any) -> Any:
    if unsupported_params(prop.param) is not None:
        _fe.count(f"{OP}.create.xp")
        return _fe.xp_operator(prop, ctx)
    return CudnnBatchNorm(prop, ctx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl(OP, "gpu", factory, priority=10, impl_name="cudnn", available=available)
