"""Parameter structs, shape checks and the operator / property scaffolding shared by
Convolution and Deconvolution."""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, ParamError, Params, Shape
from plexnet.resource import ResourceRequest

from ._common import shape_assign, writes
from ._convcore import SMALL_WORKSPACE, ConvGeom, batch_chunk, bias_grad
from ._split import HelperSpace, backed_off, one_blas_thread, run_items, ways

#: batch chunks at least, when the chunks are shared with the helper thread (load balance)
SPLIT_CHUNKS = 4

LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
CUDNN_TUNE = ("off", "limited_workspace", "fastest")


class ConvParamBase(Params):
    kernel = Field(Shape, doc="convolution kernel size: (w,), (h, w) or (d, h, w)")
    stride = Field(Shape, default=Shape(()), doc="stride; default 1 per axis")
    dilate = Field(Shape, default=Shape(()), doc="dilation; default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="zero padding per side; default 0")
    num_filter = Field(int, low=1, high=100000, doc="number of output channels")
    num_group = Field(int, default=1, low=1, doc="number of groups")
    workspace = Field(int, default=1024, low=0, doc="workspace limit in MB (ignored by the xp implementation)")
    cudnn_tune = Field(str, default=None, optional=True, choices=CUDNN_TUNE)
    cudnn_off = Field(bool, default=False)
    layout = Field(str, default=None, optional=True, choices=LAYOUTS)

    def __post_init__(self, op: str) -> None:
        nd = len(self.kernel)
        if nd not in (1, 2, 3):
            raise ParamError(f"{op}: kernel must have 1, 2 or 3 dimensions, got {self.kernel}")
        if any(k < 1 for k in self.kernel):
            raise ParamError(f"{op}: kernel sizes must be >= 1, got {self.kernel}")
        for name, default, low in (("stride", 1, 1), ("dilate", 1, 1), ("pad", 0, 0)):
            v = getattr(self, name)
            if len(v) == 0:
                v = Shape((default,) * nd)
            elif len(v) != nd:
                raise ParamError(f"{op}: {name} {tuple(v)} must have as many dimensions as kernel {tuple(self.kernel)}")
            if any(a < low for a in v):
                raise ParamError(f"{op}: {name} values must be >= {low}, got {tuple(v)}")
            object.__setattr__(self, name, Shape(v))
        if self.layout is not None and len(self.layout) != nd + 2:
            raise ParamError(f"{op}: layout {self.layout!r} does not fit a {nd}-d kernel")

    def channels_last(self) -> bool:
        return self.layout is not None and not self.layout.startswith("NC")


def unsupported_layout(op: str, p: Any) -> NotImplementedError:
    return NotImplementedError(f"{op}: layout {p.layout!r} is not supported by the xp implementation "
                               f"(use channels-first {'NCW NCHW NCDHW'.split()[len(p.kernel) - 1]!r})")


class ConvOpBase(Operator):
    """What the Convolution and Deconvolution operators share: the layout check, one
    ``ConvGeom`` per data shape (``make_geom``), workspace-bounded batch chunks, and
    backward: the bias gradient, then ``backward_chunk`` per batch chunk."""

    kind = ""  # the operator's name, for messages

    def __init__(self, param: ConvParamBase) -> None:
        if param.channels_last():
            raise unsupported_layout(self.kind, param)
        self.p = param
        self._geoms: dict = {}
        # (data shape, item size, backward, at_least) -> _chunks' list: the operator is
        # reused call after call (one per parameters and context), so this is per-call
        # work done once
        self._plans: dict = {}

    def make_geom(self, dshape: tuple) -> ConvGeom:
        raise NotImplementedError

    def geom(self, dshape: tuple) -> ConvGeom:
        g = self._geoms.get(dshape)
        if g is None:
            g = self._geoms[dshape] = self.make_geom(dshape)
        return g

    def _chunks(self, x: Any, backward: bool, at_least: int = 1) -> list:
        """(start, stop, geometry) batch slices keeping temporaries within ``workspace``,
        at least ``at_least`` of them where the batch allows (cached per shape)."""
        key = (x.shape, x.itemsize, backward, at_least)
        chunks = self._plans.get(key)
        if chunks is None:
            chunks = self._plans[key] = self._make_chunks(x, backward, at_least)
        return chunks

    def _make_chunks(self, x: Any, backward: bool, at_least: int) -> list:
        g = self.geom(tuple(x.shape))
        nb = batch_chunk(g, x.itemsize, self.p.workspace, backward)
        if at_least > 1:
            nb = min(nb, -(-g.N // at_least))
        if nb >= g.N:
            return [(0, g.N, g)]
        return [(s, min(s + nb, g.N), self.geom((min(s + nb, g.N) - s,) + tuple(x.shape[1:])))
                for s in range(0, g.N, nb)]

    def single(self, xp: Any, x: Any, elements: int, backward: bool) -> ConvGeom | None:
        """The geometry where ``for_chunks`` would run one chunk on this thread with the
        BLAS as it is (the caller then runs the kernel itself: no closure, no slices),
        else None."""
        if ways(xp, x.shape[0], elements) == 2 or backed_off(xp):
            return None
        chunks = self._chunks(x, backward)
        return chunks[0][2] if len(chunks) == 1 else None

    def for_chunks(self, xp: Any, x: Any, elements: int, backward: bool, res: Any, fn: Any) -> list:
        """``fn(start, stop, geometry, resource, slot)`` for each batch chunk of ``x``: on
        this thread (slot 0), or shared with ``_split``'s helper thread (slot 1, its own
        temp space) when the engine gives this worker both cores. Returns how many chunks
        each slot ran."""
        if ways(xp, x.shape[0], elements) == 2:
            chunks = self._chunks(x, backward, SPLIT_CHUNKS)
            if len(chunks) > 1:
                return run_items(len(chunks), lambda i, slot: fn(*chunks[i], res if slot == 0 else HelperSpace(),
                                                                 slot))
        chunks = self._chunks(x, backward)
        if backed_off(xp):
            with one_blas_thread():
                for s, e, g in chunks:
                    fn(s, e, g, res, 0)
        else:
            for s, e, g in chunks:
                fn(s, e, g, res, 0)
        return [len(chunks), 0]

    def backward_chunk(self, xp: Any, g: ConvGeom, x: Any, w: Any, dy: Any, dx: Any, dx_req: OpReqType,
                       dw: Any, dw_req: OpReqType, res: Any) -> None:
        """Data and weight gradients of one batch chunk (``x``, ``dy``, ``dx`` are sliced)."""
        raise NotImplementedError

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        x, w, dy = in_data[0], in_data[1], out_grad[0]
        res = ctx.requested[0] if ctx.requested else None
        if not self.p.no_bias:
            bias_grad(xp, dy, in_grad[2], req[2])
        need_dw = req[1] != OpReqType.null
        # each slot sums its chunks' weight gradients in its own array (slot 0: the
        # gradient itself, with its req; slot 1: a temporary added at the end)
        dws = [in_grad[1], None]
        dw_reqs = [req[1] if need_dw else OpReqType.null, OpReqType.write if need_dw else OpReqType.null]

        def chunk(s, e, g, r, slot):
            if slot == 1 and need_dw and dws[1] is None:
                dws[1] = xp.empty_like(in_grad[1])
            self.backward_chunk(xp, g, x[s:e], w, dy[s:e], in_grad[0][s:e], req[0], dws[slot], dw_reqs[slot], r)
            if need_dw:
                dw_reqs[slot] = OpReqType.add  # the later chunks add to the weight gradient
        done = self.for_chunks(xp, x, max(x.size, dy.size), True, res, chunk)
        if need_dw and done[1]:
            if done[0]:
                in_grad[1] += dws[1]
            elif writes(req[1]):
                xp.copyto(in_grad[1], dws[1])
            else:
                in_grad[1] += dws[1]


class ConvPropBase(OperatorProperty):
    """Arguments, shapes, resources and backward dependencies of Convolution and
    Deconvolution. Subclasses give ``weight_shape(d)``, which first checks the data shape
    ``d``, and ``out_shape(d)``."""

    def list_arguments(self):
        return ["data", "weight"] if self.param.no_bias else ["data", "weight", "bias"]

    def weight_shape(self, d: tuple) -> tuple:
        raise NotImplementedError

    def out_shape(self, d: tuple) -> tuple:
        raise NotImplementedError

    def infer_shape(self, in_shape):
        p, op, names = self.param, self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None], []
        shape_assign(op, shapes, 1, names, self.weight_shape(d))
        if not p.no_bias:
            shape_assign(op, shapes, 2, names, (p.num_filter,))
        return shapes, [self.out_shape(d)], []

    def geom(self, d: tuple) -> ConvGeom | None:
        """The kernels' geometry for data shape ``d`` (workspace sizing); None: unknown."""
        return None

    def _temp_space(self, in_shape) -> list:
        """The temp space, unless every temporary of forward and backward (any dtype up
        to 8 bytes) fits in ``SMALL_WORKSPACE``: the kernels then allocate their own, and
        the call neither looks the resource up nor serialises on its variable. Cached per
        data shape (the tape asks at every backward)."""
        d = in_shape[0] if in_shape else None
        key = None if d is None else tuple(d)
        cache = self.__dict__.setdefault("_temp_space_cache", {})
        small = cache.get(key)
        if small is None:
            g = self.geom(tuple(int(v) for v in d)) if d is not None and all(d) else None
            small = cache[key] = g is not None and g.per_sample_elems(True) * g.N * 8 <= SMALL_WORKSPACE
        return [] if small else [ResourceRequest(ResourceRequest.kTempSpace)]

    def forward_resource(self, in_shape):
        return self._temp_space(in_shape)

    def backward_resource(self, in_shape):
        return self._temp_space(in_shape)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]
