"""Reading optimizer-state files written by MXNet 1.9.1, so that training resumes in plexnet
from MXNet's checkpoints (``Trainer.save_states``, ``Module.save_optimizer_states``,
``KVStore.save_optimizer_states``).

MXNet writes those files with ``pickle``: the states (``{index: NDArray or tuple}``) and,
from a Trainer, the optimizer object itself. Unpickling runs whatever callables the file
names, so a plain ``pickle.loads`` of a file from elsewhere is unsafe. The unpickler here
resolves only what such files hold: MXNet's ``NDArray`` (rebuilt from its serialised bytes
by ``NDArray.__setstate__``), MXNet optimizer and learning-rate scheduler objects (kept as
their attribute dicts, then mapped onto plexnet's classes of the same name), numpy arrays,
dtypes and scalars, and a few builtin containers. Anything else stops the load with an
error naming the global it refused. plexnet's own files stay ``.npz`` + JSON
(``optimizer._encode_states``)."""
from __future__ import annotations

import builtins
import io
import pickle
from typing import Any

__all__ = ["is_pickle", "load_mxnet_states", "RefusedGlobal"]

#: the builtins a state file may construct (containers, no callables with effects)
_BUILTINS = frozenset({"bytearray", "set", "frozenset", "complex", "slice", "range", "tuple", "list", "dict"})
#: numpy's own pickle entry points for arrays, dtypes and scalars (numpy 1.x and 2.x names)
_NUMPY = frozenset({("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
                    ("numpy", "ndarray"), ("numpy", "dtype")})
_OBJECT_MODULES = ("mxnet.optimizer", "mxnet.lr_scheduler")


class RefusedGlobal(pickle.UnpicklingError):
    """The file names a global that an MXNet optimizer-state file does not hold."""


class _Pickled:
    """An MXNet optimizer or scheduler as it was pickled: its class name and attributes."""

    mx_name = ""

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple):          # (dict, slots) of classes with __slots__
            state = {**(state[0] or {}), **(state[1] or {})}
        self.__dict__.update(state)


def _empty_ndarray(*_args: Any) -> Any:
    """MXNet pickles an NDArray as ``NDArray(None)`` plus its state (its serialised bytes),
    which ``NDArray.__setstate__`` reads."""
    from ..ndarray.ndarray import NDArray
    return NDArray.__new__(NDArray)


def _stand_in(module: str, name: str) -> type:
    return type(name, (_Pickled,), {"mx_name": name, "mx_module": module})


class _StatesUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("mxnet.ndarray.ndarray", "NDArray"):
            return _empty_ndarray
        if module.startswith(_OBJECT_MODULES):
            return _stand_in(module, name)
        if module == "builtins" and name in _BUILTINS:
            return getattr(builtins, name)
        if (module, name) in _NUMPY or (module == "copyreg" and name == "_reconstructor"):
            return super().find_class(module, name)
        raise RefusedGlobal(
            f"optimizer states: the file names {module}.{name}, which an MXNet optimizer-state file does "
            f"not hold; refusing to load it (plexnet reads MXNet's states, NDArrays, optimizers and "
            f"schedulers only)")


def is_pickle(data: bytes) -> bool:
    """Whether ``data`` starts as a pickle of protocol 2 or later (MXNet writes those)."""
    return len(data) > 2 and data[0] == 0x80 and 2 <= data[1] <= 5


def _scheduler(obj: Any) -> Any:
    if not isinstance(obj, _Pickled):
        return obj
    from ..lr_scheduler import from_config
    return from_config({"type": obj.mx_name, "attrs": dict(vars(obj))})


def load_mxnet_states(data: bytes) -> tuple[dict[Any, Any], tuple[str, dict] | None]:
    """``(states, optimizer)`` from an MXNet optimizer-state file's bytes; the optimizer (of a
    Trainer's file) as ``(MXNet class name, attributes)`` with its scheduler already
    plexnet's, else None (``optimizer.from_mxnet`` builds plexnet's)."""
    try:
        obj = _StatesUnpickler(io.BytesIO(data)).load()
    except RefusedGlobal:
        raise
    except Exception as e:  # noqa: BLE001 - a truncated or foreign file
        raise ValueError(f"optimizer states: not a plexnet file and not an MXNet pickle that can be read "
                         f"({type(e).__name__}: {e})") from e
    opt = None
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], _Pickled):
        attrs = dict(vars(obj[1]))
        attrs["lr_scheduler"] = _scheduler(attrs.get("lr_scheduler"))
        obj, opt = obj[0], (obj[1].mx_name, attrs)
    if not isinstance(obj, dict):
        raise ValueError(f"optimizer states: an MXNet pickle of {type(obj).__name__}, not of the states dict")
    return obj, opt
