"""Convolution with ops-basic's algorithm (im2col + one OpenBLAS GEMM per group) whose
memory-bound layout passes run as numba kernels (``_convkern``): col2im (flat and csn
layouts, 1-D and 2-D), out_to_cols (flat layout, 1-D and 2-D) and the forward's store of
the GEMM result plus bias (flat layout). The GEMMs, the batch chunking, the helper-thread
split and the workspace are ops-basic's (``ConvolutionOp``), unchanged.

Everything else - the strided layout (stride > 1), 3-D kernels, small col2im that
ops-basic does as one ``bincount``, dtypes other than float32/float64, non-contiguous
arrays - runs ops-basic's numpy code through the parent classes. Deconvolution gets the
same geometry (``NumbaDeconvolutionOp``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import OpReqType
from plexnet_ops_basic.nn._common import writes
from plexnet_ops_basic.nn._convcore import (SMALL_COL2IM, ConvGeom, Workspace, conv_forward, matmul_long,
                                            matmul_wide)
from plexnet_ops_basic.nn.convolution import ConvolutionOp, conv_geom
from plexnet_ops_basic.nn.deconvolution import DeconvolutionOp

from . import _base


#: depthwise convolutions (one input channel per group, 2-D) through the direct kernels
#: of ``_dwkern`` (else im2col + a batch of tiny GEMMs)
DEPTHWISE = True


def _ok(*arrays: Any) -> bool:
    return _base.ok_arrays(arrays)


class NumbaConvGeom(ConvGeom):
    """A ``ConvGeom`` whose col2im and out_to_cols run numba kernels where they can."""

    _offs: Any = None

    def _kern(self, xp: Any, *arrays: Any) -> Any:
        if xp is not np or self.nd > 2 or not _ok(*arrays):
            return None
        return _base.kernels("_convkern")

    def _offsets(self) -> tuple:
        if self._offs is None:
            sl = self.col2im_slices()
            if self.csn:
                if self.nd == 2:
                    r = np.array([s[1].start for s in sl], dtype=np.int64)
                else:
                    r = np.zeros(len(sl), dtype=np.int64)
                self._offs = (r, np.array([s[-1].start for s in sl], dtype=np.int64))
            else:
                self._offs = (np.array([s[2].start for s in sl], dtype=np.int64),)
        return self._offs

    def col2im(self, xp: Any, dcols: Any, dxt: Any) -> Any:
        K = None
        if (self.flat or self.csn) and self.cols_size > SMALL_COL2IM:
            K = self._kern(xp, dcols, dxt)
        if K is None:
            return super().col2im(xp, dcols, dxt)
        dv, dc = self._col2im_views(dcols, dxt)
        zero = dxt.dtype.type(0)
        if self.flat:
            K.col2im_flat(dc, self._offsets()[0], dv, zero)
        else:
            C, J = self.C, self.out_sp[-1] * self.N
            r, c = self._offsets()
            K.col2im_rows(dc.reshape(C, self.K, -1, J), r, c, dv.reshape(C, -1, dv.shape[-1]), zero)
        return dxt

    def padded(self, xp: Any, x: Any, ws: Any) -> Any:
        K = self._kern(xp, x) if self.csn and self.nd == 2 else None
        if K is None:
            return super().padded(xp, x, ws)
        shape = (self.C,) + self.pad_sp + (self.N,)
        xc = ws.take(shape) if ws is not None else np.empty(shape, dtype=x.dtype)
        K.nchw_to_chwn(x, xc, self.pad[0], self.pad[1], x.dtype.type(0))
        return xc

    def out_to_cols(self, xp: Any, dy: Any, buf: Any) -> Any:
        K = self._kern(xp, dy, buf) if self.flat else None
        if K is None:
            return super().out_to_cols(xp, dy, buf)
        y = buf.reshape(self.F, self.N, self.L)
        K.out_to_cols_flat(dy.reshape(self.N, self.F, -1, self.out_sp[-1]), y, self.pad_sp[-1])
        return buf.reshape(self.F, self.N * self.L)


def _numba_forward(g: NumbaConvGeom, x: Any, w: Any, b: Any | None, out: Any, req: OpReqType, resource: Any,
                   K: Any) -> None:
    """``conv_forward`` (ops-basic) for the flat and (2-D) csn layouts, the GEMM result
    (plus bias) stored into ``out`` by a numba kernel instead of numpy's strided copy."""
    if req == OpReqType.null:
        return
    ws = Workspace(np, x.dtype, g.fwd_sizes, resource)
    xpd = g.padded(np, x, ws)
    cols = g.im2col(np, xpd, ws.take((g.cols_size,)))
    y = ws.take((g.F, g.N * g.ncols))
    G = g.G
    if G == 1:
        matmul_wide(np, w.reshape(g.F, g.CK), cols, y)
    else:
        np.matmul(w.reshape(G, g.F // G, g.CK // G), cols.reshape(G, g.CK // G, g.N * g.ncols),
                  out=y.reshape(G, g.F // G, g.N * g.ncols))
    bias = b if b is not None else np.zeros(g.F, dtype=x.dtype)
    add = req == OpReqType.add
    if g.flat:
        K.cols_to_out_flat(y.reshape(g.F, g.N, g.L), bias, out.reshape(g.N, g.F, -1, g.out_sp[-1]),
                           g.pad_sp[-1], b is not None, add)
    else:
        K.chwn_to_nchw(y.reshape((g.F,) + g.out_sp + (g.N,)), out, 0, 0, bias, b is not None, add)


def _numba_backward(g: NumbaConvGeom, x: Any, w: Any, dy: Any, dx: Any, dx_req: OpReqType, dw: Any,
                    dw_req: OpReqType, resource: Any, K: Any) -> None:
    """``conv_backward`` (ops-basic; no bias: the operator computes it first) with the
    csn layout's data gradient stored by a numba kernel (the numba col2im and
    out_to_cols come with the geometry)."""
    need_dx = dx_req != OpReqType.null
    need_dw = dw_req != OpReqType.null
    if not (need_dx or need_dw):
        return
    G, Fg, CKg, NL = g.G, g.F // g.G, g.CK // g.G, g.N * g.ncols
    sizes = [g.F * NL]
    if need_dw:
        sizes += [g.N * g.C * g.P if g.needs_pad or g.csn else 0, g.cols_size]
    if need_dx:
        sizes += [g.cols_size, g.C * g.N * g.P]
    ws = Workspace(np, dy.dtype, sizes, resource)
    dyc = g.out_to_cols(np, dy, ws.take((g.F * NL,))).reshape(G, Fg, NL)
    if need_dw:
        xpd = g.padded(np, x, ws)
        cols = g.im2col(np, xpd, ws.take((g.cols_size,))).reshape(G, CKg, NL)
        if G == 1:
            dwt = matmul_long(np, cols[0], dyc[0].T).T.reshape(dw.shape)
        else:
            dwt = np.matmul(cols, dyc.transpose(0, 2, 1)).transpose(0, 2, 1).reshape(dw.shape)
        if writes(dw_req):
            np.copyto(dw, dwt)
        else:
            dw += dwt
    if need_dx:
        dcols = ws.take((g.cols_size,)).reshape(G, CKg, NL)
        if G == 1:
            matmul_wide(np, w.reshape(Fg, CKg).T, dyc[0], dcols[0])
        else:
            np.matmul(w.reshape(G, Fg, CKg).transpose(0, 2, 1), dyc, out=dcols)
        dxt = g.col2im(np, dcols.reshape(g.CK, NL), ws.take(g.dx_shape))
        if g.csn and g.nd == 2:
            K.chwn_to_nchw(dxt, dx, g.pad[0], g.pad[1], np.zeros(g.C, dtype=dx.dtype), False,
                           dx_req == OpReqType.add)
        elif writes(dx_req):
            np.copyto(dx, g.crop_t(dxt))
        else:
            dx += g.crop_t(dxt)


def _numba_geom(g: ConvGeom) -> NumbaConvGeom:
    """``g`` as a ``NumbaConvGeom`` (same fields)."""
    ng = NumbaConvGeom.__new__(NumbaConvGeom)
    ng.__dict__.update(g.__dict__)
    return ng


class NumbaDeconvolutionOp(DeconvolutionOp):
    """ops-basic's DeconvolutionOp on ``NumbaConvGeom`` geometries: its forward is a
    convolution's data gradient (out_to_cols, GEMM, col2im), its backward a forward and
    a weight gradient; the numba passes come with the geometry (bit-equal results)."""

    def __init__(self, prop: Any) -> None:
        super().__init__(prop.param)

    def make_geom(self, dshape) -> ConvGeom:
        return _numba_geom(super().make_geom(dshape))


class NumbaConvolutionOp(ConvolutionOp):
    """ops-basic's ConvolutionOp on ``NumbaConvGeom`` geometries."""

    def __init__(self, prop: Any) -> None:
        super().__init__(prop.param)

    def make_geom(self, dshape) -> ConvGeom:
        return _numba_geom(conv_geom(self.p, dshape))

    def depthwise(self, x: Any) -> bool:
        """One input channel per group (several groups), 2-D: the direct kernels
        (``_dwkern``) run it. A single-channel input with one group (LeNet's first layer:
        20 filters) stays on im2col + GEMM, which was as fast forward and faster backward."""
        return DEPTHWISE and len(self.p.kernel) == 2 and self.p.num_group == x.shape[1] > 1

    def pointwise(self, x: Any) -> bool:
        """A 1x1 convolution (stride 1, no padding, one group) of one sample."""
        p = self.p
        return (x.shape[0] == 1 and p.num_group == 1 and all(k == 1 for k in p.kernel)
                and all(v == 1 for v in p.stride) and not any(p.pad))

    def forward(self, ctx, in_data, req, out_data, aux_states):
        x, w = in_data[0], in_data[1]
        b = None if self.p.no_bias else in_data[2]
        y, xp = out_data[0], ctx.xp
        if self.depthwise(x) and xp is np and _ok(x, w, b, y):
            D = _base.kernels("_dwkern")
            if D is not None:
                if req[0] != OpReqType.null:
                    p = self.p
                    bb = b if b is not None else np.zeros(0, x.dtype)
                    add = req[0] == OpReqType.add
                    if tuple(p.stride) == (1, 1):
                        D.dw_forward_s1(x, w, bb, y, tuple(p.pad), tuple(p.dilate), b is not None, add,
                                        x.dtype.type(0))
                    else:
                        D.dw_forward(x, w, bb, y, tuple(p.stride), tuple(p.pad), tuple(p.dilate), b is not None,
                                     add, x.dtype.type(0))
                return
        if self.pointwise(x) and req[0] == OpReqType.write and xp is np and _ok(x, w, b, y):
            # no im2col and no layout copies: the sample is the GEMM's right operand and
            # the output its result (ops-basic's csn layout at batch 1 is the same GEMM)
            F, C = w.shape[0], w.shape[1]
            yv = y.reshape(F, -1)
            np.matmul(w.reshape(F, C), x.reshape(C, -1), out=yv)
            if b is not None:
                yv += b.reshape(F, 1)
            return
        K = None
        if xp is np and len(self.p.kernel) <= 2 and _ok(x, w, b, y):
            g = self.geom(tuple(x.shape))
            if (g.flat or (g.csn and g.nd == 2)) and req[0] != OpReqType.null:
                K = _base.kernels("_convkern")
        if K is None:
            return super().forward(ctx, in_data, req, out_data, aux_states)
        res = ctx.requested[0] if ctx.requested else None
        r0 = req[0]

        def fn(s: int, e: int, g: Any, r: Any, slot: int) -> None:
            if g.flat or (g.csn and g.nd == 2):
                _numba_forward(g, x[s:e], w, b, y[s:e], r0, r, K)
            else:
                conv_forward(np, g, x[s:e], w, b, y[s:e], r0, r)
        g = self.single(xp, x, max(x.size, y.size), False)
        if g is not None:
            fn(0, x.shape[0], g, res, 0)
        else:
            self.for_chunks(xp, x, max(x.size, y.size), False, res, fn)


    def backward_chunk(self, xp, g, x, w, dy, dx, dx_req, dw, dw_req, res):
        if self.depthwise(x) and xp is np and _ok(x, w, dy, dx, dw):
            D = _base.kernels("_dwkern")
            if D is not None:
                p = self.p
                need_dw = dw_req != OpReqType.null
                dwt = np.empty(w.shape, w.dtype) if need_dw else w
                flags = (dx_req != OpReqType.null, dx_req == OpReqType.add, need_dw, x.dtype.type(0))
                if tuple(p.stride) == (1, 1):
                    D.dw_backward_s1(x, w, dy, dx, dwt, tuple(p.pad), tuple(p.dilate), *flags)
                else:
                    D.dw_backward(x, w, dy, dx, dwt, tuple(p.stride), tuple(p.pad), tuple(p.dilate), *flags)
                if need_dw:
                    if writes(dw_req):
                        np.copyto(dw, dwt)
                    else:
                        dw += dwt
                return
        K = _base.kernels("_convkern") if xp is np and _ok(x, w, dy, dx, dw) else None
        if K is None:
            return super().backward_chunk(xp, g, x, w, dy, dx, dx_req, dw, dw_req, res)
        _numba_backward(g, x, w, dy, dx, dx_req, dw, dw_req, res, K)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Convolution", "cpu", lambda prop, ctx: NumbaConvolutionOp(prop), impl_name="numba",
                           priority=5, available=available)
    registry.register_impl("Deconvolution", "cpu", lambda prop, ctx: NumbaDeconvolutionOp(prop),
                           impl_name="numba", priority=5, available=available)
