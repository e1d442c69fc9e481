"""Pooling (max, avg, sum, lp; 1-D/2-D/3-D; global_pool; pooling_convention valid/full;
count_include_pad), MXNet 1.x semantics.

Output size per axis: ``valid``: ``1 + (in + 2*pad - kernel) // stride``; ``full``:
``1 + ceil((in + 2*pad - kernel) / stride)``. Padded positions never win a max; ``avg``
divides by the window size clipped to the padded input (``count_include_pad=True``,
the default) or to the real input (``False``). Max-pooling backward routes each output
gradient to the *first* maximum of its window in row-major order (as MXNet's CPU
kernel does), so ties (e.g. after ReLU) do not multiply gradients.

Vectorised: a loop over the ``prod(kernel)`` window offsets, each a whole-tensor strided
slice operation; global pooling and window-covers-input cases use reductions.
"""
from __future__ import annotations

import itertools
import math

import numpy as np  # shape arithmetic only

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, ParamError, Params, Shape

from ._common import prod, writes

POOL_TYPES = ("avg", "lp", "max", "sum")


class PoolingParam(Params):
    kernel = Field(Shape, default=Shape(()), doc="pooling window; may be omitted with global_pool")
    pool_type = Field(str, default="max", choices=POOL_TYPES)
    global_pool = Field(bool, default=False, doc="pool over the whole spatial extent (kernel/stride/pad ignored)")
    cudnn_off = Field(bool, default=False)
    pooling_convention = Field(str, default="valid", choices=("full", "same", "valid"))
    stride = Field(Shape, default=Shape(()), doc="default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="default 0 per axis")
    p_value = Field(int, default=None, optional=True, doc="p of lp pooling")
    count_include_pad = Field(bool, default=None, optional=True,
                              doc="avg: count padded positions in the divisor (default True)")
    layout = Field(str, default=None, optional=True, choices=("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"))

    def __post_init__(self, op: str) -> None:
        nd = len(self.kernel)
        if not self.global_pool:
            if nd not in (1, 2, 3):
                raise ParamError(f"{op}: kernel must have 1, 2 or 3 dimensions (or set global_pool), got {self.kernel}")
            if any(k < 1 for k in self.kernel):
                raise ParamError(f"{op}: kernel sizes must be >= 1, got {self.kernel}")
        for name, default, low in (("stride", 1, 1), ("pad", 0, 0)):
            v = getattr(self, name)
            if len(v) == 0:
                v = Shape((default,) * nd)
            elif len(v) < nd and not self.global_pool:
                raise ParamError(f"{op}: {name} {tuple(v)} must have as many dimensions as kernel {tuple(self.kernel)}")
            elif len(v) > nd and not self.global_pool:
                v = Shape(tuple(v)[:nd])  # MXNet reads the first len(kernel) values (pad=(0, 0, 0) for 1-D)
            if any(a < low for a in v):
                raise ParamError(f"{op}: {name} values must be >= {low}, got {tuple(v)}")
            object.__setattr__(self, name, Shape(v))
        if self.pooling_convention == "same" and not self.global_pool:
            # MXNet 1.x: 1-D pooling only, no explicit padding; ceil(size / stride) windows, the
            # last ones clipped at the end of the input
            if nd != 1:
                raise ParamError(f"{op}: pooling_convention 'same' supports 1-D pooling only (input "
                                 f"(batch, channel, x)), got kernel {tuple(self.kernel)}")
            if any(self.pad):
                raise ParamError(f"{op}: pooling_convention 'same' disables the use of pad, got pad {tuple(self.pad)}")
        if self.pool_type == "lp" and (self.p_value is None or self.p_value < 1):
            raise ParamError(f"{op}: pool_type 'lp' needs p_value >= 1, got {self.p_value}")
        if (self.layout is not None and not self.layout.startswith("NC") and not self.global_pool
                and len(self.layout) != nd + 2):
            raise ParamError(f"{op}: layout {self.layout!r} does not fit the {nd}-d kernel {tuple(self.kernel)}")

    def channels_last(self) -> bool:
        """NWC / NHWC / NDHWC (MXNet 1.6+ on CPU): pooled as the channels-first view."""
        return self.layout is not None and not self.layout.startswith("NC")


class PoolGeom:
    """Window geometry for one input shape."""

    def __init__(self, p: PoolingParam, dshape) -> None:
        self.dshape = tuple(dshape)
        sp = self.dshape[2:]
        self.nd = len(sp)
        if p.global_pool:
            self.kernel, self.stride, self.pad = tuple(sp), (1,) * self.nd, (0,) * self.nd
            self.out_sp = (1,) * self.nd
        else:
            self.kernel, self.stride, self.pad = tuple(p.kernel), tuple(p.stride), tuple(p.pad)
            if p.pooling_convention == "valid":
                self.out_sp = tuple(1 + (i + 2 * pd - k) // s
                                    for i, k, s, pd in zip(sp, self.kernel, self.stride, self.pad))
            elif p.pooling_convention == "same":
                self.out_sp = tuple(-(-i // s) for i, s in zip(sp, self.stride))
            else:
                self.out_sp = tuple(1 + int(math.ceil((i + 2 * pd - k) / s))
                                    for i, k, s, pd in zip(sp, self.kernel, self.stride, self.pad))
        self.in_sp = sp
        # extent of the padded buffer that the windows touch
        self.ext = tuple(max((o - 1) * s + k, i + 2 * pd) for o, s, k, i, pd in
                         zip(self.out_sp, self.stride, self.kernel, sp, self.pad))
        self.needs_pad = any(e != i for e, i in zip(self.ext, sp)) or any(self.pad)
        # the single window covers the whole input: use reductions
        self.whole = (all(o == 1 for o in self.out_sp) and not any(self.pad)
                      and tuple(self.kernel) == tuple(sp))
        # non-overlapping windows that exactly tile the input
        self.tiles = (not self.needs_pad and self.kernel == self.stride
                      and all(o * k == i for o, k, i in zip(self.out_sp, self.kernel, sp)))
        self.out_shape = self.dshape[:2] + self.out_sp
        self.offsets = list(itertools.product(*[range(k) for k in self.kernel]))
        self._div = {}
        # the indices every call uses, built once per shape (per-call cost of small pools)
        self._windows = {off: (slice(None), slice(None)) + tuple(slice(a, a + s * (o - 1) + 1, s)
                                                                 for a, s, o in zip(off, self.stride, self.out_sp))
                         for off in self.offsets}
        self._inner = (slice(None), slice(None)) + tuple(slice(pd, pd + i) for pd, i in zip(self.pad, self.in_sp))

    def window(self, off):
        """Index selecting, in the padded buffer, the elements at window offset ``off``."""
        return self._windows[off]

    def inner(self):
        """Index of the real input inside the padded buffer."""
        return self._inner

    def divisor(self, xp, include_pad: bool, dtype, run_ctx=None):
        """Per-output divisor of avg pooling (as MXNet: clipped to the padded or the real input).

        Shape arithmetic on the host, copied to the device once and cached. The copy runs
        on this call's stream, but the cached array is later read by other streams (every
        engine worker of the device shares this operator): the copy is finished
        (``synchronize``) before the array is shared, else a concurrent call on another
        stream could read it before it has arrived."""
        key = (include_pad, np.dtype(dtype).str)
        d = self._div.get(key)
        if d is None:
            total = np.ones((1,), dtype=np.float64)
            for o, s, k, i, pd in zip(self.out_sp, self.stride, self.kernel, self.in_sp, self.pad):
                start = np.arange(o) * s - pd
                end = np.minimum(start + k, i + pd)
                if include_pad:
                    cnt = end - start
                else:
                    cnt = np.minimum(end, i) - np.maximum(start, 0)
                total = np.multiply.outer(total, np.maximum(cnt, 1).astype(np.float64))
            d = xp.asarray(total.reshape((1, 1) + self.out_sp).astype(dtype))
            stream = getattr(run_ctx, "stream", None)
            if stream is not None:
                from plexnet.backends import get_backend
                get_backend(run_ctx.ctx).synchronize(stream)
            self._div[key] = d
        return d


def _fill_value(xp, dtype, pool_type):
    if pool_type != "max":
        return 0
    dt = np.dtype(dtype)
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


class PoolingOp(Operator):
    def __init__(self, param: PoolingParam) -> None:
        self.p = param
        self._geoms = {}
        self._cl = param.channels_last()

    def geom(self, dshape) -> PoolGeom:
        g = self._geoms.get(dshape)
        if g is None:
            g = self._geoms[dshape] = PoolGeom(self.p, dshape)
        return g

    def _padded(self, xp, g, x):
        if not g.needs_pad:
            return x
        buf = xp.full(g.dshape[:2] + g.ext, _fill_value(xp, x.dtype, self.p.pool_type), dtype=x.dtype)
        buf[g.inner()] = x
        return buf

    # -- forward ------------------------------------------------------------------------------
    def _pool(self, xp, g, x, out=None, run_ctx=None):
        """The pooled values (into ``out`` when given, else a new array)."""
        pt = self.p.pool_type
        pv = self.p.p_value
        axes = tuple(range(2, 2 + g.nd))
        if g.whole:
            if pt == "max":
                return x.max(axis=axes, keepdims=True)
            if pt == "lp":
                return self._lp_root(xp, (x ** pv if pv != 1 else x).sum(axis=axes, keepdims=True))
            s = x.sum(axis=axes, keepdims=True)
            return s / prod(g.kernel) if pt == "avg" else s
        xpd = self._padded(xp, g, x)
        if pt == "lp" and pv != 1:
            xpd = xpd ** pv
        offs = g.offsets
        # the first two offsets combined straight into the result (no copy pass)
        combine = xp.maximum if pt == "max" else xp.add
        if len(offs) > 1:
            acc = combine(xpd[g.window(offs[0])], xpd[g.window(offs[1])],
                          out=out if out is not None and pt != "lp" else None)
        elif out is not None and pt != "lp":
            acc = out
            xp.copyto(acc, xpd[g.window(offs[0])])
        else:
            acc = xpd[g.window(offs[0])].copy()
        for off in offs[2:]:
            combine(acc, xpd[g.window(off)], out=acc)
        if pt == "max":
            return acc
        if pt == "avg":
            acc /= g.divisor(xp, self.p.count_include_pad is not False, x.dtype, run_ctx)
        elif pt == "lp":
            acc = self._lp_root(xp, acc)
        return acc

    def _lp_root(self, xp, s):
        pv = self.p.p_value
        if pv == 1:
            return s
        if pv == 2:
            return xp.sqrt(s)
        return xp.sign(s) * xp.abs(s) ** (1.0 / pv)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        if self._cl:  # channels-last: the channels-first views (writes land in the outputs)
            in_data, out_data = _cf_views(xp, in_data), _cf_views(xp, out_data)
        x = in_data[0]
        g = self.geom(tuple(x.shape))
        if writes(req[0]) and not g.whole:
            y = self._pool(xp, g, x, out=out_data[0], run_ctx=ctx.run_ctx)
            if y is not out_data[0]:
                xp.copyto(out_data[0], y)
            return
        y = self._pool(xp, g, x, run_ctx=ctx.run_ctx)
        if writes(req[0]):
            xp.copyto(out_data[0], y)
        else:
            out_data[0] += y

    # -- backward -----------------------------------------------------------------------------
    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        if self._cl:
            out_grad, in_data, out_data, in_grad = (_cf_views(xp, a) for a in (out_grad, in_data, out_data, in_grad))
        x, y, dy = in_data[0], out_data[0], out_grad[0]
        dx = in_grad[0]
        g = self.geom(tuple(dx.shape))
        pt = self.p.pool_type
        if g.whole:
            dxv = self._whole_grad(xp, g, x, y, dy, dx.shape)
            if writes(req[0]):
                xp.copyto(dx, dxv)
            else:
                dx += dxv
            return
        # gradient scattered into a padded buffer (or straight into dx when possible)
        direct = not g.needs_pad and writes(req[0]) and g.tiles and pt != "lp"
        if direct:
            buf = dx
        else:
            buf = xp.zeros(g.dshape[:2] + g.ext, dtype=dx.dtype)
        if pt == "max":
            xpd = self._padded(xp, g, x)
            # route to the first maximum of each window (row-major offset order)
            taken = None
            last = len(g.offsets) - 1
            for k, off in enumerate(g.offsets):
                if k == last and k > 0:
                    # the max is one of the window's values: where no earlier offset held
                    # it, the last one does (unless it is NaN, which equals nothing); a
                    # contiguous pass instead of a strided compare
                    m = y == y
                else:
                    m = xpd[g.window(off)] == y
                if taken is None:
                    taken = m
                else:
                    m &= ~taken
                    if k != last:
                        taken |= m
                if direct:
                    xp.multiply(dy, m, out=buf[g.window(off)])
                else:
                    buf[g.window(off)] += dy * m
        else:
            if pt == "avg":
                gd = dy / g.divisor(xp, self.p.count_include_pad is not False, dy.dtype, ctx.run_ctx)
            elif pt == "sum":
                gd = dy
            else:  # lp: d/dx (sum x^p)^(1/p) = x^(p-1) / y^(p-1)
                gd = None
            if gd is not None:
                for off in g.offsets:
                    if direct:
                        buf[g.window(off)] = gd
                    else:
                        buf[g.window(off)] += gd
            else:
                pv = self.p.p_value
                xpd = self._padded(xp, g, x)
                if pv == 1:
                    for off in g.offsets:
                        buf[g.window(off)] += dy
                else:
                    ypow = y ** (pv - 1)
                    safe = xp.where(ypow == 0, xp.ones((), dtype=y.dtype), ypow)
                    scale = xp.where(ypow == 0, xp.zeros((), dtype=y.dtype), dy / safe)
                    for off in g.offsets:
                        buf[g.window(off)] += xpd[g.window(off)] ** (pv - 1) * scale
        if direct:
            return
        src = buf[g.inner()] if g.needs_pad else buf
        if writes(req[0]):
            xp.copyto(dx, src)
        else:
            dx += src

    def _whole_grad(self, xp, g, x, y, dy, xshape):
        pt = self.p.pool_type
        n, c = g.dshape[:2]
        if pt == "max":
            flat = x.reshape(n, c, -1)
            idx = xp.argmax(flat, axis=-1)[..., None]
            pos = xp.arange(flat.shape[-1]).reshape(1, 1, -1)
            return xp.where(pos == idx, dy.reshape(n, c, 1), xp.zeros((), dtype=dy.dtype)).reshape(x.shape)
        if pt == "sum":
            return xp.broadcast_to(dy, xshape)
        if pt == "avg":
            return xp.broadcast_to(dy / prod(g.kernel), xshape)
        pv = self.p.p_value
        if pv == 1:
            return xp.broadcast_to(dy, xshape)
        ypow = y ** (pv - 1)
        safe = xp.where(ypow == 0, xp.ones((), dtype=y.dtype), ypow)
        scale = xp.where(ypow == 0, xp.zeros((), dtype=y.dtype), dy / safe)
        return x ** (pv - 1) * scale


def _cf_views(xp, arrays):
    return [None if a is None else xp.moveaxis(a, -1, 1) for a in arrays]


class PoolingProp(OperatorProperty):
    param_cls = PoolingParam

    def infer_shape(self, in_shape):
        p, op = self.param, self.op_name
        d = None if in_shape[0] is None else tuple(int(v) for v in in_shape[0])
        if d is None:
            return [None], [None], []
        if p.channels_last() and len(d) >= 3:
            if len(d) != len(p.layout):
                raise ShapeError(f"{op}: data shape {d} does not fit layout {p.layout!r}")
            cf = (d[0], d[-1]) + d[1:-1]
            _, (o,), _ = self._infer_cf(cf)
            return [d], [(o[0],) + tuple(o[2:]) + (o[1],)], []
        return self._infer_cf(d)

    def _infer_cf(self, d):
        p, op = self.param, self.op_name
        if len(d) < 3 or len(d) > 5:
            raise ShapeError(f"{op}: data must be 3-d, 4-d or 5-d (N, C, spatial...), got shape {d}")
        if not p.global_pool:
            nd = len(p.kernel)
            if len(d) != nd + 2:
                raise ShapeError(f"{op}: data shape {d} does not fit the {nd}-d kernel {tuple(p.kernel)}")
            for i, k, pd in zip(d[2:], p.kernel, p.pad):
                if i + 2 * pd < k:
                    raise ShapeError(f"{op}: kernel {tuple(p.kernel)} exceeds the padded input: data shape {d}, "
                                     f"pad {tuple(p.pad)}")
        return [d], [PoolGeom(p, d).out_shape], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        if self.param.pool_type in ("avg", "sum"):
            return [out_grad[0]]
        return [out_grad[0], in_data[0], out_data[0]]


def register(registry):
    registry.register_property("Pooling", PoolingProp)
    registry.register_impl("Pooling", "*", lambda prop, ctx: PoolingOp(prop.param), impl_name="xp")
