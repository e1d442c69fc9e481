"""Gluon parameters (MXNet 1.x ``gluon.Parameter``, ``Constant``, ``ParameterDict``).

A ``Parameter`` holds one array (and one gradient array) per context. Its shape may be
partly unknown (0 dimensions) until the first forward pass infers it: initialisation
is then *deferred* and finishes on first use. The gradient arrays are marked as
autograd variables (``autograd.mark_variables``), so ``backward`` writes into them.
"""
from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from typing import Any, Iterator, Sequence

import numpy as np

from .. import autograd
from .. import initializer as _init
from ..base import PlexnetError
from ..context import Context, cpu, current_context
from ..ndarray import NDArray
from ..ndarray import ndarray as _nd
from ..symbol import Symbol

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict", "tensor_types"]

#: what a Block's call takes as a tensor (MXNet 1.x: Symbol and NDArray; rnn cells test it)
tensor_types = (Symbol, NDArray)


class ParameterLoadError(PlexnetError, AssertionError):
    """A saved parameter that does not fit (missing, shape or dtype incompatible, or extra
    in ``ParameterDict.load``): MXNet 1.9.1 raises these with ``assert``, so an
    ``AssertionError`` handler catches them here too."""


class IncompatibleShapeError(ValueError, AssertionError):
    """A shape that does not fit a parameter's declared one: MXNet asserts it."""


class ParameterExtraError(PlexnetError, ValueError):
    """A file holds a parameter the block lacks (``Block.load_parameters``): MXNet's ValueError."""


class DeferredInitializationError(PlexnetError):
    """A parameter's initialisation waits for its shape (known after a forward pass)."""


def _shape_known(shape: Any) -> bool:
    return shape is not None and all(int(d) > 0 for d in shape)


def _ctx_list(ctx: Any) -> list[Context]:
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


class Parameter:
    """A block's parameter: ``name``, ``shape`` (0 for a dimension not yet known),
    ``dtype``, ``grad_req`` ('write', 'add', 'null'), ``lr_mult``/``wd_mult`` and the
    initializer ``init``."""

    def __init__(self, name: str, grad_req: str = "write", shape: Any = None, dtype: Any = np.float32,
                 lr_mult: float = 1.0, wd_mult: float = 1.0, init: Any = None, allow_deferred_init: bool = False,
                 differentiable: bool = True, stype: str = "default", grad_stype: str = "default") -> None:
        self._var: Any = None
        self._data: list[NDArray] | None = None
        self._grad: list[NDArray] | None = None
        self._ctx_list: list[Context] | None = None
        self._deferred_init: tuple = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req: str | None = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = None if shape is None else tuple(int(d) for d in shape)
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for what, st in (("stype", stype), ("grad_stype", grad_stype)):
            # MXNet asserts the storage type is one it knows (an AssertionError otherwise)
            assert st in ("default", "row_sparse", "csr"), \
                f"Parameter {name!r}: invalid {what} {st!r}; expected 'default', 'row_sparse' or 'csr'"
            if st == "csr":
                raise PlexnetError(f"Parameter {name!r}: {what}='csr' is not supported; parameters may be "
                                   f"'default' or 'row_sparse'")
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"   # the dtype as given, as MXNet

    # -- attributes ---------------------------------------------------------------------------------
    @property
    def grad_req(self) -> str:
        return self._grad_req  # type: ignore[return-value]

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in ("write", "add", "null"):
            raise ValueError(f"grad_req must be one of 'write', 'add', or 'null', but got {req!r}")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            if self._data is not None:
                self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self) -> Any:
        return self._dtype

    @dtype.setter
    def dtype(self, dtype: Any) -> None:
        # as MXNet 1.9.1: setting the dtype of an initialized parameter casts its data
        if getattr(self, "_data", None) is not None:
            self.cast(dtype)
        else:
            self._dtype = dtype

    @property
    def shape(self) -> tuple | None:
        return self._shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        if self._shape is None:
            self._shape = None if new_shape is None else tuple(int(d) for d in new_shape)
            return
        new_shape = tuple(int(d) for d in new_shape)
        if len(self._shape) != len(new_shape) or any(i != j and i != 0 for i, j in zip(self._shape, new_shape)):
            raise IncompatibleShapeError(f"Expected shape {new_shape} is incompatible with given shape "
                                         f"{self._shape} of Parameter {self.name!r}")
        self._shape = new_shape

    @property
    def stype(self) -> str:
        return self._stype

    # -- initialisation ------------------------------------------------------------------------------
    def initialize(self, init: Any = None, ctx: Any = None, default_init: Any = None,
                   force_reinit: bool = False) -> None:
        """Allocate and initialise on ``ctx`` (a Context or a list); deferred while
        the shape is unknown and ``allow_deferred_init``."""
        if default_init is None:
            default_init = _init.Uniform()
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter {self.name!r} is already initialized, ignoring. Set force_reinit=True to "
                          f"re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        ctxs = _ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctxs, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter {self.name!r} because it has invalid shape: "
                             f"{self.shape}.")
        self._deferred_init = (init, ctxs, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        if not self._deferred_init:
            return
        init, ctxs, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _shape_known(self.shape):
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialized yet because initialization was deferred. "
                f"Actual initialization happens during the first forward pass. Please pass one batch of data "
                f"through the network before accessing Parameters.")
        with autograd.pause():
            if data is None:
                data = _nd.zeros(self.shape, cpu(), self.dtype)
                # as MXNet: the chosen initializer's _init_weight, whatever the name
                _init.create(default_init)(_init.InitDesc(self.name, {"__init__": init or ""}), data)
            self._init_impl(data, ctxs)

    def _init_impl(self, data: NDArray, ctxs: Sequence[Context]) -> None:
        self._ctx_list = list(ctxs)
        self._data = [data.copyto(c) for c in self._ctx_list]
        if self._stype == "row_sparse":  # as MXNet: the stored value is a RowSparseNDArray
            self._data = [d.tostype("row_sparse") for d in self._data]
        self._init_grad()

    def _init_grad(self) -> None:
        if self.grad_req == "null":
            self._grad = None
            return
        assert self._data is not None
        if self._grad_stype == "row_sparse":  # Embedding(sparse_grad=True): backward writes only looked-up rows
            from ..ndarray import sparse as _sparse
            self._grad = [_sparse.zeros("row_sparse", d.shape, ctx=d.context, dtype=d.dtype) for d in self._data]
        else:
            self._grad = [_nd.zeros(d.shape, d.context, d.dtype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _check_and_get(self, arr_list: list | None, ctx: Any) -> Any:
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            assert self._ctx_list is not None
            if self._ctx_list[0] is ctx:  # the usual lookup: the first (often only) context, same object
                return arr_list[0]
            for c, a in zip(self._ctx_list, arr_list):
                if c == ctx:
                    return a
            raise RuntimeError(f"Parameter {self.name!r} was not initialized on context {ctx}. It was only "
                               f"initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialized yet because initialization was deferred. "
                f"Actual initialization happens during the first forward pass. Please pass one batch of data "
                f"through the network before accessing Parameters. You can also avoid deferred initialization "
                f"by specifying in_units, num_features, etc., for network layers.")
        raise RuntimeError(f"Parameter {self.name!r} has not been initialized. Note that you should initialize "
                           f"parameters and create Trainer with Block.collect_params() instead of Block.params "
                           f"because the later does not include Parameters of nested child Blocks")

    def data(self, ctx: Any = None) -> NDArray:
        """The value on ``ctx`` (the only context when there is one)."""
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via data() because "
                               f"its storage type is {self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self) -> list[NDArray]:
        if self._stype != "default":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts via list_data() "
                               f"because its storage type is {self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def grad(self, ctx: Any = None) -> NDArray:
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter {self.name!r} because grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self) -> list[NDArray]:
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter {self.name!r} because grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self) -> list[Context]:
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise RuntimeError(f"Parameter {self.name!r} has not been initialized")
        assert self._ctx_list is not None
        return list(self._ctx_list)

    # -- row_sparse weights: a RowSparseNDArray per context holding every row (the Trainer
    #    updates it); readers take the rows they ask for, as MXNet's row_sparse_pull
    def _rows(self, row_id: Any, ctx: Any) -> NDArray:
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' via row_sparse_data() because "
                               f"its storage type is {self._stype}. Please use data() instead.")
        if getattr(self, "_trainer", None) is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when no Trainer is "
                               f"created with it.")
        full = self._check_and_get(self._data, ctx)
        rows = np.unique(row_id.asnumpy().astype(np.int64)) if isinstance(row_id, NDArray) else \
            np.unique(np.asarray(row_id, dtype=np.int64))
        from ..ndarray import sparse as _sparse
        from ..ndarray.sparse.base import host as _sparse_host
        # the stored value holds every row: gather from its compact values, no dense copy
        vals = _sparse_host(full.data)[rows] if full.indices.shape[0] == full.shape[0] else full.asnumpy()[rows]
        res = _sparse.row_sparse_array((vals, rows), shape=full.shape, ctx=full.context, dtype=full.dtype)
        if self.grad_req != "null":
            # MXNet pulls the rows into the variable itself: the gradient is the whole
            # gradient with respect to the weight (not masked by row_id); the copy is linked,
            # also when fetched before autograd.record() (MXNet returns the variable itself)
            from ..ndarray.sparse.autograd import link
            if autograd.is_recording():
                link(full, res, "row_sparse_data")
            else:
                with autograd.record(train_mode=autograd.is_training()):
                    link(full, res, "row_sparse_data")
        return res

    def row_sparse_data(self, row_id: NDArray) -> NDArray:
        """The rows ``row_id`` of a ``row_sparse`` parameter, as a RowSparseNDArray on
        ``row_id``'s context (needs a Trainer, as MXNet: it holds the values)."""
        return self._rows(row_id, row_id.context)

    def list_row_sparse_data(self, row_id: NDArray) -> list[NDArray]:
        """``row_sparse_data`` on every context of the parameter."""
        if self._data is None:
            self._check_and_get(None, list)
        return [self._rows(row_id, c) for c in self.list_ctx()]

    def zero_grad(self) -> None:
        """Set the gradient arrays to 0."""
        if self._grad is None:
            return
        for g in self._grad:
            if g.stype != "default":  # MXNet: an empty row_sparse array (no stored rows)
                from ..ndarray import sparse as _sparse
                g[:] = _sparse.zeros(g.stype, g.shape, ctx=g.context, dtype=g.dtype)
            else:
                g[:] = 0

    def set_data(self, data: Any) -> None:
        """Set the value on every context (copied into the existing arrays)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:   # MXNet asserts here: an AssertionError too
                raise UninitializedParameterError(f"Parameter {self.name!r} has not been initialized")
            init, ctxs, default_init, _ = self._deferred_init
            arr = data if isinstance(data, NDArray) else _nd.array(data, dtype=self.dtype)
            self._deferred_init = (init, ctxs, default_init, arr)
            return
        with autograd.pause():
            for d in self._data:
                d[:] = data

    def reset_ctx(self, ctx: Any) -> None:
        """Move the parameter to other context(s), keeping its value."""
        ctxs = _ctx_list(ctx)
        if self._data is not None:
            with autograd.pause():
                data = self._reduce()
                self._init_impl(data, ctxs)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctxs, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter {self.name!r} because it has not been "
                             f"initialized.")

    def _reduce(self) -> NDArray:
        """The value averaged over contexts, on cpu (what save writes; every row of a
        row_sparse parameter, as a RowSparseNDArray, as MXNet)."""
        data = self._check_and_get(self._data, list)
        acc = data[0].copyto(cpu())
        if len(data) > 1:
            for d in data[1:]:
                acc += d.copyto(cpu())
            acc = acc / len(data)
        return acc.tostype("row_sparse") if self._stype == "row_sparse" else acc

    def _load_init(self, data: NDArray, ctx: Any, cast_dtype: bool = False, dtype_source: str = "current") -> None:
        if self.shape:
            for s, d in zip(self.shape, data.shape):
                if s not in (0, d) or len(self.shape) != len(data.shape):
                    raise ParameterLoadError(f"Failed loading Parameter {self.name!r} from saved params: shape "
                                             f"incompatible expected {self.shape} vs saved {data.shape}")
            self.shape = data.shape
        else:
            self._shape = tuple(data.shape)
        if self.dtype is not None and np.dtype(self.dtype) != np.dtype(data.dtype):
            if not cast_dtype:
                raise ParameterLoadError(
                    f"Failed loading Parameter {self.name!r} from saved params: dtype incompatible expected "
                    f"{np.dtype(self.dtype).name} vs saved {np.dtype(data.dtype).name}. Set cast_dtype=True to "
                    f"cast the dtype of saved params.")
            if dtype_source == "current":
                data = data.astype(self.dtype)
            else:
                self.dtype = data.dtype
        if self._data is None:
            if self._deferred_init:
                ctxs = self._deferred_init[1] if ctx is None else _ctx_list(ctx)
            else:
                ctxs = [cpu()] if ctx is None else _ctx_list(ctx)
            self._deferred_init = ()
            with autograd.pause():
                self._init_impl(data, ctxs)
        else:
            self.set_data(data)
        self._deferred_init = ()
        # as MXNet: a kvstore that updates holds its own copy of the values; drop it
        trainer = getattr(self, "_trainer", None)
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore:
            trainer._reset_kvstore()

    def _set_trainer(self, trainer: Any) -> None:
        """Set the Trainer this parameter belongs to; a sparse parameter takes one only (MXNet 1.9.1)."""
        cur = getattr(self, "_trainer", None)
        if self._stype != "default" and cur is not None and trainer is not None and cur is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' because it was already set. "
                               f"More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    def var(self) -> Any:
        """The Symbol variable of this parameter (for hybridized graphs)."""
        if self._var is None:
            from ..symbol import Variable
            # a partly known shape goes in with 0 for the unknown dimensions (MXNet 1.x), which
            # inference fills from the data; a shape not given at all stays unknown
            shape = tuple(self.shape) if self.shape else None
            self._var = Variable(self.name, shape=shape, dtype=self.dtype, lr_mult=self.lr_mult,
                                 wd_mult=self.wd_mult, init=self.init, stype=self._stype)
        return self._var

    def cast(self, dtype: Any) -> None:
        """Change the dtype (and convert data and gradients)."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is not None:
                self._init_grad()


class Constant(Parameter):
    """A parameter that is not learned (``grad_req='null'``) with a fixed value."""

    def __init__(self, name: str, value: Any) -> None:
        if not isinstance(value, NDArray):
            value = _nd.array(value)
        self.value = value
        val = value

        class _CInit(_init.Initializer):
            def _init_weight(self, _: str, arr: Any) -> None:
                val.copyto(arr)

            def dumps(self) -> str:
                return "constant"

        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype, init=_CInit())

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(f"Constant parameter {self.name!r} does not support grad_req other than 'null', and new "
                          f"value {req!r} is ignored.", stacklevel=2)
        self._grad_req = "null"


class UninitializedParameterError(RuntimeError, AssertionError):
    """``set_data`` on a parameter neither initialized nor deferred (MXNet: an assert)."""


_NAMING_DOC = "https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html"


def brief_print_list(lst: Any, limit: int = 7) -> str:
    """At most ``limit`` names, quoted, the middle elided (MXNet's ``_brief_print_list``)."""
    lst = list(lst)
    if len(lst) > limit:
        return brief_print_list(lst[:limit // 2], limit) + ", ..., " + brief_print_list(lst[-limit // 2:], limit)
    return ", ".join(f"'{i}'" for i in lst)


class ParameterDict:
    """Named parameters sharing a ``prefix``; ``get`` creates or returns one."""

    def __init__(self, prefix: str = "", shared: "ParameterDict | None" = None) -> None:
        self._prefix = prefix
        self._params: OrderedDict[str, Parameter] = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        body = "\n".join(f"  {p!r}" for p in self.values())
        return f"{self._prefix} (\n{body}\n)" if self._prefix else f"(\n{body}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: object) -> bool:
        return key in self._params

    def items(self) -> Any:
        return self._params.items()

    def keys(self) -> Any:
        return self._params.keys()

    def values(self) -> Any:
        return self._params.values()

    @property
    def prefix(self) -> str:
        return self._prefix

    def _get_impl(self, name: str) -> Parameter | None:
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name: str, **kwargs: Any) -> Parameter:
        """The parameter ``prefix + name``, created with ``kwargs`` when absent; when
        present, given attributes must agree (unknown shape dimensions are filled)."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            param = self._params[full] = Parameter(full, **kwargs)
            return param
        for k, v in kwargs.items():
            if not hasattr(param, k) or getattr(param, k) is None:
                setattr(param, k, v)
                continue
            existing = getattr(param, k)
            if k == "shape" and v is not None:
                v = (v,) if isinstance(v, int) else tuple(v)
                if len(v) == len(existing) and all(a == b or a == 0 or b == 0 for a, b in zip(v, existing)):
                    param.shape = tuple(b if b else a for a, b in zip(existing, v))
                    continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if v is not None and existing != v:
                raise PlexnetError(f"Cannot retrieve Parameter {name!r} because desired attribute does not match "
                                   f"with stored for attribute {k!r}: desired {v!r} vs stored {existing!r}.")
        return param

    def get_constant(self, name: str, value: Any = None) -> Constant:
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named {name!r}. Please specify value if you want to create a new "
                               f"constant.")
            param = self._params[full] = Constant(full, value)
        elif value is not None and not isinstance(param, Constant):
            raise PlexnetError(f"Parameter {name!r} already exists but it is not a constant.")
        return param  # type: ignore[return-value]

    def update(self, other: "ParameterDict") -> None:
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ValueError(f"Cannot update self with other because they have different Parameters with the "
                                 f"same name {k!r}")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        if init is None:
            init = _init.Uniform()
        if verbose and hasattr(init, "set_verbosity"):
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self) -> list[Context]:
        s: list[Context] = []
        for p in self.values():
            for c in p.list_ctx():
                if c not in s:
                    s.append(c)
        return s

    def setattr(self, name: str, value: Any) -> None:
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename: str, strip_prefix: str = "") -> None:
        arg = {}
        for p in self.values():
            if not p.name.startswith(strip_prefix):
                raise ValueError(f"Prefix {strip_prefix!r} is to be striped before saving, but Parameter's name "
                                 f"{p.name!r} does not start with {strip_prefix!r}.")
            arg[p.name[len(strip_prefix):]] = p._reduce()
        _nd_save(filename, arg)

    def load(self, filename: str, ctx: Any = None, allow_missing: bool = False, ignore_extra: bool = False,
             restore_prefix: str = "", cast_dtype: bool = False, dtype_source: str = "current") -> None:
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ValueError(f"restore_prefix is {restore_prefix!r} but Parameter name {name!r} does not "
                                     f"start with it")
        self.load_dict(_nd_load(filename), ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict: Any, ctx: Any = None, allow_missing: bool = False, ignore_extra: bool = False,
                  restore_prefix: str = "", filename: str | None = None, cast_dtype: bool = False,
                  dtype_source: str = "current") -> None:
        """Load parameters from a dict (``arg:``/``aux:`` prefixes are stripped)."""
        where = f"file: {filename}" if filename else "param_dict"   # MXNet's wording, below too
        items = param_dict.items() if isinstance(param_dict, dict) else param_dict
        arg = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in items}
        n = len(restore_prefix)
        if not allow_missing:
            for name in self.keys():
                if name not in arg:
                    raise ParameterLoadError(
                        f"Parameter '{name[n:]}' is missing in {where}, which contains parameters: "
                        f"{brief_print_list(arg)}. Please make sure source and target networks have the same "
                        f"prefix.For more info on naming, please see {_NAMING_DOC}")
        for name, v in arg.items():
            if name not in self._params:
                if not ignore_extra:
                    raise ParameterLoadError(
                        f"Parameter '{name[n:]}' loaded from {where} is not present in ParameterDict, choices are: "
                        f"{brief_print_list(self._params)}. Set ignore_extra to True to ignore. Please make sure "
                        f"source and target networks have the same prefix.For more info on naming, please see "
                        f"{_NAMING_DOC}")
                continue
            self[name]._load_init(v, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def select(self, select: str | None) -> "ParameterDict":
        """The parameters whose names match the regular expression ``select``."""
        ret = ParameterDict(self._prefix)
        if select is None:
            ret._params.update(self._params)
        else:
            pattern = re.compile(select)
            ret._params.update((k, v) for k, v in self._params.items() if pattern.match(k))
        return ret


def _nd_save(filename: str, data: Any) -> None:
    from ..ndarray import save
    save(filename, data)


def _nd_load(filename: str) -> dict[str, NDArray]:
    from ..ndarray import load
    d = load(filename)
    if not isinstance(d, dict):
        raise PlexnetError(f"{filename!r} holds a list of arrays; parameter files hold a dict of name -> array")
    return d
