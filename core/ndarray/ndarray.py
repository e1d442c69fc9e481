"""NDArray: an asynchronous n-dimensional array on a device.

Every NDArray is a view (``_data``, a raw numpy/cupy array) of a ``Chunk`` (storage block
+ engine variable). Operations are pushed to the dependency engine and return at once;
reading values (``asnumpy``, ``asscalar``, ``wait_to_read``) waits for the operations
that write them. Errors raised while running surface at the next such wait point.
"""
from __future__ import annotations

import numbers
import operator
from builtins import slice as py_slice  # noqa: F401  (MXNet's private alias here; its tests import it)
from typing import Any, Sequence

import numpy as np

from .. import engine as _engine_mod
from ..backends import get_backend
from ..base import PlexnetError, ShapeError
from ..context import HOST_DEVICE_TYPES, Context, current_context
from ..engine.base import FnProperty
from ..operator.fluent import install_fluent
from ..operator.shape_utils import infer_reshape
from .chunk import Chunk, alloc_chunk
from .keys import InvalidSliceError as InvalidSliceError  # raised by indexing; importable from here as before
from .keys import _expand, _is_basic, _one_element_key, _refuse_reversed, _slices, _whole
from ..operator.contract import OpReqType
from ..tape import STATE as _AG
from ..tape import check_inplace, grad_of, mark_variable, record_view
from ..util import is_np_shape
from .. import upcalls

__all__ = ["NDArray", "empty", "array", "zeros", "ones", "full", "arange", "waitall", "mx_real_t",
           "from_numpy_view"]

mx_real_t = np.float32


def _dtype(d: Any) -> np.dtype:
    return np.dtype(mx_real_t if d is None else d)


class NDArray:
    """An asynchronous array; MXNet 1.x ``mx.nd.NDArray`` API."""

    __slots__ = ("_chunk", "_data", "writable", "_ag", "__weakref__")
    # numpy should defer to our reflected operators
    __array_priority__ = 1000.0

    def __init__(self, chunk: Chunk, data: Any, writable: bool = True) -> None:
        self._chunk = chunk
        self._data = data
        self.writable = writable
        self._ag: Any = None  # autograd: (tape node, output index) or None

    # -- properties --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> type:
        return self._data.dtype.type

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def context(self) -> Context:
        return self._chunk.ctx

    ctx = context

    @property
    def stype(self) -> str:
        return "default"

    @property
    def handle(self) -> Chunk:
        return self._chunk

    @property
    def T(self) -> "NDArray":
        if self.ndim < 2:
            return self
        return _invoke("transpose", [self], {})

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __repr__(self) -> str:
        try:
            body = str(self.asnumpy())
        except Exception as e:  # noqa: BLE001 - repr must not raise
            body = f"<error: {e}>"
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{body}\n<NDArray {shape} @{self.context}>"

    # -- synchronisation -------------------------------------------------------------------------
    def wait_to_read(self) -> None:
        """Block until pending writes to this array are done (raises their errors)."""
        _engine_mod.get().wait_for_var(self._chunk.var)

    def wait_to_write(self) -> None:
        _engine_mod.get().wait_for_var(self._chunk.var)

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the values (waits for pending writes)."""
        _engine_mod.get().wait_for_var(self._chunk.var)
        return get_backend(self._chunk.ctx).to_host(self._data)

    def asscalar(self) -> Any:
        """The value of a size-1 array as a numpy scalar (``np.float32`` ...), as MXNet."""
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(-1)[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._chunk.ctx.device_type in HOST_DEVICE_TYPES:
            _engine_mod.get().wait_for_var(self._chunk.var)
            a = self._data  # zero copy
            if copy:
                a = a.copy()
        else:
            a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream: Any = None, **kw: Any) -> Any:
        _engine_mod.get().wait_for_var(self._chunk.var)
        return self._data.__dlpack__(**({"stream": stream} if stream is not None else {}), **kw)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def to_dlpack_for_read(self) -> Any:
        """A DLPack capsule of the values, after pending writes are done."""
        return self.__dlpack__()

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule for writing, after every pending read and write is done."""
        self.wait_to_write()
        try:  # a versioned capsule: numpy imports unversioned ones read-only
            return self._data.__dlpack__(max_version=(1, 0))
        except TypeError:  # an array module without DLPack 1.0
            return self._data.__dlpack__()

    def tostype(self, stype: str) -> "NDArray":
        """A copy in storage type ``stype`` ('default', 'csr' or 'row_sparse')."""
        if stype == "default":
            return self.copy()
        return _sparse_call("cast_storage", self, stype)

    def __bool__(self) -> bool:
        if self.size == 0:  # MXNet: an empty array is False
            return False
        if self.size != 1:
            raise ValueError("the truth value of an NDArray with more than one element is ambiguous")
        return bool(self.asscalar())

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __index__(self) -> int:
        return int(self.asscalar())

    def __hash__(self) -> int:
        return id(self)

    def __getstate__(self) -> dict:
        return {"data": self.asnumpy(), "ctx": (self.context.device_type, self.context.device_id)}

    def __setstate__(self, state: dict) -> None:
        if "handle" in state:  # MXNet's pickle state: one array's raw bytes (NDArray::Save)
            # serialize.load_raw, plugged in by plexnet.ndarray.serialize (which sits above this module)
            data, (dev_type, dev_id) = _sparse_call("load_raw", state["handle"])
            # MXNet without the device loads it on the CPU (a GPU array pickled elsewhere)
            ctx = Context({3: "cpu_pinned", 5: "cpu_shared"}.get(dev_type, "cpu"), dev_id if dev_type != 2 else 0)
            a = array(data, ctx=ctx, dtype=data.dtype)
            self._chunk, self._data, self.writable = a._chunk, a._data, True
            self._ag = None
            return
        a = array(state["data"], ctx=Context(*state["ctx"]), dtype=state["data"].dtype)
        self._chunk, self._data, self.writable = a._chunk, a._data, True
        self._ag = None

    # -- copies -----------------------------------------------------------------------------------
    def copyto(self, other: "NDArray | Context") -> "NDArray":
        """Copy into ``other`` (an NDArray, overwritten) or a new array on a context."""
        if isinstance(other, Context):
            dst = empty(self.shape, other, self.dtype)
        elif isinstance(other, NDArray):
            if other is self or other._chunk is self._chunk and other._data is self._data:
                return other
            if other.shape != self.shape:
                raise ShapeError(f"copyto: shape mismatch, source {self.shape} vs target {other.shape}")
            if other.stype != "default":  # a sparse target: its compact arrays are the truth
                other[:] = self
                return other
            dst = other
        else:
            raise TypeError(f"copyto: target must be an NDArray or Context, got {type(other).__name__}")
        record = _AG.recording and self._ag is not None and _same_host(self, dst)
        if record:
            check_inplace(dst, "copyto")  # MXNet: assigning to an array already in a graph
        _copy(self, dst)
        if record:
            record_view(self, dst, None, name="copyto")  # MXNet records _copyto
        return dst

    def copy(self) -> "NDArray":
        return self.copyto(self.context)

    def as_in_context(self, context: Context) -> "NDArray":
        """Self if already on ``context``, else a copy there."""
        return self if self.context == context else self.copyto(context)

    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        dt = _dtype(dtype)
        if not copy and self._data.dtype == dt:
            return self
        out = empty(self.shape, self.context, dt)
        src, dst = self._data, out._data
        _push(lambda rc: dst.__setitem__(Ellipsis, src), self, (self,), (out,), "astype")
        if _AG.recording and self._ag is not None:
            record_view(self, out, None, name="astype")  # MXNet records it (a Cast)
        return out

    # -- shape views ----------------------------------------------------------------------------
    def reshape(self, *shape: Any, **kwargs: Any) -> "NDArray":
        """A view with a new shape; accepts MXNet codes (0, -1, -2, -3, -4) and ``reverse``."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if "shape" in kwargs:
            shape = tuple(kwargs.pop("shape"))
        reverse = bool(kwargs.pop("reverse", False))
        if kwargs:
            raise TypeError(f"reshape: unknown arguments {list(kwargs)}")
        new = infer_reshape(self.shape, shape, reverse)
        data = self._data
        if not data.flags.c_contiguous:
            return self.copy().reshape(new)
        v = NDArray(self._chunk, data.reshape(new), self.writable)
        return record_view(self, v, None) if _AG.recording else v

    def reshape_like(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``reshape_like(other)``: a view with ``other``'s shape (the operator
        ``reshape_like`` for its ``lhs_begin``/... arguments)."""
        if len(args) == 1 and not kwargs and isinstance(args[0], NDArray):
            return self.reshape(args[0].shape)
        return _invoke("reshape_like", [self, *args], kwargs)

    def expand_dims(self, axis: int, inplace: bool = False) -> "NDArray":
        """A new axis at ``axis``; ``inplace=True`` returns a view sharing memory."""
        if inplace:
            return NDArray(self._chunk, self._data.reshape(_expand(self.shape, axis)), self.writable)
        _expand(self.shape, axis)  # range check with a clear message
        return _invoke("expand_dims", [self], {"axis": axis})

    def flatten(self, inplace: bool = False) -> "NDArray":
        """Collapse all axes but the first; ``inplace=True`` returns a view."""
        if inplace:
            return self.reshape((0, -1))
        return _invoke("flatten", [self], {})

    def squeeze(self, axis: Any = None, inplace: bool = False) -> "NDArray":
        """Drop size-1 axes; ``inplace=True`` returns a view."""
        if inplace:
            ax = axis
            if isinstance(ax, list):
                ax = tuple(ax)
            view = self._data.squeeze(ax)
            # MXNet's method keeps one axis when all go: (1, 1, 1) -> (1,), as the operator
            return NDArray(self._chunk, view.reshape((1,)) if view.ndim == 0 else view, self.writable)
        return _invoke("squeeze", [self], {} if axis is None else {"axis": axis})

    def diag(self, k: int = 0, **kwargs: Any) -> "NDArray":
        return _invoke("diag", [self, k], kwargs)

    def split_v2(self, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Any:
        return split_v2(self, indices_or_sections, axis, squeeze_axis)

    def broadcast_to(self, shape: Sequence[int]) -> "NDArray":
        """Broadcast to ``shape``: fewer axes than ``shape`` are prepended with size 1;
        only axes of size 1 may change (``ValueError`` otherwise, as MXNet)."""
        shape = tuple(shape)
        cur = self.shape
        if len(shape) < len(cur) or any(c != s and c != 1 for c, s in
                                         zip((1,) * (len(shape) - len(cur)) + cur, shape)):
            raise ValueError(f"operands could not be broadcast together with remapped shapes[original->remapped]: "
                             f"{cur} and requested shape {shape}")
        if len(cur) < len(shape):
            cur = (1,) * (len(shape) - len(cur)) + cur
            return _invoke("broadcast_to", [self.reshape(cur)], {"shape": shape})
        return _invoke("broadcast_to", [self], {"shape": shape})

    def broadcast_like(self, other: "NDArray") -> "NDArray":
        """Broadcast to ``other``'s shape (MXNet's method: ``broadcast_to(other.shape)``,
        so a lower rank is promoted; the ``broadcast_like`` operator wants equal ranks)."""
        return self.broadcast_to(other.shape)

    # -- indexing ---------------------------------------------------------------------------------
    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key: Sequence[slice], shape: Sequence[int]) -> bool:
        """Whether slicing ``shape`` with ``slc_key`` (one slice per axis) gives contiguous
        elements (MXNet's helper, which its test_ndarray checks against numpy's flags): from
        the right, once an axis is a proper subset, the axes left of it take <= 1 element."""
        assert len(slc_key) == len(shape)
        lens = [len(range(*slc.indices(n))) for slc, n in zip(slc_key, shape)]
        if int(np.prod(lens)) in (0, 1):
            return True
        is_subset = False
        for slc, n, num in zip(reversed(slc_key), reversed(shape), reversed(lens)):
            step = slc.indices(n)[2]
            if num == 0:
                return True
            if num > 1 and (step > 1 or step < 0):
                return False
            if is_subset:
                if num > 1:
                    return False
            elif num < n:
                is_subset = True
        return True

    def __getitem__(self, key: Any) -> "NDArray":
        if key.__class__ is slice and key.step in (None, 1) and self._data.ndim:
            _refuse_reversed(self, key, "index")  # MXNet's x[start:stop] on axis 0 refuses start > stop
        if _is_basic(key):
            view = self._data[key]
            if view.ndim == 0 and self._data.ndim and not is_np_shape():
                key, view = _one_element_key(self._data, key)
            # MXNet shares memory only where the indexed elements are contiguous
            # (x[0], x[1, :1]); x[:, :, 1] or x[::2] is a copy (its slice operator)
            if view.flags.c_contiguous or view.size <= 1:
                v = NDArray(self._chunk, view, self.writable)
                return record_view(self, v, key) if _AG.recording else v
        key = _host_key(key)
        # advanced indexing (and a non-contiguous basic index): a copy, computed on the engine
        out_shape = np.empty(self.shape, dtype=np.bool_)[key].shape
        out = empty(out_shape, self.context, self.dtype)
        src, dst, k = self._data, out._data, _device_key(key, self)
        _push(lambda rc: dst.__setitem__(Ellipsis, src[k]), self, (self,), (out,), "getitem")
        return record_view(self, out, k, True) if _AG.recording else out

    def __setitem__(self, key: Any, value: Any) -> None:
        if _AG.recording:
            # MXNet assigns a part with _slice_assign(x, value, out=x), which reads x: refused when
            # the value is recorded; the whole array is a copy (x[:] = y) and may be recorded
            check_inplace(self, "setitem", () if _whole(key) or not isinstance(value, NDArray) else (self, value))
        if not self.writable:
            raise PlexnetError("this NDArray is read-only")
        dst = self._data
        key = _host_key(key)
        if _is_basic(key):
            _refuse_reversed(self, key, "assign to")  # as MXNet: no slice running against its step
            k = key
        else:
            k = _device_key(key, self)
        if isinstance(value, NDArray):
            if value.context != self.context:
                value = value.as_in_context(self.context)
            if _AG.recording and value._ag is not None and _whole(key) and value.stype == "default":
                # MXNet: x[:] = y is y.copyto(x) (after broadcast_to), recorded as _copyto
                if value.shape != self.shape:
                    value = value.broadcast_to(self.shape)
                value.copyto(self)
                return
            src = value._data
            if _is_basic(key) and src.ndim and src.size == 1 and dst[k].ndim == 0:
                src = src.reshape(())  # MXNet: x[i, j] = nd.ones((1,)) (a scalar index gives shape (1,))
            _push(lambda rc: dst.__setitem__(k, src), self, (value,), (self,), "setitem")
        elif isinstance(value, numbers.Number) or isinstance(value, np.generic):
            v = value
            _push(lambda rc: dst.__setitem__(k, v), self, (), (self,), "setitem")
        else:
            if self.context.device_type == "cpu":
                # MXNet's synchronous copy from host memory: wait until no operation
                # uses this array, then copy on the calling thread (no private copy).
                _engine_mod.get().wait_for_var(self._chunk.var)
                try:
                    if (isinstance(value, (list, tuple)) and len(value) == 1 or isinstance(value, np.ndarray)
                            and value.ndim and value.size == 1) and np.ndim(dst[k]) == 0:
                        value = np.reshape(value, ())  # x[i] = [v]: numpy 1.25-2.3 warn, 2.4 refuses
                    dst[k] = value
                except (ValueError, TypeError):
                    # MXNet assigns a value of the indexed size whatever its shape (``b[0] = [v]``)
                    src = np.asarray(value, dtype=dst.dtype)
                    if src.size != np.empty(dst.shape, np.bool_)[k].size:
                        raise
                    dst[k] = src.reshape(np.shape(dst[k]))
                return
            # other devices: an asynchronous upload of a private copy (the caller may
            # reuse its buffer at once)
            host = np.array(value, dtype=dst.dtype, copy=True)

            def put(rc: Any) -> None:
                dst[k] = rc.xp.asarray(host)
            _push(put, self, (), (self,), "setitem", FnProperty.COPY_TO_GPU)

    def slice_assign(self, rhs: "NDArray", begin: Sequence[Any], end: Sequence[Any],
                     step: Sequence[Any]) -> "NDArray":
        """``self[begin:end:step] = rhs`` in place (per axis); returns self."""
        self[_slices(self, begin, end, step)] = rhs
        return self

    def slice_assign_scalar(self, value: float, begin: Sequence[Any], end: Sequence[Any],
                            step: Sequence[Any]) -> "NDArray":
        """``self[begin:end:step] = value`` in place (per axis); returns self."""
        self[_slices(self, begin, end, step)] = float(value)
        return self

    # -- arithmetic ---------------------------------------------------------------------------------
    def __add__(self, o: Any) -> "NDArray":
        return _binary("broadcast_add", "_plus_scalar", self, o)

    __radd__ = __add__

    def __sub__(self, o: Any) -> "NDArray":
        return _binary("broadcast_sub", "_minus_scalar", self, o)

    def __rsub__(self, o: Any) -> "NDArray":
        return _binary("broadcast_sub", "_rminus_scalar", self, o, reflect=True)

    def __mul__(self, o: Any) -> "NDArray":
        return _binary("broadcast_mul", "_mul_scalar", self, o)

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> "NDArray":
        return _binary("broadcast_div", "_div_scalar", self, o)

    def __rtruediv__(self, o: Any) -> "NDArray":
        return _binary("broadcast_div", "_rdiv_scalar", self, o, reflect=True)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, o: Any) -> "NDArray":
        return _binary("broadcast_mod", "_mod_scalar", self, o)

    def __rmod__(self, o: Any) -> "NDArray":
        return _binary("broadcast_mod", "_rmod_scalar", self, o, reflect=True)

    def __pow__(self, o: Any) -> "NDArray":
        return _binary("broadcast_power", "_power_scalar", self, o)

    def __rpow__(self, o: Any) -> "NDArray":
        return _binary("broadcast_power", "_rpower_scalar", self, o, reflect=True)

    def __neg__(self) -> "NDArray":
        return _unary("negative", self)

    def __pos__(self) -> "NDArray":
        return self

    def __abs__(self) -> "NDArray":
        return _unary("abs", self)

    def __eq__(self, o: Any) -> "NDArray":  # type: ignore[override]
        return _binary("broadcast_equal", "_equal_scalar", self, o)

    def __ne__(self, o: Any) -> "NDArray":  # type: ignore[override]
        return _binary("broadcast_not_equal", "_not_equal_scalar", self, o)

    def __gt__(self, o: Any) -> "NDArray":
        return _binary("broadcast_greater", "_greater_scalar", self, o)

    def __ge__(self, o: Any) -> "NDArray":
        return _binary("broadcast_greater_equal", "_greater_equal_scalar", self, o)

    def __lt__(self, o: Any) -> "NDArray":
        return _binary("broadcast_lesser", "_lesser_scalar", self, o)

    def __le__(self, o: Any) -> "NDArray":
        return _binary("broadcast_lesser_equal", "_lesser_equal_scalar", self, o)

    def __iadd__(self, o: Any) -> "NDArray":
        return self._in_place(_binary("broadcast_add", "_plus_scalar", self, o, out=self), o, operator.add)

    def __isub__(self, o: Any) -> "NDArray":
        return self._in_place(_binary("broadcast_sub", "_minus_scalar", self, o, out=self), o, operator.sub)

    def __imul__(self, o: Any) -> "NDArray":
        return self._in_place(_binary("broadcast_mul", "_mul_scalar", self, o, out=self), o, operator.mul)

    def __itruediv__(self, o: Any) -> "NDArray":
        return self._in_place(_binary("broadcast_div", "_div_scalar", self, o, out=self), o, operator.truediv)

    def _in_place(self, r: Any, o: Any, op: Any) -> Any:
        # a sparse operand (dense += row_sparse): the fast path declines; MXNet writes the
        # (storage-fallback) result into this array, Python would rebind the name instead
        if r is not NotImplemented or not isinstance(o, NDArray):
            return r
        res = op(self, o)
        self[:] = res.tostype("default") if res.stype != "default" else res
        return self

    __idiv__ = __itruediv__

    def __imod__(self, o: Any) -> "NDArray":
        return _binary("broadcast_mod", "_mod_scalar", self, o, out=self)

    # -- common reductions / ops as methods (MXNet NDArray has them) ---------------------------------
    def __getattr__(self, name: str) -> Any:
        # nd-level operators as methods: a.sum(axis=1), a.transpose(), a.clip(0, 1) ...
        if name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")
        fn = _op_function(name)
        if fn is None:
            from ..operator.hints import missing_method_message
            from ..registry import registries
            raise AttributeError(missing_method_message("NDArray", name, registries().operators))
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    def zeros_like(self, *args: Any, **kwargs: Any) -> "NDArray":
        """The ``zeros_like`` operator on this array (its arguments, e.g. ``out=``, as MXNet's
        fluent method); without arguments and outside recording, a plain allocation."""
        if args or kwargs or _AG.recording:
            return _op_function("zeros_like")(self, *args, **kwargs)  # type: ignore[misc]
        return zeros(self.shape, self.context, self.dtype)

    def ones_like(self, *args: Any, **kwargs: Any) -> "NDArray":
        """The ``ones_like`` operator on this array (see ``zeros_like``)."""
        if args or kwargs or _AG.recording:
            return _op_function("ones_like")(self, *args, **kwargs)  # type: ignore[misc]
        return ones(self.shape, self.context, self.dtype)

    def tolist(self) -> list:
        return self.asnumpy().tolist()

    # -- autograd (the tape, plexnet.tape; the backward pass is plexnet.autograd's) ---------------------
    def attach_grad(self, grad_req: str = "write", stype: Any = None) -> None:
        """Allocate a zero gradient array and mark this array as a variable. ``stype``:
        the gradient's storage type ('default', 'row_sparse', 'csr'; None: this array's,
        as MXNet's ``zeros_like``); sparse gradients: docs/sparse.md "Autograd"."""
        if stype is None:
            stype = self.stype
        elif stype not in ("default", "row_sparse", "csr"):
            raise ValueError(f"attach_grad: stype must be None, 'default', 'row_sparse' or 'csr'; got {stype!r}")
        if stype == "csr" and self.ndim != 2:
            raise ShapeError(f"attach_grad: stype='csr' needs a 2-D array; this one has shape {self.shape}")
        req = OpReqType.parse(grad_req)
        if req == OpReqType.inplace:
            req = OpReqType.write
        if req == OpReqType.null:
            grad = None
        elif stype == "default":
            grad = zeros(self.shape, self.context, self.dtype)
        else:
            grad = _sparse_call("zeros", stype, self.shape, self.context, self.dtype)
        mark_variable(self, grad, req)

    @property
    def grad(self) -> "NDArray | None":
        """The gradient array attached by ``attach_grad`` (None without one)."""
        return grad_of(self)

    @property
    def _fresh_grad(self) -> bool:
        """Whether a backward pass wrote this variable's gradient since the flag was last
        cleared (MXNet's ``NDArray._fresh_grad``; the Trainer reads it to find stale grads)."""
        ag = self._ag
        return bool(ag is not None and hasattr(ag[0], "fresh") and ag[0].fresh)

    @_fresh_grad.setter
    def _fresh_grad(self, state: bool) -> None:
        ag = self._ag
        if ag is not None and hasattr(ag[0], "fresh"):
            ag[0].fresh = bool(state)

    def detach(self) -> "NDArray":
        """The same values, cut out of any computational graph."""
        return NDArray(self._chunk, self._data, self.writable)

    def backward(self, out_grad: "NDArray | None" = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:
        """Gradients of this array with respect to the variables it was computed from."""
        # the backward pass is plexnet.autograd's, a layer above the arrays (plexnet.upcalls)
        upcalls.get(upcalls.BACKWARD)([self], None if out_grad is None else [out_grad], None, retain_graph,
                                      train_mode)


def _lookup(name: str) -> Any:
    return _op_function(name)


install_fluent(NDArray, _lookup, "NDArray")


# -- helpers used by the methods above -----------------------------------------------------------------

def _host_index(k: Any) -> Any:
    """One key component as MXNet 1.x's legacy indexing reads it: an NDArray as host int64
    indices (a boolean NDArray is refused), booleans in a list or numpy array as the
    integers 0 / 1 (no masking outside numpy semantics)."""
    if isinstance(k, NDArray):
        if k.dtype == np.bool_:
            raise ValueError("Cannot perform boolean indexing in legacy mode. Please activate numpy semantics "
                             "by calling `npx.set_np()` in the global scope before calling this function.")
        return k.asnumpy().astype(np.int64)
    if isinstance(k, np.ndarray) and k.dtype == np.bool_:
        return k.astype(np.int64)
    if isinstance(k, list) and k and np.asarray(k).dtype == np.bool_:
        return np.asarray(k, dtype=np.int64)
    return k


def _host_key(key: Any) -> Any:
    """NDArray indices (alone or inside a tuple) as host int64 arrays, as MXNet."""
    if isinstance(key, tuple):
        return tuple(_host_index(k) for k in key)
    return _host_index(key)


def _device_key(key: Any, arr: NDArray) -> Any:
    # Index arrays stay on the host: the device's array module copies them inside the
    # pushed function, on the worker's device and stream (CuPy converts numpy index arrays
    # itself). Converting here, on the calling thread, would put them on that thread's
    # current device (gpu(0) for an array on gpu(1): a peer-access error) and stream
    # (unsynchronised with the worker's stream).
    if arr.context.device_type == "cpu":
        return key
    if isinstance(key, tuple):
        return tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    return np.asarray(key) if isinstance(key, list) else key


def _push(fn: Any, where: NDArray, reads: Sequence[NDArray], writes: Sequence[NDArray], name: str,
          prop: FnProperty = FnProperty.NORMAL) -> None:
    _engine_mod.get().push_sync(fn, where._chunk.ctx, [a._chunk.var for a in reads],
                                [a._chunk.var for a in writes], prop, 0, name)


def _same_host(a: NDArray, b: NDArray) -> bool:
    """Both arrays on one context or both in host memory: a recorded copy's gradient
    can be written back by one operation on the source's context."""
    ca, cb = a._chunk.ctx, b._chunk.ctx
    return ca == cb or (ca.device_type != "gpu" and cb.device_type != "gpu")


def _copy(src: NDArray, dst: NDArray) -> None:
    s, d = src._data, dst._data
    sc, dc = src._chunk.ctx, dst._chunk.ctx
    if sc == dc or (sc.device_type != "gpu" and dc.device_type != "gpu"):
        if sc.device_type == "gpu" or dc.device_type == "gpu":
            _engine_mod.get().push_sync(lambda rc: get_backend(dc).copy(s, d, rc.stream), dc,
                                        [src._chunk.var], [dst._chunk.var], FnProperty.NORMAL, 0, "copyto")
        else:
            _engine_mod.get().push_sync(lambda rc: d.__setitem__(Ellipsis, s), dc, [src._chunk.var],
                                        [dst._chunk.var], FnProperty.NORMAL, 0, "copyto")
        return
    if dc.device_type == "gpu" and sc.device_type != "gpu":
        be = get_backend(dc)
        _engine_mod.get().push_sync(lambda rc: be.from_host(s, d, rc.stream), dc, [src._chunk.var],
                                    [dst._chunk.var], FnProperty.COPY_TO_GPU, 0, "copy_h2d")
    elif sc.device_type == "gpu" and dc.device_type != "gpu":
        be = get_backend(sc)
        _engine_mod.get().push_sync(lambda rc: d.__setitem__(Ellipsis, be.to_host(s, rc.stream)), sc,
                                    [src._chunk.var], [dst._chunk.var], FnProperty.COPY_FROM_GPU, 0, "copy_d2h")
    else:  # gpu -> other gpu
        be = get_backend(dc)
        _engine_mod.get().push_sync(lambda rc: be.copy(s, d, rc.stream), dc, [src._chunk.var],
                                    [dst._chunk.var], FnProperty.COPY_TO_GPU, 0, "copy_d2d")


_small: dict[str, tuple[int, Any]] = {}


def _new(shape: tuple, ctx: Context, dt: np.dtype) -> NDArray:
    """A fresh array: small ones straight from the backend's ``xp.empty`` (see Chunk),
    the rest from the context's storage pool."""
    n = dt.itemsize
    for d in shape:
        n *= d
    sm = _small.get(ctx.device_type)  # keyed by the type string: hashing a Context costs more
    if sm is None:
        be = get_backend(ctx)
        sm = _small[ctx.device_type] = (be.small_alloc_bytes, be.xp.empty)
    if n <= sm[0]:
        return NDArray(Chunk(None, ctx, _engine_mod.get()), sm[1](shape, dt))
    chunk = alloc_chunk(n, ctx)
    return NDArray(chunk, chunk.handle.buf[:n].view(dt).reshape(shape))


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None, stype: Any = None) -> NDArray:
    """An uninitialised array (``stype`` 'csr'/'row_sparse': a sparse array with no entries)."""
    if stype not in (None, "default"):
        return _sparse_call("empty", stype, shape, ctx, dtype)
    return _new(_shape(shape), ctx or current_context(), _dtype(dtype))


def full(shape: Any, val: Any, ctx: Context | None = None, dtype: Any = None, out: NDArray | None = None) -> NDArray:
    """An array filled with ``val``; with ``out=`` fills and returns ``out`` (whose
    shape must be ``shape``)."""
    if out is not None:
        if not isinstance(out, NDArray):
            raise TypeError(f"out must be an NDArray, got {type(out).__name__}")
        if _shape(shape) != out.shape:
            raise ShapeError(f"out= array has shape {out.shape}, the result has {_shape(shape)}")
        a = out
    else:
        a = empty(shape, ctx, dtype)
    _fill(a, val, "_full")
    return a


def _fill(a: NDArray, val: Any, name: str) -> None:
    """``a[:] = val`` as one engine operation named as MXNet's creation operator
    (``_zeros``, ``_ones``, ``_full``: the profiler reports these names)."""
    if isinstance(val, numbers.Number) or isinstance(val, np.generic):
        dst = a._data
        _push(lambda rc: dst.__setitem__(Ellipsis, val), a, (), (a,), name)
    else:
        a[:] = val


def _filled(shape: Any, val: Any, ctx: Context | None, dtype: Any, out: NDArray | None, name: str) -> NDArray:
    a = full(shape, val, ctx, dtype, out=out) if out is not None else empty(shape, ctx, dtype)
    if out is None:
        _fill(a, val, name)
    return a


def _fill_kwargs(fn: str, kw: dict[str, Any]) -> NDArray | None:
    out = kw.pop("out", None)
    kw.pop("name", None)
    stype = kw.pop("stype", None)
    if stype not in (None, "default"):
        raise PlexnetError(f"{fn}: storage type {stype!r} is only available for zeros and empty")
    if kw:
        raise TypeError(f"{fn}: unexpected keyword argument(s) {', '.join(map(repr, kw))}")
    return out


def zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, **kw: Any) -> NDArray:
    """An array of zeros (``out=`` fills a given array; ``stype='csr'``/``'row_sparse'``:
    a sparse array with no stored entries)."""
    if kw.get("stype") not in (None, "default"):
        stype = kw.pop("stype")
        kw.pop("name", None)
        return _sparse_call("zeros", stype, shape, ctx, dtype, **kw)
    return _filled(shape, 0, ctx, dtype, _fill_kwargs("zeros", kw), "_zeros")


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None, **kw: Any) -> NDArray:
    """An array of ones (``out=`` fills a given array)."""
    return _filled(shape, 1, ctx, dtype, _fill_kwargs("ones", kw), "_ones")


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An array holding a copy of ``source_array``. As in MXNet, the dtype is ``dtype``, else
    the source NDArray's, else float32 (also for numpy sources)."""
    source = source_array  # MXNet's parameter name (nd.array(source_array=...))
    if getattr(source, "stype", "default") != "default" or type(source).__module__.startswith("scipy.sparse"):
        return _sparse_call("array", source, ctx, dtype)  # MXNet: nd.array keeps a sparse source sparse
    if isinstance(source, NDArray):
        dt = _dtype(dtype if dtype is not None else source.dtype)
        out = empty(source.shape, ctx or source.context, dt)
        out[:] = source if dt == source._data.dtype else source.astype(dt)
        return out
    host = np.asarray(source, dtype=_dtype(dtype))
    out = empty(host.shape, ctx, host.dtype)
    if out._chunk.ctx.device_type == "cpu":
        out._data[...] = host  # a fresh array has no pending operations: copy now
    else:
        out[:] = host
    return out


def from_numpy_view(a: np.ndarray, ctx: Context | None = None) -> NDArray:
    """Zero-copy NDArray over a numpy array (the caller must not write it concurrently)."""
    ctx = ctx or current_context()
    chunk = Chunk(None, ctx, _engine_mod.get(), ext=a)
    return NDArray(chunk, a)


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           ctx: Context | None = None, dtype: Any = None, **kw: Any) -> NDArray:
    a = np.arange(start, stop, step, dtype=_dtype(dtype))
    if repeat > 1:
        a = np.repeat(a, repeat)
    return array(a, ctx=ctx, dtype=a.dtype)


def waitall() -> None:
    """Wait for every pushed operation; raises the first error not yet raised."""
    _engine_mod.get().wait_for_all()


def split_v2(ary: NDArray, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Any:
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices
    (a tuple), like ``numpy.split``; MXNet's ``nd.split_v2``. Returns a list (a single
    array when there is one piece)."""
    n = ary.shape[axis]
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError(f"split_v2: array split does not result in an equal division: axis {axis} of "
                             f"size {n} into {indices_or_sections} sections")
        step = n // indices_or_sections
        pieces = [(i * step, (i + 1) * step) for i in range(indices_or_sections)]
    elif isinstance(indices_or_sections, (tuple, list)):
        idx = [0] + [int(i) for i in indices_or_sections]
        pieces = list(zip(idx, idx[1:] + [n]))
    else:
        raise ValueError(f"split_v2: indices_or_sections must be an int or a tuple of ints, got "
                         f"{type(indices_or_sections).__name__}")
    sl = _op_function("slice_axis")
    if sl is None:
        from ..operator.hints import missing_fluent_message
        from ..operator.registry import OperatorNotFound
        raise OperatorNotFound(missing_fluent_message("mx.nd.split_v2", "slice_axis"))
    outs = [sl(ary, axis=axis, begin=b, end=e) for b, e in pieces]
    if squeeze_axis:
        outs = [o.squeeze(axis=axis) for o in outs]
    return outs[0] if len(outs) == 1 else outs


# -- how operators run -----------------------------------------------------------------------------------
# NDArray's methods run operators, and running an operator makes NDArrays. The operator
# calls (``plexnet.ndarray.invoke``) and the ``nd.<name>`` functions (the package) sit one
# step above this module: the package plugs them in when it is imported, before any array
# exists, so the class does not import what imports it.

def _not_plugged(*_args: Any, **_kwargs: Any) -> Any:
    raise PlexnetError("NDArray operators are not plugged in: import plexnet.ndarray (import plexnet does)")


_invoke: Any = _not_plugged
_binary: Any = _not_plugged
_unary: Any = _not_plugged
_op_function: Any = _not_plugged


#: MXNet's storage-type ids (tests and scripts import these private names from here)
_STORAGE_TYPE_STR_TO_ID = {'undefined': -1, 'default': 0, 'row_sparse': 1, 'csr': 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}

#: the sparse package's functions (cast_storage, zeros, empty, array): it sits above this
#: module and plugs them in when imported, as the operator calls below
_sparse_fns: dict[str, Any] = {}


def _sparse_call(name: str, *args: Any, **kwargs: Any) -> Any:
    fn = _sparse_fns.get(name)
    if fn is None:
        raise PlexnetError("sparse storage is not plugged in: import plexnet.ndarray (import plexnet does)")
    return fn(*args, **kwargs)


def plug_sparse(**fns: Any) -> None:
    """Install the sparse creation/conversion functions (``plexnet.ndarray.sparse`` calls this)."""
    _sparse_fns.update(fns)


def plug_operator_calls(invoke: Any, binary: Any, unary: Any, op_function: Any) -> None:
    """Install how NDArray methods run operators: ``invoke(name, args, kwargs)``, the
    arithmetic fast paths ``binary``/``unary`` and ``op_function(name)`` (the
    ``nd.<name>`` function or None). ``plexnet.ndarray`` calls this once, on import."""
    global _invoke, _binary, _unary, _op_function
    _invoke, _binary, _unary, _op_function = invoke, binary, unary, op_function
