"""Sparse NDArrays: ``CSRNDArray`` and ``RowSparseNDArray`` (MXNet 1.x ``mx.nd.sparse``).

A sparse array is a shape plus its compact arrays, each an ordinary dense ``NDArray``:
csr holds ``data`` (nnz,), ``indices`` (nnz,) and ``indptr`` (rows + 1,); row_sparse holds
``data`` (k, ...) and ``indices`` (k,). The compact arrays are the source of truth: the
engine orders reads and writes of each of them as of any array, so operators pushed on
them stay asynchronous. Whatever reads the dense view (``_data``, an operator with no
sparse kernel) gets a dense copy made after the pending writes (docs/sparse.md).
"""
from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from ...base import PlexnetError, ShapeError
from ...context import Context
from .. import ndarray as _nd
from ..ndarray import NDArray
from . import kernels as K

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "NotSupportedForSparseNDArray", "STATE",
           "host", "nd_from_host", "new_csr", "new_rsp"]


class _State:
    #: becomes True when the first sparse array is made: until then the ``nd.<op>``
    #: functions skip looking for sparse arguments
    live = False


STATE = _State()

#: operations the classes' methods run, defined in the modules above this one (convert,
#: ops) and plugged in by them on import: the arrays do not import their operators
_fns: dict[str, Callable[..., Any]] = {}


def plug(**fns: Callable[..., Any]) -> None:
    """Install ``cast_storage``, ``add`` ... for the array methods (convert.py, ops.py)."""
    _fns.update(fns)


class NotSupportedForSparseNDArray(PlexnetError):
    """An NDArray method that MXNet refuses on sparse arrays (``reshape``, ``_at`` ...)."""

    def __init__(self, function: Any, alias: Any = None, *args: Any) -> None:
        name = getattr(function, "__name__", str(function))
        alias_s = f" (alias {alias})" if alias is not None else ""
        types = ", ".join(str(type(a)) for a in args)
        super().__init__(f"Function {name}{alias_s} with arguments ({types}) is not supported for SparseNDArray "
                         f"and only available in NDArray.")


def host(a: NDArray) -> np.ndarray:
    """The values of a (dense) component array on the host, after its pending writes: on
    the CPU the array's own buffer (no copy; callers read it at once and do not keep it)."""
    if a.context.device_type == "cpu" and not isinstance(a, BaseSparseNDArray):
        a.wait_to_read()
        return a._data  # type: ignore[no-any-return]
    return a.asnumpy()


def nd_from_host(a: np.ndarray, ctx: Context, dtype: Any = None) -> NDArray:
    return _nd.array(a, ctx=ctx, dtype=a.dtype if dtype is None else dtype)


def _shape_str(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


class BaseSparseNDArray(NDArray):
    """What CSR and row_sparse arrays share: the compact arrays, conversions and the
    NDArray methods MXNet refuses on sparse storage."""

    __slots__ = ("_vals", "_aux", "_sshape")
    _STYPE = ""

    def __init__(self, vals: NDArray, aux: tuple[NDArray, ...], shape: tuple[int, ...]) -> None:
        # NDArray.__init__ is not called: _chunk/_data are properties over the components
        self._vals = vals
        self._aux = aux
        self._sshape = tuple(int(d) for d in shape)
        self.writable = True
        self._ag = None
        STATE.live = True

    # -- the base class's storage slots, seen through the compact arrays -------------------------
    @property
    def _chunk(self) -> Any:  # type: ignore[override]
        return self._vals._chunk

    @property
    def _data(self) -> Any:  # type: ignore[override]
        """A dense copy of the values (after pending writes): the fallback for code that
        reads an array's raw buffer. Writing to it does not change the sparse array."""
        d = self._dense()
        d.wait_to_read()
        # a copy that owns its memory: ``d`` goes back to the storage pool when this returns, and
        # an operation pushed with the buffer (``dense[:] = sparse``) would read reused memory
        return d._data.copy()

    # -- properties ---------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._sshape

    @property
    def dtype(self) -> type:
        return self._vals.dtype

    @property
    def size(self) -> int:
        return int(np.prod(self._sshape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self._sshape)

    @property
    def context(self) -> Context:
        return self._vals.context

    ctx = context

    @property
    def stype(self) -> str:
        return self._STYPE

    @property
    def data(self) -> NDArray:
        """The compact values (csr: (nnz,); row_sparse: (rows kept, ...))."""
        return self._vals

    @property
    def indices(self) -> NDArray:
        """Column indices (csr) or the kept row indices (row_sparse), int64."""
        return self._aux[-1]

    @property
    def _num_aux(self) -> int:
        return len(self._aux)

    @property
    def _aux_types(self) -> list[type]:
        return [a.dtype for a in self._aux]

    def _aux_data(self, i: int) -> NDArray:
        return self._aux[i]

    def __repr__(self) -> str:
        return f"\n<{type(self).__name__} {_shape_str(self.shape)} @{self.context}>"

    def __len__(self) -> int:
        return self._sshape[0]

    # -- synchronisation and values -------------------------------------------------------------------
    def _parts(self) -> tuple[NDArray, ...]:
        return (self._vals, *self._aux)

    def wait_to_read(self) -> None:
        for p in self._parts():
            p.wait_to_read()

    def wait_to_write(self) -> None:
        self.wait_to_read()

    def asnumpy(self) -> np.ndarray:
        """The dense values as a numpy array."""
        return self._dense().asnumpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def asscalar(self) -> Any:
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(-1)[0]

    def _dense(self) -> NDArray:
        raise NotImplementedError

    def _same(self, vals: NDArray, aux: tuple[NDArray, ...] | None = None) -> "BaseSparseNDArray":
        """An array of this type and shape with new values and (by default) copies of this one's indices."""
        return type(self)(vals, aux if aux is not None else tuple(a.copy() for a in self._aux), self._sshape)

    def _assign(self, other: "BaseSparseNDArray") -> None:
        """Take over ``other``'s compact arrays (``a[:] = b`` and ``out=`` of sparse results)."""
        if type(other) is not type(self):
            raise PlexnetError(f"cannot store a {other.stype} array in a {self.stype} array")
        if other.shape != self.shape:
            raise ShapeError(f"assignment: shape {other.shape} does not match the target's {self.shape}")
        if other.dtype != self.dtype:
            other = other.astype(self.dtype)
        self._vals, self._aux = other._vals, other._aux

    # -- conversions and copies --------------------------------------------------------------------------
    def tostype(self, stype: str) -> NDArray:
        """A copy in storage type ``stype`` (csr <-> row_sparse is refused, as MXNet)."""
        return _fns["cast_storage"](self, stype)

    def copy(self) -> "BaseSparseNDArray":
        res = self._same(self._vals.copy())
        if self._ag is not None:  # a recorded copy of a variable (autograd.py)
            _fns["record_copy"](self, res)
        return res

    def copyto(self, other: Any) -> NDArray:
        """Copy into ``other`` (an NDArray of the same shape, any storage type MXNet
        allows) or onto a Context."""
        if isinstance(other, Context):
            return type(self)(self._vals.copyto(other), tuple(a.copyto(other) for a in self._aux), self._sshape)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto: target must be an NDArray or Context, got {type(other).__name__}")
        if other is self:
            return other
        if other.shape != self.shape:
            raise ShapeError(f"copyto: shape mismatch, source {self.shape} vs target {other.shape}")
        if isinstance(other, BaseSparseNDArray):
            if other.stype != self.stype:
                raise PlexnetError(f"copyto: cannot copy a {self.stype} array into a {other.stype} array")
            src = self if other.context == self.context else self.copyto(other.context)
            other._assign(src.copy() if src is self else src)  # type: ignore[arg-type]
            return other
        self._dense().copyto(other)
        return other

    def as_in_context(self, context: Context) -> "BaseSparseNDArray":
        return self if self.context == context else self.copyto(context)  # type: ignore[return-value]

    def astype(self, dtype: Any, copy: bool = True) -> "BaseSparseNDArray":
        dt = np.dtype(dtype)
        if not copy and np.dtype(self.dtype) == dt:
            return self
        res = self._same(self._vals.astype(dt))
        if self._ag is not None:  # recorded: the gradient is cast back (autograd.py)
            _fns["record_fn"](self, res, lambda d: d.astype(dt), "Cast")
        return res

    def detach(self) -> "BaseSparseNDArray":
        return type(self)(self._vals, self._aux, self._sshape)

    def check_format(self, full_check: bool = True) -> None:
        """Raise when the compact arrays do not form a valid array of this shape
        (``full_check=False``: only the cheap shape checks)."""
        raise NotImplementedError

    def zeros_like(self, *args: Any, **kwargs: Any) -> NDArray:
        return _fns["zeros_like"](self, *args, **kwargs)

    # -- what MXNet refuses on sparse arrays ------------------------------------------------------------
    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        raise NotSupportedForSparseNDArray(self.reshape, None, shape)

    def _at(self, idx: int) -> NDArray:
        raise NotSupportedForSparseNDArray(self._at, "[idx]", idx)

    def _slice(self, start: int, stop: int) -> NDArray:
        raise NotSupportedForSparseNDArray(self._slice, None, start, stop)

    def _sync_copyfrom(self, source_array: Any) -> None:
        raise NotImplementedError()

    # in place (MXNet 1.9.1 runs the operator with out=self): the result, converted to this
    # array's storage type when it is not already, replaces the compact arrays
    def _inplace(self, res: NDArray) -> "BaseSparseNDArray":
        _assign_any(self, res)
        return self

    def __iadd__(self, other: Any) -> Any:
        return self._inplace(self + other)

    def __isub__(self, other: Any) -> Any:
        return self._inplace(self - other)

    def __imul__(self, other: Any) -> Any:
        return self._inplace(self * other)

    def __itruediv__(self, other: Any) -> Any:
        return self._inplace(self / other)

    __idiv__ = __itruediv__

    # -- arithmetic: MXNet's sparse add/subtract/multiply/divide -------------------------------------------
    def __add__(self, other: Any) -> NDArray:
        return _fns["add"](self, other)

    def __radd__(self, other: Any) -> NDArray:
        return _fns["add"](self, other)

    def __sub__(self, other: Any) -> NDArray:
        return _fns["subtract"](self, other)

    def __rsub__(self, other: Any) -> NDArray:
        return _fns["subtract"](other, self)

    def __mul__(self, other: Any) -> NDArray:
        return _fns["multiply"](self, other)

    def __rmul__(self, other: Any) -> NDArray:
        return _fns["multiply"](self, other)

    def __truediv__(self, other: Any) -> NDArray:
        return _fns["divide"](self, other)

    def __rtruediv__(self, other: Any) -> NDArray:
        return _fns["divide"](other, self)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __abs__(self) -> NDArray:
        return _nd._op_function("abs")(self)  # type: ignore[no-any-return]  # (sparse-aware: stays sparse)

    def __neg__(self) -> NDArray:
        return self * -1.0

    # power and modulo: MXNet falls back to dense storage (with a sparse operand the result is dense)
    def _dense_binary(self, other: Any, op: Callable[[Any, Any], Any]) -> NDArray:
        o = other._dense_arg() if isinstance(other, BaseSparseNDArray) else other
        return op(self._dense_arg(), o)  # type: ignore[no-any-return]

    def _dense_arg(self) -> NDArray:
        """The dense copy a dense operator reads; while recording, a variable's copy is
        linked to its graph (autograd.py)."""
        return _fns["dense_arg"](self) if self._ag is not None else self._dense()

    def __pow__(self, other: Any) -> NDArray:
        return self._dense_binary(other, lambda a, b: a ** b)

    def __rpow__(self, other: Any) -> NDArray:
        return self._dense_binary(other, lambda a, b: b ** a)

    def __mod__(self, other: Any) -> NDArray:
        return self._dense_binary(other, lambda a, b: a % b)

    def __rmod__(self, other: Any) -> NDArray:
        return self._dense_binary(other, lambda a, b: b % a)

    # comparisons: with a scalar s, the storage type stays when 0 <op> s is false (the
    # stored pattern is kept, as MXNet); otherwise, and with arrays, the result is dense
    def _compare(self, other: Any, op: Callable[[Any, Any], Any]) -> NDArray:
        if isinstance(other, (numbers.Number, np.generic)):
            if not op(0.0, float(other)):  # type: ignore[arg-type]
                return self._same(op(self._vals, other))
            return op(self._dense(), other)  # type: ignore[no-any-return]
        dense_other = other._dense() if isinstance(other, BaseSparseNDArray) else other
        return op(self._dense(), dense_other)  # type: ignore[no-any-return]

    def __eq__(self, other: Any) -> NDArray:  # type: ignore[override]
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other: Any) -> NDArray:  # type: ignore[override]
        return self._compare(other, lambda a, b: a != b)

    def __gt__(self, other: Any) -> NDArray:
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other: Any) -> NDArray:
        return self._compare(other, lambda a, b: a >= b)

    def __lt__(self, other: Any) -> NDArray:
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other: Any) -> NDArray:
        return self._compare(other, lambda a, b: a <= b)

    __hash__ = NDArray.__hash__

    def __getstate__(self) -> dict:
        return {"stype": self.stype, "shape": self._sshape, "parts": [p.asnumpy() for p in self._parts()],
                "ctx": (self.context.device_type, self.context.device_id)}

    def __setstate__(self, state: dict) -> None:
        ctx = Context(*state["ctx"])
        parts = [nd_from_host(p, ctx) for p in state["parts"]]
        self._vals, self._aux, self._sshape = parts[0], tuple(parts[1:]), tuple(state["shape"])
        self.writable, self._ag = True, None


def _on_ctx(parts: tuple[NDArray, ...], fn: Callable[..., np.ndarray], out: NDArray) -> NDArray:
    """``out = fn(*host parts)`` as one engine operation on CPU (asynchronous); other
    devices compute on the host after the parts are ready and upload."""
    ctx = out.context
    if ctx.device_type == "cpu":
        datas = [p._data for p in parts]
        dst = out._data
        _nd._push(lambda rc: dst.__setitem__(Ellipsis, fn(*datas)), out, parts, (out,), "cast_storage")
        return out
    res = fn(*[host(p) for p in parts])
    out[:] = res
    return out


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format (MXNet's ``CSRNDArray``)."""

    __slots__ = ()
    _STYPE = "csr"

    @property
    def indptr(self) -> NDArray:
        """Row pointers (rows + 1,), int64: row i's entries are data[indptr[i]:indptr[i+1]]."""
        return self._aux[0]

    def _dense(self) -> NDArray:
        out = _nd.empty(self._sshape, self.context, self.dtype)
        shape = self._sshape
        return _on_ctx((self._vals, self._aux[1], self._aux[0]),
                       lambda d, i, p: K.csr_to_dense(np.asarray(d), np.asarray(i), np.asarray(p), shape), out)

    def asscipy(self) -> Any:
        """A ``scipy.sparse.csr_matrix`` copy (needs scipy)."""
        try:
            import scipy.sparse as spsp
        except ImportError as e:  # scipy is optional (docs/sparse.md)
            raise ImportError("asscipy needs scipy: pip install scipy") from e
        return spsp.csr_matrix((host(self._vals), host(self._aux[1]), host(self._aux[0])), shape=self._sshape)

    def check_format(self, full_check: bool = True) -> None:
        err = K.csr_check(host(self._vals), host(self._aux[1]), host(self._aux[0]), self._sshape, full_check)
        if err is not None:
            raise PlexnetError(f"Indices of csr NDArray are invalid: {err}")

    def __getitem__(self, key: Any) -> NDArray:
        if isinstance(key, (int, np.integer)):
            k = int(key)
            if not -self._sshape[0] <= k < self._sshape[0]:
                raise IndexError(f"index {k} is out of bounds for axis 0 with size {self._sshape[0]}")
            k %= self._sshape[0]
            key = slice(k, k + 1)
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is None and key.stop is None:
                return self
            start, stop, _ = key.indices(self._sshape[0])
            return _fns["slice"](self, begin=(start,), end=(max(start, stop),))
        raise ValueError(f"Undefined behaviour for {key}")

    def __setitem__(self, key: Any, value: Any) -> None:
        if not self.writable:
            raise PlexnetError("Failed to assign to a readonly CSRNDArray")
        if not (isinstance(key, slice) and key == slice(None)):
            raise ValueError("Assignment with slice for CSRNDArray is not implemented yet.")
        if isinstance(value, (numbers.Number, np.generic)):
            raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")
        _assign_any(self, value)


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose kept rows (``indices``) are stored densely in ``data`` (MXNet's
    ``RowSparseNDArray``); the other rows are zero."""

    __slots__ = ()
    _STYPE = "row_sparse"

    def _dense(self) -> NDArray:
        out = _nd.empty(self._sshape, self.context, self.dtype)
        shape = self._sshape
        return _on_ctx((self._vals, self._aux[0]),
                       lambda d, i: K.rsp_to_dense(np.asarray(d), np.asarray(i), shape), out)

    def retain(self, *args: Any, **kwargs: Any) -> "RowSparseNDArray":
        """``sparse.retain(self, indices)``: only the rows ``indices``."""
        return _fns["retain"](self, *args, **kwargs)  # type: ignore[no-any-return]

    def check_format(self, full_check: bool = True) -> None:
        err = K.rsp_check(host(self._vals), host(self._aux[0]), self._sshape, full_check)
        if err is not None:
            raise PlexnetError(f"Indices of row_sparse NDArray are invalid: {err}")

    def __getitem__(self, key: Any) -> NDArray:
        if isinstance(key, slice) and key == slice(None):
            return self
        raise Exception("RowSparseNDArray only supports [:] for __getitem__")

    def __setitem__(self, key: Any, value: Any) -> None:
        if not self.writable:
            raise PlexnetError("Failed to assign to a readonly RowSparseNDArray")
        if not (isinstance(key, slice) and key == slice(None)):
            raise ValueError("RowSparseNDArray only supports [:] for __setitem__")
        if isinstance(value, (numbers.Number, np.generic)):
            # MXNet: every row is kept and filled
            n = self._sshape[0]
            vals = _nd.full(self._sshape, value, self.context, self.dtype)
            self._vals, self._aux = vals, (nd_from_host(np.arange(n, dtype=K.IDX), self.context),)
            return
        _assign_any(self, value)


def _assign_any(dst: BaseSparseNDArray, value: Any) -> None:
    """``dst[:] = value`` for a sparse array of dst's type, a dense NDArray or array-like."""
    cast_storage = _fns["cast_storage"]
    if isinstance(value, BaseSparseNDArray):
        if value is dst:
            return
        if value.stype != dst.stype:
            value = cast_storage(value, "default")
        else:
            dst._assign(value.copy() if value.context == dst.context
                        else value.copyto(dst.context))  # type: ignore[arg-type]
            return
    if not isinstance(value, NDArray):
        value = _nd.array(np.asarray(value, dtype=dst.dtype).reshape(dst.shape), ctx=dst.context, dtype=dst.dtype)
    if value.shape != dst.shape:
        raise ShapeError(f"assignment: value of shape {value.shape} to a {dst.stype} array of shape {dst.shape}")
    dst._assign(cast_storage(value.as_in_context(dst.context), dst.stype))


def new_csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, ...], ctx: Context,
            dtype: Any = None) -> CSRNDArray:
    """A CSRNDArray of host arrays (copied to ``ctx``)."""
    dt = np.dtype(dtype if dtype is not None else data.dtype)
    return CSRNDArray(nd_from_host(np.asarray(data, dt).reshape(-1), ctx),
                      (nd_from_host(np.asarray(indptr, K.IDX), ctx), nd_from_host(np.asarray(indices, K.IDX), ctx)),
                      tuple(shape))


def new_rsp(data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], ctx: Context,
            dtype: Any = None) -> RowSparseNDArray:
    """A RowSparseNDArray of host arrays (copied to ``ctx``)."""
    dt = np.dtype(dtype if dtype is not None else data.dtype)
    shape = tuple(shape)
    idx = np.asarray(indices, K.IDX).reshape(-1)
    return RowSparseNDArray(nd_from_host(np.asarray(data, dt).reshape((idx.shape[0],) + shape[1:]), ctx),
                            (nd_from_host(idx, ctx),), shape)

