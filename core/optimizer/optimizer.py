"""The optimizer base class, the updater and the optimizer registry.

Names and semantics follow MXNet 1.x's ``mx.optimizer``. An optimizer's ``update``
works on NDArrays (the arithmetic runs as one engine operation per update, reading the
gradient and mutating the weight and the states, so it is asynchronous like every
other NDArray operation) and equally on raw numpy/CuPy arrays (computed at once; the
kvstore servers use this). The math of the built-in optimizers is written once against
the array module ``xp`` (see ``builtin.py``).
"""
from __future__ import annotations

import importlib
import io
import json
import threading
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..context import HOST_DEVICE_TYPES
from ._plain import NotPlain, from_plain, to_plain

__all__ = ["Optimizer", "Updater", "get_updater", "create", "register", "lookup", "list_optimizers",
           "from_config"]

#: optimizers registered with ``Optimizer.register`` (user code); they take precedence
#: over the plugin registry, as a later MXNet registration overrides an earlier one.
_user_registry: dict[str, type] = {}


_NDArray: Any = None


def _is_nd(x: Any) -> bool:
    global _NDArray
    if _NDArray is None:  # bound on first use: the ndarray package imports this module's users
        from ..ndarray import NDArray
        _NDArray = NDArray
    return isinstance(x, _NDArray)


def _xp_of(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        return np
    return importlib.import_module(type(a).__module__.split(".")[0])


def _zeros_like(weight: Any, dtype: Any = None) -> Any:
    dt = weight.dtype if dtype is None else dtype
    if _is_nd(weight):
        from ..ndarray import zeros
        return zeros(weight.shape, weight.context, dt)
    return _xp_of(weight).zeros(weight.shape, dtype=dt)


def _astype(a: Any, dtype: Any) -> Any:
    return a.astype(dtype)  # NDArray.astype and ndarray.astype both copy


def _assign(dst: Any, src: Any) -> None:
    if _is_nd(dst):
        dst[:] = src
    else:
        dst[...] = src


class Optimizer:
    """Base class of optimizers (MXNet 1.x ``mx.optimizer.Optimizer``).

    Parameters: ``rescale_grad`` (gradients are multiplied by it first, usually
    ``1/batch_size``), ``param_idx2name`` (index -> parameter name, for ``lr_mult`` /
    ``wd_mult`` and for skipping weight decay on biases), ``wd`` (weight decay),
    ``clip_gradient`` (clip the rescaled gradient to ``[-c, c]``; None: no clipping),
    ``learning_rate``, ``lr_scheduler`` (an ``mx.lr_scheduler.LRScheduler``), ``sym``
    (a Symbol whose ``__lr_mult__``/``__wd_mult__`` attributes are honoured),
    ``begin_num_update``, ``multi_precision`` (float16 weights get a float32 master copy
    that is updated instead), ``param_dict`` (index -> object with ``lr_mult`` and
    ``wd_mult``, as Gluon parameters).
    """

    #: MXNet exposes the registry as ``Optimizer.opt_registry``
    opt_registry = _user_registry

    def __init__(self, rescale_grad: float = 1.0, param_idx2name: dict | None = None, wd: float = 0.0,
                 clip_gradient: float | None = None, learning_rate: float | None = None,
                 lr_scheduler: Any = None, sym: Any = None, begin_num_update: int = 0,
                 multi_precision: bool = False, param_dict: dict | None = None,
                 aggregate_num: int | None = None) -> None:
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                              "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._current_device: Any = 0
        self._all_index_update_counts: dict[Any, dict[Any, int]] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = aggregate_num or 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -------------------------------------------------------------------------------
    @staticmethod
    def register(klass: type) -> type:
        """Class decorator: make ``klass`` available as ``create(klass.__name__.lower())``.

        Registering a name that exists overrides it with a warning, as in MXNet.
        Installed plugins register through the ``plexnet_register_optimizers`` hook
        instead.
        """
        if not isinstance(klass, type):
            raise TypeError("Optimizer.register decorates a class")
        name = klass.__name__.lower()
        if name in _user_registry:
            old = _user_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
                          f"optimizer {old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        _user_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> "Optimizer":
        """Instantiate a registered optimizer by (case-insensitive) name."""
        return lookup(name)(**kwargs)

    # -- the interface subclasses implement ------------------------------------------------------
    def create_state(self, index: Any, weight: Any) -> Any:
        """Auxiliary state for one weight (None, an array, or a tuple of arrays)."""
        return None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """Update ``weight`` in place from ``grad`` (``index`` may be a list)."""
        raise NotImplementedError()

    #: MXNet's SGD, NAG and LARS keep ``(state, weight32)``; every other optimizer
    #: ``(weight32, state)`` (the order shows in saved states and in user code)
    _mp_state_first = False

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        if self.multi_precision and np.dtype(weight.dtype) == np.float16:
            master = _astype(weight, np.float32)
            inner = self.create_state(index, master)
            return (inner, master) if self._mp_state_first else (master, inner)
        if np.dtype(weight.dtype) == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                          "convergence. Consider using multi_precision=True option of the optimizer",
                          UserWarning, stacklevel=2)
        return self.create_state(index, weight)

    #: MXNet 1.9.1's SGD, NAG, LARS and LAMB run their own update from
    #: ``update_multi_precision`` (their ``_update_impl``), so the Updater never calls an
    #: ``update`` that a subclass of theirs overrides (example/dsd's SparseSGD runs, without
    #: pruning, in MXNet). Those classes name themselves here; ``None``: ``self.update``.
    _mp_update_owner: type | None = None

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        owner = self._mp_update_owner
        update = self.update if owner is None else owner.update.__get__(self)
        if self.multi_precision and np.dtype(weight.dtype) == np.float16:
            inner, master = state if self._mp_state_first else state[::-1]
            grad32 = _astype(grad, np.float32)
            update(index, master, grad32, inner)
            _assign(weight, master)
        else:
            update(index, weight, grad, state)

    # -- learning rate and weight decay ------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    @learning_rate.setter
    def learning_rate(self, lr: float) -> None:
        self.set_learning_rate(lr)

    def set_learning_rate(self, lr: float) -> None:
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale: Any) -> None:  # pragma: no cover - MXNet compat
        raise DeprecationWarning("set_lr_scale is deprecated, use set_lr_mult")

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Per-parameter learning-rate multipliers, by index or name (names also from the
        symbol's ``__lr_mult__`` attributes)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Per-parameter weight-decay multipliers. As in MXNet, parameters whose name
        does not end in ``_weight`` or ``_gamma`` get no weight decay by default."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id: Any) -> None:
        """Keep update counts per device, so that updating one weight on k devices counts
        once (MXNet does the same)."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._current_device = device_id
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index: Any) -> None:
        if index.__class__ is int:  # the common case (a Trainer's or Module's index): no list
            counts = self._index_update_count
            n = counts.get(index)
            n = counts[index] = (self.begin_num_update if n is None else n) + 1
            if n > self.num_update:
                self.num_update = n
            return
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _mult(self, index: Any, attr: str, table: dict) -> Any:
        """The ``lr_mult`` / ``wd_mult`` (``attr``; ``table`` the optimizer's own dict of them)
        of one parameter index: its Parameter's, else the table's by index, else by name;
        None when none applies."""
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return None

    def _get_lrs(self, indices: Sequence[Any]) -> list[float]:
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return [lr if m is None else lr * m for m in (self._mult(i, "lr_mult", self.lr_mult) for i in indices)]

    def _get_lr(self, index: Any) -> float:
        if type(self)._get_lrs is not _BASE_GET_LRS:  # a subclass's rule (MXNet's _get_lr calls it)
            return self._get_lrs([index])[0]
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        m = self._mult(index, "lr_mult", self.lr_mult)   # _get_lrs for one index, without the lists
        return lr if m is None else lr * m

    def _get_wds(self, indices: Sequence[Any]) -> list[float]:
        return [self.wd if m is None else self.wd * m
                for m in (self._mult(i, "wd_mult", self.wd_mult) for i in indices)]

    def _get_wd(self, index: Any) -> float:
        if type(self)._get_wds is not _BASE_GET_WDS:
            return self._get_wds([index])[0]
        m = self._mult(index, "wd_mult", self.wd_mult)
        return self.wd if m is None else self.wd * m

    # -- running the math ----------------------------------------------------------------------------
    def _launch(self, kernel: Callable[..., None], weight: Any, grad: Any, states: Sequence[Any],
                params: dict[str, Any]) -> None:
        """Run ``kernel(xp, weight, grad, states, **params)`` on raw arrays.

        With NDArrays it becomes one engine operation on the weight's context that reads
        the gradient and mutates the weight and the states; with raw numpy/CuPy arrays it
        runs now. ``params`` are plain scalars fixed at call time.
        """
        nd_cls = _NDArray
        if nd_cls is None or weight.__class__ is not nd_cls or grad.__class__ is not nd_cls \
                or grad._chunk.ctx is not weight._chunk.ctx:
            # anything but dense NDArrays on one context object (the Trainer's case): the checks
            if not _is_nd(weight):
                kernel(_xp_of(weight), weight, grad, list(states), **params)
                return
            if any(getattr(x, "stype", "default") != "default" for x in (weight, grad, *states)):
                self._launch_dense(kernel, weight, grad, states, params)
                return
            if not _is_nd(grad):
                from ..ndarray import array
                grad = array(grad, ctx=weight.context, dtype=grad.dtype)
            elif grad.context != weight.context:
                grad = grad.as_in_context(weight.context)
        elif states and any(x.__class__ is not nd_cls and getattr(x, "stype", "default") != "default"
                            for x in states):
            self._launch_dense(kernel, weight, grad, states, params)
            return
        w, g, s = weight._data, grad._data, [x._data for x in states]
        batch = _batch.__dict__.get("cur")
        if batch is not None and (batch.ctx is weight._chunk.ctx or batch.ctx == weight._chunk.ctx):
            batch.add(kernel, w, g, s, params, grad._chunk.var, [weight._chunk.var] + [x._chunk.var for x in states])
            return
        from .. import engine as _engine
        name = f"{type(self).__name__.lower()}_update"
        _engine.get().push_sync(lambda rc: kernel(rc.xp, w, g, s, **params), weight.context,
                                [grad._chunk.var], [weight._chunk.var] + [x._chunk.var for x in states],
                                name=name)

    def _launch_dense(self, kernel: Callable[..., None], weight: Any, grad: Any, states: Sequence[Any],
                      params: dict[str, Any]) -> None:
        """A standard (not lazy) update with sparse arrays among the operands, as MXNet's: the
        kernel runs on dense copies and the results go back into the sparse weight and states
        (every row of a row_sparse weight takes part; its compact arrays are the truth, not
        a dense buffer the kernel could write in place)."""
        def dense(x: Any) -> Any:
            return x.tostype("default") if getattr(x, "stype", "default") != "default" else x
        dw, ds = dense(weight), [dense(x) for x in states]
        cur = _batch.__dict__.pop("cur", None)   # the write-back must follow the kernel: no batching
        try:
            self._launch(kernel, dw, dense(grad), ds, params)
        finally:
            if cur is not None:
                _batch.cur = cur
        for orig, new in zip([weight, *states], [dw, *ds]):
            if new is not orig:
                orig[:] = new

    def _common(self, index: Any) -> dict[str, Any]:
        """Count the update and return ``lr``, ``wd``, ``rescale_grad``, ``clip_gradient``."""
        self._update_count(index)
        return {"lr": self._get_lr(index), "wd": self._get_wd(index), "rescale_grad": self.rescale_grad,
                "clip_gradient": self.clip_gradient}

    # -- plain-data configuration ----------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """This optimizer as JSON-able data: registered name, every plain attribute
        (hyper-parameters, multipliers, update counters) and the scheduler's config.
        ``from_config`` rebuilds it; no code is serialised."""
        attrs: dict[str, Any] = {}
        for k, v in vars(self).items():
            if k in ("lr_scheduler", "_index_update_count", "param_dict"):
                continue
            try:
                attrs[k] = to_plain(v)
            except NotPlain:
                continue
        sched = self.lr_scheduler.get_config() if self.lr_scheduler is not None else None
        return {"type": _registered_name(type(self)), "attrs": attrs, "lr_scheduler": sched}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lr={self.lr}, wd={self.wd})"


def _registered_name(cls: type) -> str:
    name = cls.__name__.lower()
    try:
        if lookup(name) is cls:
            return name
    except ValueError:
        pass
    for n, c in list(_user_registry.items()) + _plugin_items():
        if c is cls:
            return n
    raise ValueError(f"optimizer class {cls.__module__}.{cls.__name__} is not registered; decorate it with "
                     f"@mx.optimizer.Optimizer.register (or register it from a plugin) to serialise it")


def _plugin_items() -> list[tuple[str, type]]:
    from ..plugins import registries
    return registries().optimizers.items()


def from_config(cfg: dict[str, Any] | str) -> Optimizer:
    """Rebuild an optimizer from ``Optimizer.get_config()`` (or its JSON text). Only
    registered optimizer classes are instantiated."""
    if isinstance(cfg, (str, bytes)):
        cfg = json.loads(cfg)
    opt = _fresh(lookup(cfg["type"]))
    for k, v in cfg.get("attrs", {}).items():
        setattr(opt, k, from_plain(v))
    from ..lr_scheduler import from_config as sched_from_config
    opt.lr_scheduler = sched_from_config(cfg.get("lr_scheduler"))
    _bind_counts(opt, opt.__dict__.get("_all_index_update_counts") or {0: {}})
    return opt


def _fresh(cls: type) -> Optimizer:
    """An instance of a registered optimizer class with its defaults (classes that need
    arguments get ``Optimizer``'s)."""
    try:
        return cls()
    except TypeError:
        opt = cls.__new__(cls)
        Optimizer.__init__(opt)
        return opt


def _bind_counts(opt: Optimizer, counts: dict) -> None:
    """The per-device update counts; the current device's dict is shared with the table."""
    opt._all_index_update_counts = counts
    opt._index_update_count = counts.setdefault(opt.__dict__.get("_current_device", 0), {})


def from_mxnet(name: str, attrs: dict[str, Any]) -> Optimizer:
    """plexnet's optimizer registered as ``name`` (an MXNet optimizer class name) with the
    attributes it shares with MXNet's pickled one (hyper-parameters, multipliers, update
    counts, the scheduler); MXNet-only ones (``sym_info``, ``allow_np_array``, ...) are
    left out and ``param_dict`` is the loader's to set."""
    opt = _fresh(lookup(name.lower()))
    own = vars(opt)
    for k, v in attrs.items():
        if k in own and k not in ("param_dict", "_index_update_count", "_all_index_update_counts"):
            setattr(opt, k, v)
    _bind_counts(opt, attrs.get("_all_index_update_counts") or {0: dict(attrs.get("_index_update_count") or {})})
    return opt


def lookup(name: str) -> type:
    """The optimizer class registered under ``name`` (case-insensitive)."""
    if not isinstance(name, str):
        raise TypeError(f"optimizer name must be a string, got {type(name).__name__}")
    key = name.lower()
    if key in _user_registry:
        return _user_registry[key]
    from ..plugins import registries
    reg = registries().optimizers
    if key in reg:
        return reg[key]
    raise ValueError(f"Cannot find optimizer {name!r}; registered: {', '.join(list_optimizers())}")


def list_optimizers() -> list[str]:
    from ..plugins import registries
    return sorted(set(registries().optimizers) | set(_user_registry))


def create(name: str | Optimizer, **kwargs: Any) -> Optimizer:
    """``mx.optimizer.create('sgd', learning_rate=0.1)``; an Optimizer is returned as is."""
    if isinstance(name, Optimizer):
        if kwargs:
            raise ValueError("create(): keyword arguments are only accepted with an optimizer name")
        return name
    return lookup(name)(**kwargs)


register = Optimizer.register
_BASE_GET_LRS = Optimizer._get_lrs
_BASE_GET_WDS = Optimizer._get_wds


# -- the updater --------------------------------------------------------------------------------------

def _state_ctx_key(weight: Any) -> Any:
    if _is_nd(weight):
        c = weight.context
        return c.device_id if c.device_type in HOST_DEVICE_TYPES else (c.device_type, c.device_id)
    return 0


class Updater:
    """Holds per-index optimizer states and applies ``optimizer`` (``updater(index, grad,
    weight)``); what kvstores and modules call. ``index``, ``grad`` and ``weight`` may be
    lists of equal length."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}
        self.states_synced: dict[Any, bool] = {}
        self.aggregate_updates = False

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        if isinstance(index, (list, tuple)):
            items = list(zip(index, grad, weight))
        else:
            items = [(index, grad, weight)]
        if not items:
            return
        self.optimizer._set_current_context(_state_ctx_key(items[0][2]))
        batch = _LaunchBatch.open(self.optimizer, items)
        try:
            for idx, g, w in items:
                if idx not in self.states:
                    self.states[idx] = self.optimizer.create_state_multi_precision(idx, w)
                    self.states_synced[idx] = True
                elif not self.states_synced[idx]:
                    self.states[idx] = self.sync_state_context(self.states[idx], w)
                    self.states_synced[idx] = True
                self.optimizer.update_multi_precision(idx, w, g, self.states[idx])
        finally:
            if batch is not None:  # what was collected runs even when a later update raised
                _batch.cur = None
                batch.push(f"{type(self.optimizer).__name__.lower()}_update")

    def sync_state_context(self, state: Any, weight: Any) -> Any:
        """Move a (loaded) state onto the weight's device and array kind."""
        if state is None:
            return None
        if isinstance(state, (tuple, list)):
            return type(state)(self.sync_state_context(s, weight) for s in state)
        if _is_nd(weight):
            if _is_nd(state):
                return state.as_in_context(weight.context)
            from ..ndarray import array
            return array(state, ctx=weight.context, dtype=state.dtype)
        if _is_nd(state):
            return state.asnumpy()
        return _xp_of(weight).asarray(state)

    def set_states(self, states: bytes) -> None:
        """Load what ``get_states`` produced (optimizer too, if it was dumped)."""
        st, opt = _decode_states(states)
        self.states = st
        self.states_synced = dict.fromkeys(st, False)
        if opt is not None:
            self.optimizer = opt

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """States (and optionally the optimizer's config) as bytes in a safe format: a
        numpy ``.npz`` archive of arrays plus JSON metadata (no pickle)."""
        return _encode_states(self.states, self.optimizer if dump_optimizer else None)


#: ``update`` methods that only compute through ``Optimizer._launch`` (no NDArray
#: operation, no synchronous read): an ``Updater`` call over several weights may run
#: them as one engine operation (``_LaunchBatch``). A subclass that overrides
#: ``update`` is not in the set, so it keeps one operation per weight.
PURE_LAUNCH_UPDATES: set = set()
_batch = threading.local()


class _LaunchBatch:
    """The kernels of one ``Updater`` call over several NDArray weights on one device,
    pushed as one engine operation (MXNet aggregates its SGD updates the same way,
    ``multi_sgd_update``): the kernels run in the same order on the same raw arrays, so
    the values are those of one operation per weight, at the cost of one push instead of
    one per parameter (and no second worker woken for the updates of a step)."""

    __slots__ = ("ctx", "calls", "reads", "writes")

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.calls: list = []
        self.reads: list = []
        self.writes: list = []

    @staticmethod
    def open(opt: Optimizer, items: list) -> "_LaunchBatch | None":
        """A batch made current for ``items`` when they qualify, else None."""
        if len(items) < 2 or (opt._mp_update_owner or type(opt)).update not in PURE_LAUNCH_UPDATES \
                or type(opt).update_multi_precision is not Optimizer.update_multi_precision \
                or _batch.__dict__.get("cur") is not None:
            return None
        ctx = None
        for _i, g, w in items:
            if not _is_nd(w) or not _is_nd(g):
                return None
            if opt.multi_precision and np.dtype(w.dtype) == np.float16:
                return None  # the float16 copy-back is an NDArray operation after the kernel
            c = w.context
            if ctx is None:
                ctx = c
            elif c is not ctx and c != ctx:  # identity first: Context.__eq__ is Python
                return None
        b = _LaunchBatch(ctx)
        _batch.cur = b
        return b

    def add(self, kernel: Callable[..., None], w: Any, g: Any, s: list, params: dict, gvar: Any,
            wvars: list) -> None:
        self.calls.append((kernel, w, g, s, params))
        self.reads.append(gvar)
        self.writes.extend(wvars)

    def push(self, name: str) -> None:
        if not self.calls:
            return
        from .. import engine as _engine
        calls = self.calls

        def run(rc: Any) -> None:
            xp = rc.xp
            for kernel, w, g, s, params in calls:
                kernel(xp, w, g, s, **params)
        _engine.get().push_sync(run, self.ctx, self.reads, self.writes, name=name)


def get_updater(optimizer: Optimizer) -> Updater:
    """``mx.optimizer.get_updater``: an ``Updater`` for ``optimizer``."""
    return Updater(optimizer)


# -- safe state files -----------------------------------------------------------------------------------

_MAGIC = "plexnet-optimizer-states/1"


def _encode_states(states: dict[Any, Any], optimizer: Optimizer | None) -> bytes:
    arrays: dict[str, np.ndarray] = {}

    def tree(s: Any) -> Any:
        if s is None:
            return None
        if isinstance(s, (tuple, list)):
            return {"seq": [tree(x) for x in s], "tuple": isinstance(s, tuple)}
        name = f"a{len(arrays)}"
        if _is_nd(s):
            arrays[name] = s.asnumpy()
            return {"array": name, "nd": True}  # loaded back as an NDArray, as MXNet's pickle does
        elif isinstance(s, np.ndarray):
            arrays[name] = np.array(s, copy=True)
        else:  # CuPy and friends
            arrays[name] = np.asarray(s.get() if hasattr(s, "get") else s)
        return {"array": name}

    entries = []
    for idx, s in states.items():
        if not isinstance(idx, (int, str, np.integer)):
            raise TypeError(f"optimizer state index {idx!r} is neither int nor str")
        entries.append([to_plain(idx if not isinstance(idx, np.integer) else int(idx)), tree(s)])
    meta = {"format": _MAGIC, "states": entries,
            "optimizer": optimizer.get_config() if optimizer is not None else None}
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _decode_states(data: bytes) -> tuple[dict[Any, Any], Optimizer | None]:
    from .mxnet_pickle import is_pickle, load_mxnet_states
    if is_pickle(data):   # written by MXNet: read by a restricted unpickler (mxnet_pickle.py)
        states, mx_opt = load_mxnet_states(data)
        return states, (from_mxnet(*mx_opt) if mx_opt is not None else None)
    try:
        z = np.load(io.BytesIO(data), allow_pickle=False)
        meta = json.loads(bytes(z["__meta__"]).decode())
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"not an optimizer-states file of plexnet or MXNet ({type(e).__name__}: {e})") from e
    if meta.get("format") != _MAGIC:
        raise ValueError(f"unknown optimizer-states format {meta.get('format')!r}")

    def untree(t: Any) -> Any:
        if t is None:
            return None
        if "seq" in t:
            seq = [untree(x) for x in t["seq"]]
            return tuple(seq) if t.get("tuple", True) else seq
        if t.get("nd"):
            from ..ndarray import array
            a = z[t["array"]]
            return array(a, dtype=a.dtype)
        return np.array(z[t["array"]])

    states = {from_plain(idx): untree(t) for idx, t in meta["states"]}
    opt = from_config(meta["optimizer"]) if meta.get("optimizer") else None
    return states, opt
