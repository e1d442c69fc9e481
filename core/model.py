"""Checkpoints and the parameter-update helpers ``Module`` uses (MXNet 1.x ``mx.model``).

A checkpoint is MXNet's pair of files, readable by MXNet and by plexnet:

* ``PREFIX-symbol.json``: the network (``Symbol.tojson()``);
* ``PREFIX-EPOCH.params`` (epoch as ``%04d``): an NDArray dict in MXNet's format with
  keys ``arg:NAME`` (arguments: weights, biases) and ``aux:NAME`` (auxiliary states).

Every file is written atomically: to a temporary file in the same folder, flushed and
fsynced, then renamed over the target with ``os.replace``. A crash or a full disk in the
middle of a save leaves the previous checkpoint intact, never a truncated one.
"""
from __future__ import annotations

import logging
import os
from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from .fileio import atomic_write

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params", "atomic_write",
           "params_file", "symbol_file"]

BatchEndParam = namedtuple("BatchEndParam", ["epoch", "nbatch", "eval_metric", "locals"])


def symbol_file(prefix: str) -> str:
    return f"{prefix}-symbol.json"


def params_file(prefix: str, epoch: int) -> str:
    return "%s-%04d.params" % (prefix, epoch)


def _symbol_json(symbol: Any, remove_amp_cast: bool = True) -> str:
    if hasattr(symbol, "tojson"):
        try:
            return symbol.tojson(remove_amp_cast=remove_amp_cast)
        except TypeError:
            return symbol.tojson()
    raise TypeError(f"cannot serialise {type(symbol).__name__}: it has no tojson()")


def save_symbol(fname: str, symbol: Any, remove_amp_cast: bool = True) -> None:
    """Write ``symbol`` as JSON to ``fname`` atomically."""
    atomic_write(fname, _symbol_json(symbol, remove_amp_cast))


def _cpu() -> Any:
    from .context import cpu
    return cpu()


def _to_host(v: Any) -> Any:
    if getattr(v, "stype", "default") != "default":
        return v.as_in_context(_cpu())  # a row_sparse weight stays row_sparse in the file (MXNet)
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    return np.asarray(v)


def save_params(fname: str, arg_params: dict | None, aux_params: dict | None) -> None:
    """Write ``arg:``/``aux:`` parameters to ``fname`` in MXNet's format, atomically."""
    from .ndarray.serialize import dump_buffer
    save_dict = {f"arg:{k}": _to_host(v) for k, v in (arg_params or {}).items()}
    save_dict.update({f"aux:{k}": _to_host(v) for k, v in (aux_params or {}).items()})
    atomic_write(fname, dump_buffer(save_dict))


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: dict, aux_params: dict,
                    remove_amp_cast: bool = True) -> None:
    """Save ``PREFIX-symbol.json`` (unless ``symbol`` is None) and ``PREFIX-EPOCH.params``."""
    if symbol is not None:
        save_symbol(symbol_file(prefix), symbol, remove_amp_cast)
    param_name = params_file(prefix, epoch)
    save_params(param_name, arg_params, aux_params)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix: str, epoch: int) -> tuple[dict, dict]:
    """``(arg_params, aux_params)`` from ``PREFIX-EPOCH.params``."""
    from .ndarray import load
    fname = params_file(prefix, epoch)
    save_dict = load(fname)
    arg_params: dict = {}
    aux_params: dict = {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise ValueError(f"{fname}: a checkpoint holds a dict of arg:/aux: arrays, this file holds a list")
    for k, v in save_dict.items():
        tp, _, name = k.partition(":")
        if tp == "arg":
            arg_params[name] = v
        elif tp == "aux":
            aux_params[name] = v
        else:
            raise ValueError(f"{fname}: invalid key {k!r} (expected arg:NAME or aux:NAME)")
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict, dict]:
    """``(symbol, arg_params, aux_params)`` from ``PREFIX-symbol.json`` and
    ``PREFIX-EPOCH.params``."""
    from . import symbol as sym
    symbol = sym.load(symbol_file(prefix))
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


# -- kvstore and updates (used by Module) -------------------------------------------------------
def _kv_capable_optimizer(kv: Any) -> bool:
    cap = getattr(kv, "is_capable", None)
    if cap is None:
        return hasattr(kv, "set_optimizer")
    try:
        from .kvstore import KVStoreBase
        flag = getattr(KVStoreBase, "OPTIMIZER", "optimizer")
    except ImportError:  # pragma: no cover - kvstore is part of the core
        flag = "optimizer"
    return bool(cap(flag))


def _create_kvstore(kvstore: Any, num_device: int, arg_params: dict) -> tuple[Any, bool]:
    """``(kvstore or None, update_on_kvstore)`` as MXNet decides them:

    * ``None`` -> no kvstore; a ``str`` -> ``kv.create(name)``, except ``'local'`` (or
      any non-dist name) with a single device, which needs no kvstore at all;
    * ``'local'`` with a parameter over 16M elements updates on the workers;
    * ``MXNET_UPDATE_ON_KVSTORE=0`` (or ``PLEXNET_UPDATE_ON_KVSTORE=0``) updates on the
      workers; so does a kvstore that cannot run an optimizer.
    """
    env = os.getenv("PLEXNET_UPDATE_ON_KVSTORE", os.getenv("MXNET_UPDATE_ON_KVSTORE", "1"))
    update_on_kvstore = bool(int(env))
    from . import kvstore as kvs
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local":
                max_size = max((int(np.prod(p.shape)) for p in arg_params.values()), default=0)
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    elif hasattr(kvstore, "push") and hasattr(kvstore, "pull"):
        kv = kvstore
    else:
        raise TypeError(f"kvstore must be a KVStore, a str or None, got {kvstore!r}")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= _kv_capable_optimizer(kv)
    return kv, update_on_kvstore


def _initialize_kvstore(kvstore: Any, param_arrays: Sequence[Sequence[Any]], arg_params: dict,
                        param_names: Sequence[str], update_on_kvstore: bool) -> None:
    """Put the initial parameters in the kvstore; when it updates them, copy its
    values back to every device (so every worker starts from the same weights)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore:
            kvstore.init(name, arg_params[name])
        elif hasattr(kvstore, "broadcast"):
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)
        else:
            kvstore.init(name, arg_params[name])
            kvstore.pull(name, out=param_on_devs, priority=-idx)


def _pushpull(kvstore: Any, name: Any, grads: Any, out: Any, priority: int) -> None:
    if hasattr(kvstore, "pushpull"):
        kvstore.pushpull(name, grads, out=out, priority=priority)
    else:
        kvstore.push(name, grads, priority=priority)
        kvstore.pull(name, out=out, priority=priority)


def _update_params_on_kvstore(param_arrays: Sequence[Sequence[Any]], grad_arrays: Sequence[Sequence[Any]],
                              kvstore: Any, param_names: Sequence[str]) -> None:
    """Push gradients, let the kvstore's optimizer update, pull the weights."""
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        _pushpull(kvstore, param_names[index], grad_list, arg_list, -index)


def _update_params(param_arrays: Sequence[Sequence[Any]], grad_arrays: Sequence[Sequence[Any]], updater: Any,
                   num_device: int, kvstore: Any = None, param_names: Sequence[str] | None = None) -> None:
    """Aggregate gradients through ``kvstore`` (if any), then update every device's
    copy locally with ``updater(index, grad, weight)``."""
    updates: list[list] = [[] for _ in range(num_device)]
    for i, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            _pushpull(kvstore, param_names[i], grad_list, grad_list, -i)  # type: ignore[index]
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((i * num_device + k, g, w))
    for dev_updates in updates:
        for i, g, w in dev_updates:
            updater(i, g, w)


# -- MXNet's ``mx.model`` namespace: names defined elsewhere -------------------------------------------
#: re-exported as MXNet's module does
_REEXPORTS = {
    "FeedForward": ("plexnet.module.feedforward", "FeedForward"),
    "DataParallelExecutorManager": ("plexnet.module.feedforward", "DataParallelExecutorManager"),
    "BASE_ESTIMATOR": ("plexnet.module.feedforward", "BASE_ESTIMATOR"),
    "SKLEARN_INSTALLED": ("plexnet.module.feedforward", "SKLEARN_INSTALLED"),
    "LogValidationMetricsCallback": ("plexnet.callback", "LogValidationMetricsCallback"),
    "DataDesc": ("plexnet.io", "DataDesc"),
    "Uniform": ("plexnet.initializer", "Uniform"),
    "cpu": ("plexnet.context", "cpu"),
    "get_updater": ("plexnet.optimizer", "get_updater"),
    "mx_real_t": ("plexnet.ndarray", "mx_real_t"),
}


def __getattr__(name: str) -> Any:
    # resolved on first use: FeedForward lives with Module, a layer above this module
    target = _REEXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'plexnet.model' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(target[0]), target[1])
