"""Gluon blocks (MXNet 1.x ``gluon.Block``, ``HybridBlock``).

A ``Block`` owns parameters (a ``ParameterDict`` whose prefix comes from the block's
name scope, ``dense0_``) and child blocks (attributes, in assignment order). A
``HybridBlock`` writes ``hybrid_forward(F, x, **params)`` once for both worlds: called
with NDArrays, ``F`` is ``plexnet.nd`` and the operators run imperatively (recorded by
autograd); after ``hybridize()`` the first call traces it with ``F = plexnet.sym`` into
a Symbol, which ``cached.py`` binds to the symbolic executor once per input signature.
"""
from __future__ import annotations

import json
import threading
import warnings
from collections import OrderedDict
from typing import Any, Callable

from .. import ndarray as _ndmod
from .. import symbol as _symmod
from ..base import PlexnetError
from ..ndarray import NDArray
from ..symbol import Symbol
from ..symbol import name as _name
from .cached import _infer_from
from .parameter import (DeferredInitializationError, Parameter, ParameterDict, ParameterExtraError, ParameterLoadError,
                        brief_print_list)

__all__ = ["Block", "HybridBlock", "HookHandle", "DeferredInitializationError"]


class _BlockScope:
    """Name scope of a block: children created inside get ``<parent prefix><hint><n>_``."""

    _current = threading.local()

    def __init__(self, block: "Block") -> None:
        self._block = block
        self._counter: dict[str, int] = {}
        self._old_scope: Any = None
        self._name_scope: Any = None

    @staticmethod
    def create(prefix: str | None, params: ParameterDict | None, hint: str) -> tuple[str, ParameterDict]:
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self) -> "_BlockScope":
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


class HookHandle:
    """Removes a registered hook with ``detach()`` (or as a ``with`` block)."""

    _next_id = 0

    def __init__(self) -> None:
        self._hooks_dict_ref: Any = None
        self._id: int | None = None

    def attach(self, hooks_dict: OrderedDict, hook: Callable) -> None:
        import weakref
        if self._hooks_dict_ref is not None:
            raise PlexnetError("The same handle cannot be attached twice.")
        self._id = HookHandle._next_id
        HookHandle._next_id += 1
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.detach()


def _flatten(args: Any, inout_str: str) -> tuple[list, Any]:
    """Flat list of arrays/symbols and the nesting format (MXNet's ``_flatten``)."""
    if isinstance(args, (NDArray, Symbol)):
        if isinstance(args, Symbol) and len(args.list_outputs()) > 1:
            return [args[i] for i in range(len(args.list_outputs()))], len(args.list_outputs())
        return [args], 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the {inout_str} of HybridBlock must be (nested) list of Symbol or "
                         f"NDArray, but got {args!r} of type {type(args).__name__}")
    flat: list = []
    fmts: list = []
    for i in args:
        arg, fmt = _flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _same_but_trailing_none(fmt: Any, stored: Any) -> bool:
    """MXNet 1.9.1: formats that differ only by trailing ``None`` arguments (a default
    ``b=None`` given or left out) call the same cached graph."""
    if not isinstance(fmt, list) or not isinstance(stored, list) or len(fmt) == len(stored):
        return False
    short, long_ = (fmt, stored) if len(fmt) < len(stored) else (stored, fmt)
    return long_[:len(short)] == short and all(f == -1 for f in long_[len(short):])


def _all_nd(args: tuple) -> bool:
    for a in args:
        if a.__class__ is not NDArray:
            return False
    return True


def _array_leaves(args: Any) -> list:
    """The NDArrays and Symbols in nested lists/tuples; other leaves (a Parameter, a list of
    indices, None) are skipped, as MXNet's ``_gather_type_ctx_info`` does for a block that is
    not hybridized (gluon/embedding_learning passes a Parameter to a loss)."""
    if isinstance(args, (NDArray, Symbol)):
        return [args]
    if isinstance(args, (list, tuple)):
        return [leaf for a in args for leaf in _array_leaves(a)]
    return []


def _regroup(args: list, fmt: Any) -> tuple[Any, list]:
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError("Non-None output when None is expected")
            return None, args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for i in fmt:
        res, args = _regroup(args, i)
        ret.append(res)
    return ret, args


def _indent(s: str, n: int) -> str:
    lines = s.split("\n")
    return "\n".join([lines[0]] + [" " * n + line for line in lines[1:]])


class Block:
    """Base class of all layers and models; subclasses define ``forward``."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None) -> None:
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children: OrderedDict[str, Block] = OrderedDict()
        self._reg_params: dict[str, Parameter] = {}
        self._forward_hooks: OrderedDict = OrderedDict()
        self._forward_pre_hooks: OrderedDict = OrderedDict()

    def __repr__(self) -> str:
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}" for key, block in self.__dict__.items()
                           if isinstance(block, Block))
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_children"):
            existing = self.__dict__.get(name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to {type(value)} is "
                                f"not allowed.")
            if isinstance(value, Block):
                self.register_child(value, name)
            elif isinstance(value, Parameter):
                if name in self._reg_params and self._reg_params[name] is not value:
                    raise PlexnetError(f"Overriding Parameter attribute {name} is not allowed. If you want to "
                                       f"share parameters between blocks, please set 'params' at Block "
                                       f"construction instead.")
                self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _check_container_with_block(self) -> None:
        children = set(self._children.values())

        def _find(data: Any) -> bool:
            if isinstance(data, (list, tuple)):
                return any(_find(x) for x in data)
            if isinstance(data, dict):
                return any(_find(x) for x in data.values())
            return isinstance(data, Block) and data not in children
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children") and _find(v):
                warnings.warn(f'"{self.name}" is an unregistered container with Blocks. Note that Blocks inside '
                              f"the list, tuple or dict will not be registered automatically. Make sure to "
                              f"register them using register_child() or switching to nn.Sequential/"
                              f"nn.HybridSequential instead. ", stacklevel=3)

    def _alias(self) -> str:
        return self.__class__.__name__.lower()

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def name(self) -> str:
        return self._name

    def name_scope(self) -> _BlockScope:
        """``with self.name_scope():`` children created inside get this block's prefix."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters (not its children's)."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """This block's and all descendants' parameters; ``select`` is a regular
        expression matched against the names (``'.*weight|.*bias'``)."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            ret.update(self.params.select(select))
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save parameters by their structural names (``features.0.weight``), the
        format of MXNet's ``save_parameters``."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            seen: dict[int, str] = {}
            params = {k: v for k, v in params.items() if seen.setdefault(id(v), k) == k}
        from ..ndarray import save
        save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename: str) -> None:
        """Deprecated (MXNet 1.x): save with full parameter names."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you want load from "
                      "SymbolBlock later, please use export instead.", stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_parameters(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load what ``save_parameters`` wrote (here or in MXNet); files with full
        parameter names (``save_params``, ``export``) load too."""
        from ..ndarray import load
        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise PlexnetError(f"load_parameters: {filename!r} holds a list of arrays, not named parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            ids = {id(v): k for k, v in params.items() if k in loaded}
            for name, p in params.items():
                if name not in loaded and id(p) not in ids:
                    raise ParameterLoadError(f"Parameter '{name}' is missing in file '{filename}', which "
                                             f"contains parameters: {brief_print_list(loaded)}. Set "
                                             f"allow_missing=True to ignore missing parameters.")
        for name, arr in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ParameterExtraError(f"Parameter '{name}' loaded from file '{filename}' is not present "
                                              f"in ParameterDict, which contains parameters "
                                              f"{brief_print_list(self._params.keys())}. Set ignore_extra=True to "
                                              f"ignore. ")
                continue
            params[name]._load_init(arr, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def load_params(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                    ignore_extra: bool = False) -> None:
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix: str) -> None:
        """Save the structure with the traced graphs (``prefix-model.json``) and the
        parameters (``prefix-model.params``), as MXNet 1.9's ``Block.save``."""
        model: dict = {}

        def walk(blk: Block, index: list, structure: dict) -> None:
            mdl: dict = {"orig_name": blk.name}
            structure[type(blk).__name__.lower() + str(index[0])] = mdl
            if isinstance(blk, HybridBlock):
                if blk._cached_graph:
                    mdl["in_format"] = blk._in_format
                    mdl["out_format"] = blk._out_format
                    syms, out = blk._cached_graph
                    mdl["inputs"] = [s.tojson() for s in syms]
                    mdl["symbol"] = out.tojson()
                    mdl["hybridized"] = True
                else:
                    mdl["hybridized"] = False
            children: dict = {}
            mdl["children"] = children
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                walk(child, index, mdl)
        walk(self, [0], model)
        with open(prefix + "-model.json", "w") as fp:
            json.dump(model, fp)
        self.save_parameters(prefix + "-model.params")

    def load(self, prefix: str) -> None:
        """Load what ``save`` wrote into a block of the same structure (graphs of
        hybridized blocks are restored, so it runs hybridized at once)."""
        with open(prefix + "-model.json") as fp:
            model = json.load(fp)

        def walk(blk: Block, index: list, structure: dict) -> None:
            key = type(blk).__name__.lower() + str(index[0])
            if key not in structure:
                raise PlexnetError(f"Block.load: {prefix}-model.json has no entry {key!r}; the block structure "
                                   f"differs from the saved one")
            mdl = structure[key]
            # names as saved, so the restored graphs find their parameters
            blk._name = mdl["orig_name"]
            renamed = OrderedDict()
            for pname, param in blk.params._params.items():
                param.name = blk._name + "_" + pname[len(blk.params._prefix):]
                param._var = None
                renamed[param.name] = param
            blk.params._params = renamed
            if isinstance(blk, HybridBlock) and mdl.get("hybridized"):
                blk._in_format = mdl["in_format"]
                blk._out_format = mdl["out_format"]
                blk._cached_graph = ([_symmod.load_json(i) for i in mdl["inputs"]], _symmod.load_json(mdl["symbol"]))
                blk._cached_op = None
                blk._active = True
            for child in blk._children.values():
                index[0] += 1
                walk(child, index, mdl)
            # as MXNet: children get back the keys they had when saved (the structural
            # parameter names of save_parameters are built from them)
            for ch_name in list(blk._children):
                child = blk._children.pop(ch_name)
                blk._children[mdl["children"][child.name]] = child
        walk(self, [0], model)
        self.load_parameters(prefix + "-model.params")

    def register_op_hook(self, callback: Callable, monitor_all: bool = False) -> None:
        """``callback(node_name, op_name, array)`` for every operator output of the
        hybridized descendants (with ``monitor_all`` also every input)."""
        for cld in self._children.values():
            cld.register_op_hook(callback, monitor_all)

    def register_child(self, block: "Block", name: str | None = None) -> None:
        """Register ``block`` as a child (attribute assignment does this)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook: Callable) -> HookHandle:
        """``hook(block, inputs)`` before every forward."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook: Callable) -> HookHandle:
        """``hook(block, inputs, outputs)`` after every forward."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn: Callable[["Block"], Any]) -> "Block":
        """``fn(block)`` on every descendant, then on this block."""
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False, force_reinit: bool = False) -> None:
        """Initialise every parameter (``collect_params().initialize``)."""
        from ..initializer import Uniform
        self.collect_params().initialize(init if init is not None else Uniform(), ctx, verbose, force_reinit)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize the HybridBlocks among the descendants."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def cast(self, dtype: Any) -> None:
        """Cast parameters (and children) to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def zero_grad(self) -> None:
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        self.collect_params().reset_ctx(ctx)

    def __call__(self, *args: Any) -> Any:
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                hook(self, args)
        out = self.forward(*args)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                hook(self, args, out)
        return out

    def forward(self, *args: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    #: whether ``summary`` prints a row for this block (the Sequential containers say no)
    _summary_row = True

    def summary(self, *inputs: Any) -> None:
        """Print, as MXNet 1.9.1 does, the inputs' shapes, then every block's (in the order
        their forwards finish; Sequential containers left out) output shapes and parameter
        count, and the totals: parameters counted once per block that uses them (shared ones
        again), trainable ones (``grad_req`` not ``'null'``), shared ones. The network must
        be initialized and not hybridized."""
        rows: dict[str, list] = {"Input": [_shape_str(inputs), 0, 0, 0]}
        seen: set = set()
        hooks = []

        def hook(block: Block, _in: Any, out: Any) -> None:
            n = trainable = shared = 0
            for p in block.params.values():
                size = int(p.data().size)
                n += size
                trainable += 0 if p.grad_req == "null" else size
                if id(p) in seen:
                    shared += size
                seen.add(id(p))
            rows[f"{block.__class__.__name__}-{len(rows)}"] = [_shape_str(out), n, trainable, shared]

        def register(block: Block) -> None:
            assert not getattr(block, "_active", False), f'"{block.name}" must not be hybridized to print summary.'
            if block._summary_row:   # not the Sequential containers
                hooks.append(block.register_forward_hook(hook))
        try:
            self.apply(register)
            self(*inputs)
            line = "{:>20}  {:>42} {:>15}"
            print("-" * 80)
            print(line.format("Layer (type)", "Output Shape", "Param #"))
            print("=" * 80)
            for name, (shape, n, _t, _s) in rows.items():
                print(line.format(name, shape, n))
            total = sum(r[1] for r in rows.values())
            trainable = sum(r[2] for r in rows.values())
            shared = sum(r[3] for r in rows.values())
            print("=" * 80)
            print("Parameters in forward computation graph, duplicate included")
            print(f"   Total params: {total}")
            print(f"   Trainable params: {trainable}")
            print(f"   Non-trainable params: {total - trainable}")
            print(f"Shared params in forward computation graph: {shared}")
            print(f"Unique parameters in model: {total - shared}")
            print("-" * 80)
        finally:
            for h in hooks:
                h.detach()


def _shape_str(args: Any) -> str:
    """MXNet's shape text for a block's inputs or outputs: each array's shape tuple, other
    values as they are, nested as the lists and tuples that hold them; the outer brackets
    of a list or tuple dropped (``(2, 3), (2, 4)``)."""
    def shapes(a: Any) -> Any:
        if isinstance(a, (list, tuple)):
            return [shapes(i) for i in a]
        return tuple(a.shape) if isinstance(a, NDArray) else a
    s = shapes(args)
    return str(s)[1:-1] if isinstance(s, list) else str(s)


class HybridBlock(Block):
    """A block whose ``hybrid_forward(F, x, *args, **params)`` runs imperatively or,
    after ``hybridize()``, as a cached symbolic graph."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None) -> None:
        super().__init__(prefix, params)
        self._cached_graph: tuple = ()
        self._cached_op: Any = None
        self._out_format: Any = None
        self._in_format: Any = None
        self._active = False
        self._flags: dict[str, Any] = {}
        self._op_hook: tuple | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock) and "_cached_op" in self.__dict__:
            self._clear_cached_op()

    def register_child(self, block: Block, name: str | None = None) -> None:
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but {block!r} has type "
                             f"{type(block)}. If you are using Sequential, please try HybridSequential instead.")
        super().register_child(block, name)
        if "_cached_op" in self.__dict__:
            self._clear_cached_op()

    def _clear_cached_op(self) -> None:
        self._cached_graph = ()
        self._cached_op = None

    def register_op_hook(self, callback: Callable, monitor_all: bool = False) -> None:
        self._op_hook = (callback, monitor_all)
        self._cached_op = None
        super().register_op_hook(callback, monitor_all)

    def optimize_for(self, x: Any, *args: Any, backend: Any = None, **kwargs: Any) -> None:
        """MXNet's subgraph-backend partitioning; plexnet has no partitioning backends."""
        if not backend:
            raise ValueError('Must specify "backend" to optimize_for')
        self.hybridize(True, backend=backend)

    def hybridize(self, active: bool = True, backend: Any = None, backend_opts: Any = None, clear: bool = True,
                  static_alloc: bool = False, static_shape: bool = False, inline_limit: int = 2,
                  forward_bulk_size: int | None = None, backward_bulk_size: int | None = None,
                  **kwargs: Any) -> None:
        """Run as one cached symbolic graph from the next call on. plexnet's executor
        always plans memory statically, so ``static_alloc``/``static_shape`` are
        accepted for compatibility and change nothing; ``backend`` (subgraph
        partitioning) is not supported."""
        if backend is not None:
            raise PlexnetError(f"hybridize: backend={backend!r} (subgraph partitioning) is not supported by "
                               f"plexnet")
        self._active = active
        self._flags = {"static_alloc": static_alloc, "static_shape": static_shape,
                       "forward_bulk_size": forward_bulk_size, "backward_bulk_size": backward_bulk_size}
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/pre-hook. If "{self}" is a '
                          f"child of HybridBlock, the hooks will not take effect.", stacklevel=2)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape, clear=clear, **kwargs)

    def cast(self, dtype: Any) -> None:
        self._clear_cached_op()
        super().cast(dtype)

    def reset_ctx(self, ctx: Any) -> None:
        self._clear_cached_op()
        super().reset_ctx(ctx)

    def _get_graph(self, *args: Any) -> tuple:
        if not self._cached_graph:
            flat, self._in_format = _flatten(args, "input")
            real = [a for a in flat if a is not None]
            if not real:
                raise ValueError("All args are None and we do not support such a case.")
            inputs: list[Any] = []
            syms = []
            cnt = 0
            for a in flat:
                if a is None:
                    inputs.append(None)
                    continue
                s = _symmod.var("data" if len(real) == 1 else f"data{cnt}")
                cnt += 1
                inputs.append(s)
                syms.append(s)
            grouped, _ = _regroup(inputs, self._in_format)
            params = {i: j.var() for i, j in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(_symmod, *(grouped if isinstance(grouped, list) else [grouped]), **params)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = syms, _symmod.Group(out)
        return self._cached_graph

    def _infer_attrs(self, *args: Any) -> None:
        """Fill unknown parameter shapes/dtypes from the inputs (deferred init)."""
        inputs, out = self._get_graph(*args)
        flat, _ = _flatten(args, "input")
        names = [s.name for s in inputs]
        sdict, tdict = _infer_from(out, names, [a for a in flat if a is not None])
        for p in self.collect_params().values():
            if p.name in sdict and sdict[p.name] is not None:
                p.shape = sdict[p.name]
            if p.name in tdict and tdict[p.name] is not None and p._data is None:
                p.dtype = tdict[p.name]

    def infer_shape(self, *args: Any) -> None:
        """Infer the parameters' shapes from example inputs."""
        self._infer_attrs(*args)

    def infer_type(self, *args: Any) -> None:
        self._infer_attrs(*args)

    def _deferred_infer_shape(self, *args: Any) -> None:
        try:
            self._infer_attrs(*args)
        except Exception as e:
            raise ValueError(f"Deferred initialization failed because shape cannot be inferred. {e}") from e

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> tuple[str, str]:
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` keys)
        as MXNet does; load them with ``SymbolBlock.imports`` or ``Module``."""
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with this block at least "
                               "once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        sym.save(sym_file)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict[f"arg:{name}"] = param._reduce()
            elif name in aux_names:
                arg_dict[f"aux:{name}"] = param._reduce()
        params_file = f"{path}-{epoch:04d}.params"
        from ..ndarray import save
        save(params_file, arg_dict)
        return sym_file, params_file

    def _call_cached_op(self, *args: Any) -> Any:
        from .cached import CachedGraph
        if self._cached_op is None:
            inputs, out = self._get_graph(*args)
            self._cached_op = CachedGraph(self, inputs, out)
        flat, fmt = _flatten(args, "input")
        if fmt != self._in_format and not _same_but_trailing_none(fmt, self._in_format):
            raise ValueError(f"The argument structure of HybridBlock does not match the cached version. Stored "
                             f"format = {fmt}, input format = {self._in_format}")
        outs = self._cached_op([a for a in flat if a is not None])
        return _regroup(outs, self._out_format)[0]

    def _nd_params(self, ctx: Any, x: Any, *args: Any) -> dict:
        """This block's parameters on ``ctx`` for an imperative call (finishing a deferred
        initialisation from the inputs' shapes first)."""
        try:
            return {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args)
            for p in self.collect_params().values():
                p._finish_deferred_init()
            return {k: v.data(ctx) for k, v in self._reg_params.items()}

    def forward(self, x: Any, *args: Any) -> Any:
        if x.__class__ is NDArray and not self._active and (not args or _all_nd(args)):
            # the common imperative call (NDArrays only, not hybridized): the code below without
            # the generic checks
            return self.hybrid_forward(_ndmod, x, *args, **self._nd_params(x._chunk.ctx, x, *args))
        if not args and x.__class__ is NDArray:  # the common call, without the generic checks
            flat = [x]
            has_sym, has_nd = False, True
        else:
            flat = _array_leaves([x, *args])
            has_sym = any(isinstance(a, Symbol) for a in flat)
            has_nd = any(isinstance(a, NDArray) for a in flat)
        if has_sym and has_nd:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types for the input. "
                             "Please check the type of the args.")
        if has_nd:
            if self._active:
                if len(flat) > 1 and len({a.context for a in flat}) > 1:
                    raise ValueError(f"Find multiple contexts in the input, After hybridized, the HybridBlock only "
                                     f"supports one input context. Find all contexts = "
                                     f"{set(a.context for a in flat)}")
                return self._call_cached_op(x, *args)
            ctx = next(a for a in flat if isinstance(a, NDArray)).context
            return self.hybrid_forward(_ndmod, x, *args, **self._nd_params(ctx, x, *args))
        if not has_sym:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the input.")
        params = {i: j.var() for i, j in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_symmod, x, *args, **params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.hybrid_forward is not defined")
