"""Convolution with ops-basic's algorithm (im2col + one OpenBLAS GEMM per group) whose
memory-bound layout passes run as numba kernels (``_convkern``): col2im (flat and csn
layouts, 1-D and 2-D; the strided layout, 2-D), out_to_cols (flat layout, 1-D and 2-D), the csn input transpose,
and the stores of the GEMM result plus bias and of the data gradient (the geometry hooks
``store_out`` / ``store_dx``). The GEMMs, the batch chunking, the helper-thread split and
the workspace are ops-basic's (``ConvolutionOp``, ``conv_forward`` / ``conv_backward``),
unchanged.

3x3 stride-1 float32 convolutions with 32 or more input and output channels run forward,
data and weight gradients by Winograd F(2x2, 3x3) instead (``winograd.py``).

Everything else - the strided layout's other passes (stride > 1), 3-D kernels, small col2im that
ops-basic does as one ``bincount``, dtypes other than float32/float64, non-contiguous
arrays - runs ops-basic's numpy code through the parent classes. Deconvolution gets the
same geometry (``NumbaDeconvolutionOp``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import OpReqType
from plexnet_ops_basic.nn._common import writes
from plexnet_ops_basic.nn._convcore import SMALL_COL2IM, ConvGeom, bias_grad
from plexnet_ops_basic.nn.convolution import ConvolutionOp, conv_geom
from plexnet_ops_basic.nn.deconvolution import DeconvolutionOp

from . import _base, winograd


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
            elif self.flat:
                self._offs = (np.array([s[2].start for s in sl], dtype=np.int64),)
            else:   # strided 2-D: (row, column) start of each kernel position
                self._offs = (np.array([s[2].start for s in sl], dtype=np.int64),
                              np.array([s[3].start for s in sl], dtype=np.int64))
        return self._offs

    def col2im(self, xp: Any, dcols: Any, dxt: Any) -> Any:
        K = None
        if (self.flat or self.csn or self.nd == 2) and self.cols_size > SMALL_COL2IM:
            K = self._kern(xp, dcols, dxt)
        if K is None:
            return super().col2im(xp, dcols, dxt)
        dv, dc = self._col2im_views(dcols, dxt)
        zero = dxt.dtype.type(0)
        if self.flat:
            K.col2im_flat(dc, self._offsets()[0], dv, zero)
        elif not self.csn:   # strided 2-D
            r, c = self._offsets()
            K.col2im_strided(dc, r, c, self.stride[0], self.stride[1], dv, zero)
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

    def store_out(self, xp: Any, y: Any, b: Any | None, out: Any, req: OpReqType) -> None:
        """The GEMM result plus bias stored into ``out`` by one kernel pass (flat and 2-D
        csn layouts) instead of numpy's strided copy and bias add."""
        K = self._kern(xp, y, out, b) if self.flat or (self.csn and self.nd == 2) else None
        if K is None:
            return super().store_out(xp, y, b, out, req)
        bias = b if b is not None else np.zeros(self.F, dtype=y.dtype)
        add = req == OpReqType.add
        if self.flat:
            K.cols_to_out_flat(y.reshape(self.F, self.N, self.L), bias,
                               out.reshape(self.N, self.F, -1, self.out_sp[-1]), self.pad_sp[-1], b is not None, add)
        else:
            K.chwn_to_nchw(y.reshape((self.F,) + self.out_sp + (self.N,)), out, 0, 0, bias, b is not None, add)

    def store_dx(self, xp: Any, dxt: Any, dx: Any, req: OpReqType) -> None:
        """The csn layout's (2-D) data gradient cropped and transposed back by one kernel."""
        K = self._kern(xp, dxt, dx) if self.csn and self.nd == 2 else None
        if K is None:
            return super().store_dx(xp, dxt, dx, req)
        K.chwn_to_nchw(dxt, dx, self.pad[0], self.pad[1], np.zeros(self.C, dtype=dx.dtype), False,
                       req == OpReqType.add)


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
                        _base.kernels("_phaseplanes").dw_forward(x, w, bb, y, tuple(p.stride), tuple(p.pad),
                                                                 tuple(p.dilate), b is not None, add, x.dtype.type(0))
                return
        if xp is np and winograd.eligible(self.p, x, w) and _ok(x, w, b, y):
            winograd.forward(self.p, x, w, b, y, req[0])
            return
        # the rest is ops-basic's algorithm (1x1 kernels its GEMMs); the geometry brings the
        # numba passes
        return super().forward(ctx, in_data, req, out_data, aux_states)

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
                    _base.kernels("_phaseplanes").dw_backward(x, w, dy, dx, dwt, tuple(p.stride), tuple(p.pad),
                                                              tuple(p.dilate), *flags)
                if need_dw:
                    if writes(dw_req):
                        np.copyto(dw, dwt)
                    else:
                        dw += dwt
                return
        return super().backward_chunk(xp, g, x, w, dy, dx, dx_req, dw, dw_req, res)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        x, w, dy = in_data[0], in_data[1], out_grad[0]
        need = [r != OpReqType.null for r in req]
        if ctx.xp is np and winograd.eligible(self.p, x, w) and _ok(
                x, w, dy, *(g for g, n in zip(in_grad, need) if n)):
            # data and weight gradients by Winograd over the whole batch (its own chunks:
            # the GEMMs need columns), the bias gradient as ops-basic's
            if winograd.WEIGHT_GRADIENT:
                if not self.p.no_bias:
                    bias_grad(np, dy, in_grad[2], req[2])
                winograd.backward(self.p, x, w, dy, in_grad[0], req[0], in_grad[1], req[1])
                return None
            winograd.backward_data(self.p, w, dy, in_grad[0], req[0])
            req = [OpReqType.null, *req[1:]]
        return super().backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Convolution", "cpu", lambda prop, ctx: NumbaConvolutionOp(prop), impl_name="numba",
                           priority=5, available=available)
    registry.register_impl("Deconvolution", "cpu", lambda prop, ctx: NumbaDeconvolutionOp(prop),
                           impl_name="numba", priority=5, available=available)
