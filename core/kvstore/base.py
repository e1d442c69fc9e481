"""``KVStoreBase``: the MXNet 1.x KVStore API shared by every kvstore type.

A kvstore holds one value per key (int or str keys; one kind per store). Workers
``init`` keys, ``push`` values (several values for one key, e.g. one gradient per
device, are summed), and ``pull`` the stored value into one or several arrays. When an
optimizer is set (``set_optimizer``) or an updater function (``set_updater``), a push
updates the stored value with the pushed sum instead of replacing it.

Subclasses implement ``_init_impl``, ``_push_impl`` and ``_pull_impl`` on normalised
``(key, [arrays])`` lists; this class does the argument handling and the checks.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import numpy as np

from ..base import PlexnetError

__all__ = ["KVStoreBase", "KVStoreError", "KVStoreKeyError", "UnknownKVStoreTypeError", "bigarray_bound",
           "check_compression_params"]


class KVStoreError(PlexnetError):
    """Misuse of a kvstore or a failure inside one (a dead peer, a timeout)."""


class KVStoreTypeError(KVStoreError, TypeError):
    """A value of the wrong storage type (MXNet raises MXNetError; a TypeError too here)."""


class UnknownKVStoreTypeError(KVStoreError, ValueError):
    """``kv.create`` of a type no plugin provides (an MXNetError as MXNet's, a ValueError too)."""


class KVStoreKeyError(KVStoreError, KeyError):
    """A key that is unknown (pull/push before init) or already initialised."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def bigarray_bound() -> int:
    """Arrays with at least this many elements count as big (MXNet's
    ``MXNET_KVSTORE_BIGARRAY_BOUND``, default 1,000,000; ``PLEXNET_KVSTORE_BIGARRAY_BOUND``
    wins when both are set)."""
    v = os.environ.get("PLEXNET_KVSTORE_BIGARRAY_BOUND") or os.environ.get("MXNET_KVSTORE_BIGARRAY_BOUND")
    return int(v) if v else 1000 * 1000


def check_compression_params(params: dict[str, Any]) -> dict[str, Any]:
    """Validate ``set_gradient_compression`` parameters; returns ``{'type', 'threshold'}``."""
    if not isinstance(params, dict):
        raise TypeError("set_gradient_compression expects a dict like {'type': '2bit', 'threshold': 0.5}")
    unknown = set(params) - {"type", "threshold"}
    if unknown:
        raise ValueError(f"set_gradient_compression: unknown parameters {sorted(unknown)}")
    kind = str(params.get("type", "none")).lower()
    if kind not in ("2bit", "none"):
        raise ValueError(f"gradient compression type {kind!r} is not supported; use '2bit' or 'none'")
    threshold = float(params.get("threshold", 0.5))
    if kind == "2bit" and not threshold > 0:
        raise ValueError(f"2bit compression needs a threshold > 0, got {threshold}")
    return {"type": kind, "threshold": threshold}


def _is_nd(x: Any) -> bool:
    from ..ndarray import NDArray
    return isinstance(x, NDArray)


def _is_key(k: Any) -> bool:
    return isinstance(k, (str, int, np.integer)) and not isinstance(k, bool)


class KVStoreBase:
    """The kvstore API (MXNet 1.x ``mx.kv.KVStore``)."""

    #: user classes registered with ``KVStoreBase.register`` (``kv.create`` finds them)
    kv_registry: dict[str, type] = {}
    #: the capability name ``is_capable`` takes for "the store runs the optimizer" (MXNet's constant)
    OPTIMIZER = "optimizer"

    def __init__(self, name: str | None = None) -> None:
        # a class registered with ``KVStoreBase.register`` is built with no arguments (MXNet)
        self._type = type(self).__name__.lower() if name is None else name
        self._updater: Any = None
        self._updater_func: Any = None
        self._optimizer: Any = None
        self._key_kind: type | None = None
        self._compression: dict[str, Any] = {"type": "none", "threshold": 0.5}
        self._pushed_once = False

    # -- identity -------------------------------------------------------------------------------
    @property
    def type(self) -> str:
        """The kvstore type name as given to ``create``."""
        return self._type

    @property
    def rank(self) -> int:
        """This worker's rank (0 for local stores)."""
        return 0

    @property
    def handle(self) -> "KVStoreBase":
        """What MXNet scripts pass to ``mx.profiler.set_kvstore_handle`` (MXNet's C
        handle; here the store itself)."""
        return self

    @property
    def num_workers(self) -> int:
        """Number of workers (1 for local stores)."""
        return 1

    def barrier(self) -> None:
        """Wait until every worker reaches this point (nothing to wait for locally)."""

    def _barrier(self) -> None:
        """MXNet's spelling of ``barrier`` (MXNet's SVRGModule calls it)."""
        self.barrier()

    def get_num_dead_node(self, node_id: int = 0, timeout: int = 60) -> int:
        return 0

    def is_capable(self, capability: str) -> bool:
        """MXNet 1.9's capability query: ``'optimizer'`` (updates run in the store)."""
        return capability.lower() == "optimizer"

    @staticmethod
    def register(klass: Any) -> Any:
        """Register a kvstore class so that ``kv.create(klass.__name__.lower())`` builds it
        (MXNet 1.9's ``KVStoreBase.register``). Plugins use the
        ``plexnet_register_kvstores`` hook instead."""
        if not isinstance(klass, type):
            raise TypeError("KVStoreBase.register decorates a class")
        KVStoreBase.kv_registry[klass.__name__.lower()] = klass
        return klass

    # -- argument handling ------------------------------------------------------------------------
    def _check_key(self, k: Any) -> Any:
        if not _is_key(k):
            raise TypeError(f"kvstore keys must be int or str, got {type(k).__name__} ({k!r})")
        if isinstance(k, np.integer):
            k = int(k)
        kind = str if isinstance(k, str) else int
        if self._key_kind is None:
            self._key_kind = kind
        elif kind is not self._key_kind:
            raise KVStoreTypeError(f"key {k!r} is {kind.__name__}, but this kvstore already uses "
                            f"{self._key_kind.__name__} keys; int and str keys can not be mixed in one store")
        return k

    def _pairs(self, key: Any, value: Any, what: str) -> list[tuple[Any, list[Any]]]:
        """Normalise ``(key|keys, value|values|list-of-lists)`` to ``[(key, [arrays])]``."""
        if _is_key(key):
            vals = self._as_list(value, what, key)
            return [(self._check_key(key), vals)]
        if not isinstance(key, (list, tuple)):
            raise TypeError(f"{what}: key must be an int, a str or a list of them, got {type(key).__name__}")
        keys = list(key)
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{what}: with a list of {len(keys)} keys, pass a list of values")
        if len(value) != len(keys):
            raise ValueError(f"{what}: {len(keys)} keys but {len(value)} values")
        return [(self._check_key(k), self._as_list(v, what, k)) for k, v in zip(keys, value)]

    @staticmethod
    def _as_list(value: Any, what: str, key: Any) -> list[Any]:
        vals = list(value) if isinstance(value, (list, tuple)) else [value]
        if not vals:
            raise ValueError(f"{what}: no value given for key {key!r}")
        for v in vals:
            if not _is_nd(v):
                raise TypeError(f"{what}: values for key {key!r} must be NDArrays, got {type(v).__name__}")
        return vals

    # -- the API -------------------------------------------------------------------------------------
    def init(self, key: Any, value: Any) -> None:
        """Initialise ``key`` (or each of ``keys``) with ``value``; initialising a key twice
        is an error."""
        pairs = self._pairs(key, value, "init")
        seen = set()
        for k, vals in pairs:
            if k in seen:
                raise KVStoreKeyError(f"init: key {k!r} appears twice in one call")
            seen.add(k)
        self._init_impl([(k, vals[0]) for k, vals in pairs])

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Push ``value`` to ``key``; a list of values for one key is summed first. With
        an updater the stored value is updated with the sum, else replaced by it."""
        pairs = self._pairs(key, value, "push")
        self._pushed_once = True
        self._push_impl(pairs, priority)

    def pull(self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy the stored value of ``key`` into ``out`` (one NDArray or a list: each
        receives it)."""
        if out is None:
            raise ValueError("pull: out= is required")
        pairs = self._pairs(key, out, "pull")
        if any(getattr(o, "stype", "default") != "default" for _k, outs in pairs for o in outs):
            pairs = self._sparse_outs(pairs, priority, ignore_sparse)
        self._pull_impl(pairs, priority)

    def _sparse_outs(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int,
                     ignore_sparse: bool) -> list[tuple[Any, list[Any]]]:
        """MXNet's pull skips sparse outs (``ignore_sparse=True``) or fills them with the
        whole value; the dense outs are left to ``_pull_impl``."""
        from ..ndarray import zeros
        dense = []
        for k, outs in pairs:
            for o in outs:
                if getattr(o, "stype", "default") != "default" and not ignore_sparse:
                    tmp = zeros(o.shape, o.context, o.dtype)
                    self._pull_impl([(k, [tmp])], priority)
                    o[:] = tmp
            rest = [o for o in outs if getattr(o, "stype", "default") == "default"]
            if rest:
                dense.append((k, rest))
        return dense

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """``push`` then ``pull``; with ``out=None`` the values are overwritten in place."""
        self.push(key, value, priority)
        self.pull(key, out=value if out is None else out, priority=priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """``init`` with ``value`` then ``pull`` into ``out`` (MXNet 1.9)."""
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None) -> None:
        """Pull only the rows ``row_ids`` of the value of ``key`` into the row_sparse array
        ``out`` (a list of outs takes a list of row_ids, one each); the result holds one
        row per unique id, as MXNet's. The stored value stays dense (docs/sparse.md)."""
        from ..ndarray import array, op_function, zeros
        from ..ndarray.sparse import RowSparseNDArray
        if out is None or row_ids is None:
            raise ValueError("row_sparse_pull: out= and row_ids= are required")
        pairs = self._pairs(key, out, "row_sparse_pull")
        ids = self._pairs(key, row_ids, "row_sparse_pull")
        for (k, outs), (_k, rids) in zip(pairs, ids):
            if len(rids) == 1 and len(outs) > 1:
                rids = rids * len(outs)
            if len(rids) != len(outs):
                raise ValueError(f"row_sparse_pull: key {k!r} has {len(outs)} outs but {len(rids)} row_ids")
            for o, rid in zip(outs, rids):
                if not isinstance(o, RowSparseNDArray):
                    raise KVStoreTypeError(f"row_sparse_pull: out for key {k!r} must be a RowSparseNDArray, got "
                                    f"storage type {getattr(o, 'stype', type(o).__name__)}")
                full = zeros(o.shape, o.context, o.dtype)
                self._pull_impl([(k, [full])], priority)
                rows = np.unique(rid.asnumpy().astype(np.int64))
                if rows.size and (rows[0] < 0 or rows[-1] >= o.shape[0]):
                    raise ValueError(f"row_sparse_pull: row_ids for key {k!r} must be in [0, {o.shape[0]}); got "
                                     f"min {rows[0]}, max {rows[-1]}")
                idx = array(rows, ctx=o.context, dtype=np.int64)
                take = op_function("take")
                if take is None:
                    raise PlexnetError("row_sparse_pull needs the 'take' operator (plexnet-ops-basic)")
                vals = take(full, idx, axis=0)  # an engine operation after the pull
                o._assign(RowSparseNDArray(vals, (idx,), o.shape))

    # -- updates -------------------------------------------------------------------------------------
    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on every push (update on kvstore)."""
        from ..optimizer import Optimizer, get_updater
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"set_optimizer expects an mx.optimizer.Optimizer, got {type(optimizer).__name__}")
        self._optimizer = optimizer
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater: Callable[[Any, Any, Any], None]) -> None:
        """``updater(key, pushed_sum, stored)`` replaces the plain assignment on push."""
        if not callable(updater):
            raise TypeError("the updater must be callable as updater(key, grad, weight)")
        self._updater = updater
        self._updater_changed()

    set_updater = _set_updater

    def _updater_changed(self) -> None:
        """Hook for subclasses (e.g. per-device updaters)."""

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the optimizer states (and its configuration with ``dump_optimizer``) in a
        safe format (numpy ``.npz`` + JSON, no pickle)."""
        from ..optimizer import Updater
        if not isinstance(self._updater, Updater):
            raise KVStoreError("save_optimizer_states: no optimizer is set on this kvstore; call "
                               "set_optimizer() first")
        data = self._get_updater_states(dump_optimizer)
        from ..fileio import atomic_write
        atomic_write(fname, data)

    def load_optimizer_states(self, fname: str) -> None:
        """Load what ``save_optimizer_states`` wrote."""
        from ..optimizer import Updater
        if not isinstance(self._updater, Updater):
            raise KVStoreError("load_optimizer_states: no optimizer is set on this kvstore; call "
                               "set_optimizer() first")
        with open(fname, "rb") as f:
            self._set_updater_states(f.read())

    def _get_updater_states(self, dump_optimizer: bool) -> bytes:
        from .. import engine
        engine.get().wait_for_all()
        return self._updater.get_states(dump_optimizer)

    def _set_updater_states(self, data: bytes) -> None:
        self._updater.set_states(data)
        self._optimizer = self._updater.optimizer

    def set_gradient_compression(self, compression_params: dict[str, Any]) -> None:
        """``{'type': '2bit', 'threshold': t}``: quantise pushed gradients to
        {-t, 0, +t} keeping the rest as a residual added to the next push."""
        if self._pushed_once:
            raise KVStoreError("set_gradient_compression must be called before the first push")
        self._compression = check_compression_params(compression_params)

    @property
    def gradient_compression(self) -> dict[str, Any]:
        return dict(self._compression)

    # -- for subclasses -------------------------------------------------------------------------------
    def _init_impl(self, items: Sequence[tuple[Any, Any]]) -> None:
        raise NotImplementedError

    def _push_impl(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int) -> None:
        raise NotImplementedError

    def _pull_impl(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int) -> None:
        raise NotImplementedError

    def _send_command_to_servers(self, head: int, body: str) -> Any:
        """Send a command to every server (MXNet's command heads;
        ``plexnet.profiler.SERVER_COMMAND`` carries the profiler's
        ``profile_process='server'`` calls). Local stores have no servers."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} type={self.type!r} rank={self.rank}/{self.num_workers}>"

