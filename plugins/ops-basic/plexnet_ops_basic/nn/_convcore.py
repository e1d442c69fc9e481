"""Vectorised N-d (1-D/2-D/3-D) convolution kernels shared by Convolution and
Deconvolution, written against ``xp`` (numpy or CuPy).

Layout: data ``(N, C, *spatial)``, weight ``(F, C/G, *kernel)``.

Every kernel is one *im2col* copy (a strided view materialised with ``xp.copyto``), one
big GEMM per group, and for the data gradient a *col2im* of ``prod(kernel)`` slice
additions. Two column layouts are used:

* **flat** (every stride is 1): the spatial axes of the padded input are flattened and
  an output position ``o`` (a flat index on the *input* grid) reads input
  ``o + offset(k)`` for kernel offset ``k``. Columns are then contiguous runs, which
  makes im2col and col2im plain 1-D shifts (fast), at the price of computing a few junk
  columns (output positions past the right edge), which are cropped away / zeroed.
* **strided** (any stride): columns ``(C, *kernel, N, *out)`` gathered from a 2·d-D
  strided view.
* **csn** (every stride 1, ``C/G * prod(kernel) >= CSN_MIN_ROWS``): the input is
  first transposed to ``(C, *padded, N)`` (batch innermost). Columns are then the
  compact output positions ``(*out, N)`` (no junk), and each im2col row / col2im add is
  made of runs of ``out[-1] * N`` contiguous elements. For LeNet's conv2 (20->50, 5x5 on
  12x12: flat would compute 44% junk columns) forward + backward take 20-25% less time;
  where the GEMM is small against the data (one input channel, LeNet's conv1) the two
  transposes cost more than they save, and flat stays.

Temporary buffers come from the operator's ``kTempSpace`` resource when it has one and
they are larger than ``SMALL_WORKSPACE`` (a small ``xp.empty`` costs less than the
resource's bookkeeping).

Per-call cost: a geometry is built once per data shape and keeps what every call with
that shape repeats (the workspace sizes, the shapes and byte strides of the strided
views per item size, the col2im slices), and strided views of C-contiguous numpy arrays
are made with the ``ndarray`` constructor (``strided``) instead of ``as_strided``'s
Python wrapper (3 us -> 0.3 us each): the small-array Convolution call went from 46 to
about 22 us (docs/performance.md).
"""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np  # the CPU-only GEMM blocking below

from ._common import OpReqType, prod, writes

__all__ = ["ConvGeom", "conv_forward", "conv_backward", "conv_backward_data", "conv_backward_weight", "Workspace",
           "batch_chunk", "bias_grad"]

# use the flat layout while its junk columns cost at most this factor of extra work
_FLAT_MAX_JUNK = 2.0
#: stride-1 convolutions with at least this many GEMM rows (input channels per group x
#: kernel size) use the csn layout (module docstring)
CSN_MIN_ROWS = 64
#: workspaces up to this many bytes are allocated per call instead of taken from the
#: temp-space resource
SMALL_WORKSPACE = 64 << 10
#: numpy col2im of at most this many column elements is one ``bincount`` over a cached
#: index (2-4x faster than the slice additions up to ~1e5 elements at batch 1, slower
#: past that at larger batches; the index costs 8 bytes per element)
SMALL_COL2IM = 1 << 15


def strided(xp: Any, a: Any, shape: tuple, strides: tuple) -> Any:
    """``as_strided(a, shape, strides)`` (a view from ``a``'s first element); for a
    C-contiguous numpy array through the ``ndarray`` constructor, which checks the bounds
    and is ten times cheaper than the wrapper."""
    if xp is np and a.flags.c_contiguous:
        return np.ndarray(shape, a.dtype, a, 0, strides)
    return xp.lib.stride_tricks.as_strided(a, shape, strides)


class Workspace:
    """Carves consecutive arrays out of one temp-space buffer (or allocates them)."""

    def __init__(self, xp: Any, dtype: Any, sizes: Sequence[int], resource: Any = None) -> None:
        self.xp, self.dtype = xp, dtype
        total = int(sum(sizes))
        if resource is not None and total * np.dtype(dtype).itemsize > SMALL_WORKSPACE:
            self.buf = resource.get_space((total,), dtype)
        else:
            self.buf = xp.empty((max(total, 1),), dtype=dtype)
        self.pos = 0

    def take(self, shape: Sequence[int]) -> Any:
        n = prod(shape)
        a = self.buf[self.pos:self.pos + n].reshape(tuple(shape))
        self.pos += n
        return a


class ConvGeom:
    """Geometry of a convolution ``x (N, C, *in_sp) * w (F, C/G, *kernel) -> (N, F, *out)``."""

    def __init__(self, N: int, C: int, F: int, G: int, in_sp: Sequence[int], kernel: Sequence[int],
                 stride: Sequence[int], dilate: Sequence[int], pad: Sequence[int]) -> None:
        self.N, self.C, self.F, self.G = int(N), int(C), int(F), int(G)
        self.in_sp, self.kernel = tuple(in_sp), tuple(kernel)
        self.stride, self.dilate, self.pad = tuple(stride), tuple(dilate), tuple(pad)
        self.nd = len(self.kernel)
        self.pad_sp = tuple(i + 2 * p for i, p in zip(self.in_sp, self.pad))
        self.out_sp = tuple((i - d * (k - 1) - 1) // s + 1
                            for i, k, s, d in zip(self.pad_sp, self.kernel, self.stride, self.dilate))
        self.K = prod(self.kernel)
        self.O = prod(self.out_sp)
        self.P = prod(self.pad_sp)
        # row-major element strides of the padded spatial grid
        st, acc = [], 1
        for s in reversed(self.pad_sp):
            st.append(acc)
            acc *= s
        self.sp_strides = tuple(reversed(st))
        self.flat = all(s == 1 for s in self.stride)
        if self.flat:
            self.L = sum((o - 1) * s for o, s in zip(self.out_sp, self.sp_strides)) + 1
            if self.L > _FLAT_MAX_JUNK * self.O:
                self.flat = False
        self.csn = (all(s == 1 for s in self.stride) and self.C // max(self.G, 1) * self.K >= CSN_MIN_ROWS)
        if self.csn:
            self.flat = False
        self.ncols = self.L if self.flat else self.O  # columns per sample
        self.CK = self.C * self.K
        self.cols_size = self.CK * self.N * self.ncols
        self.needs_pad = any(p > 0 for p in self.pad)
        #: forward workspace: padded input, columns, GEMM result
        self.fwd_sizes = (self.N * self.C * self.P if self.needs_pad or self.csn else 0, self.cols_size,
                          self.F * self.N * self.ncols)
        self._views: dict = {}  # itemsize -> _Views
        self._col2im: list | None = None
        self._scatter: Any = None
        inner = tuple(slice(p, p + i) for p, i in zip(self.pad, self.in_sp))
        if self.csn:
            self._crop_index = (slice(None),) + inner + (slice(None),)
            self._crop_perm = (1 + self.nd, 0) + tuple(range(1, 1 + self.nd))
        else:
            self._crop_index = (slice(None), slice(None)) + inner
            self._crop_perm = (1, 0) + tuple(range(2, 2 + self.nd))

    def views(self, itemsize: int) -> "_Views":
        """The strided views' shapes and byte strides for ``itemsize`` (cached)."""
        v = self._views.get(itemsize)
        if v is None:
            v = self._views[itemsize] = _Views(self, itemsize)
        return v

    def col2im_slices(self) -> list:
        """Per kernel offset, the index into the data-gradient buffer that ``col2im``
        adds that offset's columns to (cached)."""
        if self._col2im is None:
            out = []
            for off in self.offsets():
                if self.csn:
                    sl = tuple(slice(a * d, a * d + o)
                               for a, d, o in zip(off[:-1], self.dilate[:-1], self.out_sp[:-1]))
                    a0 = off[-1] * self.dilate[-1] * self.N
                    out.append((slice(None),) + sl + (slice(a0, a0 + self.out_sp[-1] * self.N),))
                elif self.flat:
                    o = sum(a * d * s for a, d, s in zip(off, self.dilate, self.sp_strides))
                    out.append((slice(None), slice(None), slice(o, o + self.L)))
                else:
                    out.append((slice(None), slice(None)) + tuple(
                        slice(a * d, a * d + s * (o - 1) + 1, s)
                        for a, d, s, o in zip(off, self.dilate, self.stride, self.out_sp)))
            self._col2im = out
        return self._col2im

    @property
    def in_shape(self) -> tuple[int, ...]:
        return (self.N, self.C) + self.in_sp

    @property
    def dx_shape(self) -> tuple[int, ...]:
        """Shape of the padded data-gradient buffer that ``col2im`` fills."""
        return (self.C,) + self.pad_sp + (self.N,) if self.csn else (self.C, self.N) + self.pad_sp

    @property
    def out_shape(self) -> tuple[int, ...]:
        return (self.N, self.F) + self.out_sp

    def per_sample_elems(self, backward: bool) -> int:
        """Temporary elements one sample needs (forward or backward)."""
        pad = self.C * self.P if self.needs_pad or self.csn else 0
        if backward:
            return self.F * self.ncols + pad + 2 * self.CK * self.ncols + self.C * self.P
        return pad + self.CK * self.ncols + self.F * self.ncols

    def offsets(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*[range(k) for k in self.kernel]))

    # -- layout helpers ------------------------------------------------------------------------
    def padded(self, xp: Any, x: Any, ws: Workspace | None) -> Any:
        """``x`` zero-padded (a C-contiguous array; ``x`` itself when no padding); in the
        csn layout ``(C, *padded, N)``."""
        if self.csn:
            xc = ws.take((self.C,) + self.pad_sp + (self.N,)) if ws is not None else xp.empty(
                (self.C,) + self.pad_sp + (self.N,), dtype=x.dtype)
            if self.needs_pad:
                xc.fill(0)
            inner = (slice(None),) + tuple(slice(p, p + i) for p, i in zip(self.pad, self.in_sp)) + (slice(None),)
            xp.copyto(xc[inner], x.transpose((1,) + tuple(range(2, 2 + self.nd)) + (0,)))
            return xc
        if not self.needs_pad:
            return x if x.flags.c_contiguous else xp.ascontiguousarray(x)
        xpd = ws.take((self.N, self.C) + self.pad_sp) if ws is not None else xp.empty(
            (self.N, self.C) + self.pad_sp, dtype=x.dtype)
        xpd.fill(0)
        xpd[(slice(None), slice(None)) + tuple(slice(p, p + i) for p, i in zip(self.pad, self.in_sp))] = x
        return xpd

    def im2col(self, xp: Any, xpd: Any, cols: Any) -> Any:
        """Fill ``cols`` (``CK * N * ncols`` elements) from padded input; returns (CK, N*ncols)."""
        v = self.views(xpd.itemsize)
        view = strided(xp, xpd, v.cols_shape, v.cols_strides)
        xp.copyto(cols.reshape(v.cols_shape), view)
        return cols.reshape(self.CK, self.N * self.ncols)

    def cols_as_out(self, xp: Any, y: Any) -> Any:
        """View of ``y`` (F, N*ncols) as (N, F, *out)."""
        if self.csn:
            return y.reshape((self.F,) + self.out_sp + (self.N,)).transpose(
                (1 + self.nd, 0) + tuple(range(1, 1 + self.nd)))
        if self.flat:
            return strided(xp, y, self.out_shape, self.views(y.itemsize).out_strides)
        perm = (1, 0) + tuple(range(2, 2 + self.nd))
        return y.reshape((self.F, self.N) + self.out_sp).transpose(perm)

    def out_to_cols(self, xp: Any, dy: Any, buf: Any) -> Any:
        """(N, F, *out) -> (F, N*ncols) with zero junk columns, written into ``buf``."""
        y = buf.reshape(self.F, self.N * self.ncols)
        if self.flat and self.L != self.O:
            y.fill(0)
        xp.copyto(self.cols_as_out(xp, y), dy)
        return y

    def _col2im_views(self, dcols: Any, dxt: Any) -> tuple[Any, Any]:
        """``dxt`` and ``dcols`` reshaped so that kernel offset ``k`` adds ``dc[:, k]``
        to ``dv[col2im_slices()[k]]``."""
        C, N = self.C, self.N
        if self.csn:
            # dxt (C, *pad_sp, N) seen as (C, *pad_sp[:-1], pad_sp[-1] * N)
            return (dxt.reshape((C,) + self.pad_sp[:-1] + (self.pad_sp[-1] * N,)),
                    dcols.reshape((C, self.K) + self.out_sp[:-1] + (self.out_sp[-1] * N,)))
        if self.flat:
            return dxt.reshape(C, N, self.P), dcols.reshape((C, self.K, N, self.L))
        return dxt, dcols.reshape((C, self.K, N) + self.out_sp)

    def scatter_index(self) -> Any:
        """For each element of the columns (C-order, ``cols_size``), its flat index in the
        data-gradient buffer (``dx_shape``) that ``col2im`` adds it to (cached)."""
        if self._scatter is None:
            pos = np.arange(prod(self.dx_shape), dtype=np.intp).reshape(self.dx_shape)
            dv, dc = self._col2im_views(np.empty(self.cols_size, dtype=np.intp), pos)
            for k, sl in enumerate(self.col2im_slices()):
                dc[:, k] = dv[sl]
            self._scatter = dc.reshape(-1)
        return self._scatter

    def col2im(self, xp: Any, dcols: Any, dxt: Any) -> Any:
        """Scatter-add ``dcols`` (CK, N*ncols) into ``dxt`` (``dx_shape``; overwritten)."""
        if xp is np and self.cols_size <= SMALL_COL2IM:
            # one bincount instead of prod(kernel) slice additions (a few us each)
            dxt.reshape(-1)[...] = np.bincount(self.scatter_index(), weights=dcols.reshape(-1),
                                               minlength=dxt.size)
            return dxt
        dxt.fill(0)
        dv, dc = self._col2im_views(dcols, dxt)
        for k, sl in enumerate(self.col2im_slices()):
            dv[sl] += dc[:, k]
        return dxt

    def store_out(self, xp: Any, y: Any, b: Any | None, out: Any, req: OpReqType) -> None:
        """``out (N, F, *out) (req)= y + b`` for the GEMM result ``y (F, N*ncols)``."""
        yv = self.cols_as_out(xp, y)
        if writes(req):
            if b is not None and self.flat:
                # bias on the contiguous GEMM result, then a plain strided copy: numpy's add
                # into a strided output costs about twice its copy (LeNet conv1, 32 samples:
                # 0.20 -> 0.12 ms)
                y += b.reshape(self.F, 1)
                xp.copyto(out, yv)
            elif b is not None:
                xp.add(yv, _bias_view(b, self.nd), out=out)
            else:
                xp.copyto(out, yv)
        else:
            out += yv
            if b is not None:
                out += _bias_view(b, self.nd)

    def store_dx(self, xp: Any, dxt: Any, dx: Any, req: OpReqType) -> None:
        """``dx (req)=`` the padded data-gradient buffer ``dxt`` (``dx_shape``), cropped."""
        _store(xp, dx, req, self.crop_t(dxt))

    def crop_t(self, dxt: Any) -> Any:
        """(C, N, *pad_sp) -> view (N, C, *in_sp) without the padding; csn: from
        (C, *pad_sp, N)."""
        if self.csn:
            return dxt[self._crop_index].transpose(self._crop_perm)
        return dxt.transpose(self._crop_perm)[self._crop_index]


class _Views:
    """Shapes and byte strides of a geometry's strided views for one item size: the
    im2col source view of the (C-contiguous) padded input, and (flat layout) the
    ``(N, F, *out)`` view of the GEMM result."""

    __slots__ = ("cols_shape", "cols_strides", "out_strides")

    def __init__(self, g: ConvGeom, it: int) -> None:
        N, C = g.N, g.C
        if g.csn:
            # input (C, *pad_sp, N); rows (C, *kernel), columns (*out[:-1], out[-1] * N)
            self.cols_shape = (C,) + g.kernel + g.out_sp[:-1] + (g.out_sp[-1] * N,)
            self.cols_strides = ((g.P * N * it,) + tuple(d * s * N * it for d, s in zip(g.dilate, g.sp_strides))
                                 + tuple(s * N * it for s in g.sp_strides[:-1]) + (it,))
        else:
            # input (N, C, *pad_sp)
            sn, sc = C * g.P * it, g.P * it
            kst = tuple(d * s * it for d, s in zip(g.dilate, g.sp_strides))
            if g.flat:
                self.cols_shape = (C,) + g.kernel + (N, g.L)
                self.cols_strides = (sc,) + kst + (sn, it)
            else:
                self.cols_shape = (C,) + g.kernel + (N,) + g.out_sp
                self.cols_strides = (sc,) + kst + (sn,) + tuple(st * s * it for st, s in zip(g.sp_strides, g.stride))
        self.out_strides = (g.L * it, N * g.L * it) + tuple(s * it for s in g.sp_strides) if g.flat else ()


#: temporaries per batch chunk aimed at (bytes): chunks that stay in the last-level cache
#: make im2col -> GEMM -> col2im stream from cache (about 20% faster on LeNet's conv2)
CACHE_BUDGET = 8 << 20
#: where not even two samples fit in ``CACHE_BUDGET`` (ResNet's 3x3 layers), chunks of
#: one sample only shrink the GEMMs and repeat the weight-gradient accumulation: chunks
#: then aim at this size instead (ResNet-18 CIFAR convolutions 30% faster backward)
STREAM_BUDGET = 64 << 20


def batch_chunk(g: ConvGeom, itemsize: int, workspace_mb: int, backward: bool) -> int:
    """Samples per chunk: the temporaries stay within ``workspace_mb`` (MXNet's
    ``workspace`` argument) and near ``CACHE_BUDGET`` (``STREAM_BUDGET`` where two
    samples exceed it); chunks are balanced; at least one sample."""
    per = g.per_sample_elems(backward) * itemsize
    if per <= 0:
        return g.N
    limit = CACHE_BUDGET if 2 * per <= CACHE_BUDGET else STREAM_BUDGET
    if workspace_mb > 0:
        limit = min(limit, int(workspace_mb) << 20)
    nb = max(1, min(g.N, limit // per))
    nchunks = -(-g.N // nb)
    return -(-g.N // nchunks)


#: skinny GEMMs (both dimensions of the small operand <= SKINNY) over many columns run
#: as a batch of column blocks of this width: OpenBLAS (one thread) takes 20-25% less time
#: for LeNet's conv1 forward / data-gradient GEMMs (20x25 @ 25x21376) and half the time
#: for its weight gradient (25x21376 @ 21376x20) with blocks up to ~1500 columns; with
#: 2048 or more, none (bench/lenet_ops_bench.py; docs/performance.md)
GEMM_BLOCK = 1024
SKINNY = 64


def _blocks(xp: Any, n: int) -> int:
    return n // GEMM_BLOCK if xp is np and n >= 2 * GEMM_BLOCK else 0


def matmul_wide(xp: Any, a: Any, b: Any, out: Any) -> Any:
    """``out = a @ b`` for 2-D ``a (M, K)`` and ``b (K, N)``; column blocks where ``a`` is
    small and ``N`` large."""
    M, K = a.shape
    N = b.shape[1]
    nb = _blocks(xp, N) if M <= SKINNY and K <= SKINNY else 0
    if nb < 2 or b.strides[1] != b.itemsize or out.strides[1] != out.itemsize:
        return xp.matmul(a, b, out=out)
    B, it = GEMM_BLOCK, b.itemsize
    st = np.lib.stride_tricks.as_strided
    xp.matmul(a, st(b, (nb, K, B), (B * it, b.strides[0], it)),
              out=st(out, (nb, M, B), (B * it, out.strides[0], it)))
    if nb * B < N:
        xp.matmul(a, b[:, nb * B:], out=out[:, nb * B:])
    return out


def matmul_long(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` for 2-D ``a (M, K)`` and ``b (K, N)``; the sum of blocks of the inner
    dimension where the result is small and ``K`` large (a new array)."""
    M, K = a.shape
    N = b.shape[1]
    nb = _blocks(xp, K) if M <= SKINNY and N <= SKINNY else 0
    if nb < 2 or a.strides[1] != a.itemsize:
        return xp.matmul(a, b)
    B, it = GEMM_BLOCK, a.itemsize
    st = np.lib.stride_tricks.as_strided
    acc = xp.matmul(st(a, (nb, M, B), (B * it, a.strides[0], it)),
                    st(b, (nb, B, N), (B * b.strides[0], b.strides[0], b.strides[1]))).sum(axis=0)
    if nb * B < K:
        acc += xp.matmul(a[:, nb * B:], b[nb * B:])
    return acc


def bias_grad(xp: Any, dy: Any, db: Any, req: OpReqType) -> None:
    """``db (req)= dy.sum over every axis but 1``, as a matrix-vector product per sample
    (BLAS): 3-5x faster than numpy's reduction over axes (0, 2, ...) (LeNet conv1's
    (64,20,24,24): 0.05 vs 0.14 ms)."""
    if req == OpReqType.null:
        return
    n, c = dy.shape[0], dy.shape[1]
    sp = prod(dy.shape[2:])
    if sp <= 1 or not dy.flags.c_contiguous or dy.size <= 4096:  # small: one reduction call
        s = dy.sum(axis=(0,) + tuple(range(2, dy.ndim)))
    else:
        s = xp.matmul(dy.reshape(n, c, sp), xp.ones((sp,), dtype=dy.dtype)).sum(axis=0)
    if writes(req):
        xp.copyto(db, s)
    else:
        db += s


def _store(xp: Any, out: Any, req: OpReqType, value: Any) -> None:
    if req == OpReqType.null:
        return
    if req == OpReqType.add:
        out += value
    else:
        xp.copyto(out, value)


def _bias_view(b: Any, nd: int) -> Any:
    return b.reshape((1, b.shape[0]) + (1,) * nd)


def conv_forward(xp: Any, g: ConvGeom, x: Any, w: Any, b: Any | None, out: Any, req: OpReqType,
                 resource: Any = None) -> None:
    """``out (req)= conv(x, w) + b``."""
    if req == OpReqType.null:
        return
    ws = Workspace(xp, x.dtype, g.fwd_sizes, resource)
    xpd = g.padded(xp, x, ws)
    cols = g.im2col(xp, xpd, ws.take((g.cols_size,)))
    y = ws.take((g.F, g.N * g.ncols))
    G = g.G
    if G == 1:
        matmul_wide(xp, w.reshape(g.F, g.CK), cols, y)
    else:
        xp.matmul(w.reshape(G, g.F // G, g.CK // G), cols.reshape(G, g.CK // G, g.N * g.ncols),
                  out=y.reshape(G, g.F // G, g.N * g.ncols))
    g.store_out(xp, y, b, out, req)


def conv_backward(xp: Any, g: ConvGeom, x: Any | None, w: Any, dy: Any, dx: Any | None, dx_req: OpReqType,
                  dw: Any | None, dw_req: OpReqType, db: Any | None, db_req: OpReqType,
                  resource: Any = None) -> None:
    """Gradients of ``conv(x, w) + b`` for upstream ``dy``, each honouring its req."""
    need_dx = dx is not None and dx_req != OpReqType.null
    need_dw = dw is not None and dw_req != OpReqType.null
    need_db = db is not None and db_req != OpReqType.null
    if need_db:
        bias_grad(xp, dy, db, db_req)
    if not (need_dx or need_dw):
        return
    G, Fg, CKg, NL = g.G, g.F // g.G, g.CK // g.G, g.N * g.ncols
    sizes = [g.F * NL]
    if need_dw:
        sizes += [g.N * g.C * g.P if g.needs_pad or g.csn else 0, g.cols_size]
    if need_dx:
        sizes += [g.cols_size, g.C * g.N * g.P]
    ws = Workspace(xp, dy.dtype, sizes, resource)
    dyc = g.out_to_cols(xp, dy, ws.take((g.F * NL,))).reshape(G, Fg, NL)
    if need_dw:
        xpd = g.padded(xp, x, ws)
        cols = g.im2col(xp, xpd, ws.take((g.cols_size,))).reshape(G, CKg, NL)
        if G == 1 and NL < g.CK and dw.flags.c_contiguous:
            # fewer columns than weights per filter (ResNet's deep layers): dy @ cols^T in
            # the gradient's own layout; the transposed copy of (cols @ dy^T) cost more than
            # the GEMM (512 filters of 4608 weights, 128 columns: 19 -> 7 ms, same bits)
            if writes(dw_req):
                xp.matmul(dyc[0], cols[0].T, out=dw.reshape(g.F, g.CK))
            else:
                dw += xp.matmul(dyc[0], cols[0].T).reshape(dw.shape)
        else:
            # (cols @ dy^T)^T: BLAS is faster with the long axis as the inner product here
            if G == 1:
                dwt = matmul_long(xp, cols[0], dyc[0].T).T.reshape(dw.shape)
            else:
                dwt = xp.matmul(cols, dyc.transpose(0, 2, 1)).transpose(0, 2, 1).reshape(dw.shape)
            if writes(dw_req):
                xp.copyto(dw, dwt)
            else:
                dw += dwt
    if need_dx:
        dcols = ws.take((g.cols_size,)).reshape(G, CKg, NL)
        if G == 1:
            matmul_wide(xp, w.reshape(Fg, CKg).T, dyc[0], dcols[0])
        else:
            xp.matmul(w.reshape(G, Fg, CKg).transpose(0, 2, 1), dyc, out=dcols)
        dxt = g.col2im(xp, dcols.reshape(g.CK, NL), ws.take(g.dx_shape))
        g.store_dx(xp, dxt, dx, dx_req)


def conv_backward_data(xp: Any, g: ConvGeom, w: Any, dy: Any, dx: Any, req: OpReqType, resource: Any = None) -> None:
    """``dx (req)= conv_transpose(dy, w)`` (the data gradient of a convolution)."""
    conv_backward(xp, g, None, w, dy, dx, req, None, OpReqType.null, None, OpReqType.null, resource)


def conv_backward_weight(xp: Any, g: ConvGeom, x: Any, dy: Any, dw: Any, req: OpReqType, resource: Any = None) -> None:
    """``dw (req)= dconv/dw`` for input ``x`` and upstream ``dy``."""
    conv_backward(xp, g, x, None, dy, None, OpReqType.null, dw, req, None, OpReqType.null, resource)
