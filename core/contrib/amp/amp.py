"""``mx.contrib.amp``: automatic mixed precision (MXNet 1.9.1's API).

``init`` patches the operator functions of ``plexnet.ndarray`` and ``plexnet.symbol`` so the
listed operators cast their inputs (low precision for ``list_lp16_ops``, float32 for
``list_fp32_ops`` and the matching ``list_conditional_fp32_ops``, the widest input type for
``list_widest_type_cast``); ``init_trainer``/``scale_loss``/``unscale`` give a Gluon Trainer
dynamic loss scaling (the Trainer skips an update whose gradients overflowed).
bfloat16: numpy has no bfloat16 dtype, so everything that would make a bfloat16 array is
refused with an error naming it (the op lists for bfloat16 are there).
"""
from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any, Callable, Iterator

import numpy as np

from ... import ndarray, symbol
from ...gluon.trainer import Trainer
from ...ndarray import NDArray
from ...optimizer import Optimizer
from ...symbol import Symbol
from ...symbol.node import Entry
from .convert import _BF16_REFUSED, convert_bucketing_module, convert_hybrid_block, convert_model, convert_symbol
from .oplists import (_kind, list_conditional_fp32_ops, list_fp32_ops, list_loss_output_functions,
                      list_lp16_fp32_ops, list_lp16_ops, list_lp16_use_fp32_params, list_widest_type_cast)
from .loss_scaler import LossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_hybrid_block",
           "convert_bucketing_module", "convert_symbol", "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops",
           "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params"]


_state: dict[str, Any] = {"initialized": False, "scaler_taken": False, "scaler": None, "patched": []}
_LAZY = object()  # marks an attribute the namespace made lazily (nothing to put back)


# -- init: operator patching -------------------------------------------------------------------------
def _cast(x: Any, dtype: np.dtype) -> Any:
    """``x`` cast to ``dtype`` when it is a float16/float32 array of another dtype (a Symbol always)."""
    if isinstance(x, Symbol):
        return symbol.amp_cast(x, dtype=dtype)
    if isinstance(x, NDArray) and x.dtype != dtype and x.dtype in (np.float16, np.float32):
        return ndarray.amp_cast(x, dtype=dtype)
    return x


def _named_like(new: Callable, f: Callable) -> Callable:
    new.__name__, new.__doc__ = getattr(f, "__name__", "amp_wrapped"), f.__doc__
    new.__module__ = getattr(f, "__module__", __name__)
    new.__wrapped__ = f  # type: ignore[attr-defined]
    new.__amp_wrapped__ = True  # type: ignore[attr-defined]  # (nd functions may carry __wrapped__ of their own)
    return new


def _condition_met(kwargs: dict, cond: tuple[str, list[str]] | None) -> bool:
    return cond is None or (cond[0] in kwargs and kwargs[cond[0]] in cond[1])


def _nd_wrapper(f: Callable, dtype: np.dtype, cond: tuple[str, list[str]] | None = None) -> Callable:
    def run(*args: Any, **kwargs: Any) -> Any:
        if not _condition_met(kwargs, cond):
            return f(*args, **kwargs)
        # ``out`` stays the caller's array (MXNet casts it too, writing into a temporary copy)
        return f(*[_cast(a, dtype) for a in args], **{k: v if k == "out" else _cast(v, dtype)
                                                       for k, v in kwargs.items()})
    return _named_like(run, f)


def _sym_wrapper(f: Callable, dtype: np.dtype, cond: tuple[str, list[str]] | None = None) -> Callable:
    # The operator is built first, so the variables it creates (fc_weight) get casts too, as MXNet's.
    def run(*args: Any, **kwargs: Any) -> Any:
        out = f(*args, **kwargs)
        if not _condition_met(kwargs, cond):
            return out
        node = out._heads_node()
        if node is None or node.op is None:
            return out
        nargs = node.num_args()
        node.inputs = [Entry(_cast(Symbol([e]), dtype)._outputs[0][0], 0) if i < nargs else e
                       for i, e in enumerate(node.inputs)]
        return out
    return _named_like(run, f)


def _widest_wrapper(f: Callable, target: np.dtype) -> Callable:
    def run(*args: Any, **kwargs: Any) -> Any:
        slots: list[tuple[Any, Any]] = [(i, a) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
        slots += [(k, v) for k, v in kwargs.items() if isinstance(v, (Symbol, NDArray))]
        new_args, new_kwargs = list(args), dict(kwargs)
        if any(isinstance(a, Symbol) for _, a in slots):
            casted = symbol.amp_multicast(*[a for _, a in slots], num_outputs=len(slots))
            values = [casted[i] for i in range(len(slots))]
        else:
            widest = np.dtype(np.float32) if any(a.dtype == np.float32 for _, a in slots) else target
            values = [ndarray.amp_cast(a, dtype=widest) if a.dtype == target and a.dtype != widest else a
                      for _, a in slots]
        for (key, _), v in zip(slots, values):
            if isinstance(key, int):
                new_args[key] = v
            else:
                new_kwargs[key] = v
        return f(*new_args, **new_kwargs)
    return _named_like(run, f)


def _home(module: Any, name: str) -> tuple[Any, str]:
    """Where ``module``'s function for operator ``name`` lives (``_contrib_x`` in ``.contrib``)."""
    if name.startswith("_contrib_"):
        return module.contrib, name[len("_contrib_"):]
    if name.startswith("_"):
        return module._internal, name
    return module, name


def _patch(module: Any, name: str, make: Callable[[Callable], Callable], required: bool = True) -> None:
    """Wrap operator ``name`` of ``module``. A name of the built-in lists whose plugin is
    not installed (``required`` False) is skipped; a user-given one must exist."""
    home, attr = _home(module, name)
    try:
        f = getattr(home, attr)
    except AttributeError as e:
        if not required:
            return
        raise AttributeError(f"amp.init: operator {name!r} is not registered in plexnet "
                             f"({module.__name__} has no {attr!r})") from e
    _remember(home, attr)
    setattr(home, attr, make(f))


def _remember(home: Any, attr: str) -> None:
    own = vars(home) if hasattr(home, "__dict__") else {}
    _state["patched"].append((home, attr, own.get(attr, _LAZY)))


def _restore() -> None:
    """Undo ``init`` (tests: AMP is process-wide, as in MXNet, where nothing undoes it)."""
    for home, attr, orig in reversed(_state["patched"]):
        if orig is _LAZY:
            delattr(home, attr)  # the namespace resolves the operator lazily again
        else:
            setattr(home, attr, orig)
    _state.update(initialized=False, scaler_taken=False, scaler=None, patched=[])


def _cond_wrap(wrapper: Callable, dtype: np.dtype, cond: tuple[str, list[str]], f: Callable) -> Callable:
    return wrapper(f, dtype, cond)


def _wrap_module(module: Any, target: np.dtype, kind: str, lp_ops: list[str] | None,
                 cond_ops: list | None, fp32_ops: list[str] | None) -> None:
    wrapper = _sym_wrapper if module is symbol else _nd_wrapper
    f32 = np.dtype(np.float32)
    for name in lp_ops if lp_ops is not None else list_lp16_ops(kind):
        _patch(module, name, lambda f: wrapper(f, target), lp_ops is not None)
    for name in fp32_ops if fp32_ops is not None else list_fp32_ops(kind):
        _patch(module, name, lambda f: wrapper(f, f32), fp32_ops is not None)
    for name, arg, values in cond_ops if cond_ops is not None else list_conditional_fp32_ops(kind):
        cond: tuple[str, list[str]] = (arg, list(values))
        _patch(module, name, functools.partial(_cond_wrap, wrapper, f32, cond), cond_ops is not None)
    for name in list_widest_type_cast(kind):
        _patch(module, name, lambda f: _widest_wrapper(f, target), False)


def _wrap_loss_outputs(module: Any, scaler: LossScaler, kind: str) -> None:
    for name in list_loss_output_functions(kind):
        home, attr = _home(module, name)
        f = getattr(home, attr, None)
        if f is None:
            continue
        if module is ndarray:
            def run(*args: Any, _f: Callable = f, **kwargs: Any) -> Any:
                kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
                return _f(*args, **kwargs)
        else:
            def run(*args: Any, _f: Callable = f, **kwargs: Any) -> Any:
                logging.warning("%s does not support dynamic loss scaling in symbolic and hybridized execution.",
                                getattr(_f, "__name__", "loss output"))
                return _f(*args, **kwargs)
        _remember(home, attr)
        setattr(home, attr, _named_like(run, f))


def init(target_dtype: Any = "float16", target_precision_ops: list[str] | None = None,
         conditional_fp32_ops: list[tuple[str, str, list[str]]] | None = None,
         fp32_ops: list[str] | None = None) -> None:
    """Turn AMP on (once per process; later calls do nothing, as MXNet's): patch the operator
    functions of ``mx.nd`` and ``mx.sym`` per the lists (or the given overrides). Call it before
    building the model. ``target_dtype='bfloat16'`` is refused (numpy has no bfloat16)."""
    if _state["initialized"]:
        return
    kind = _kind(target_dtype)
    if kind == "bfloat16":
        raise TypeError(_BF16_REFUSED)
    logging.info("Using AMP")
    target = np.dtype(np.float16)
    scaler = LossScaler()
    try:
        _wrap_module(symbol, target, kind, target_precision_ops, conditional_fp32_ops, fp32_ops)
        _wrap_module(ndarray, target, kind, target_precision_ops, conditional_fp32_ops, fp32_ops)
        _wrap_loss_outputs(ndarray, scaler, kind)
        _wrap_loss_outputs(symbol, scaler, kind)
    except BaseException:
        _restore()  # an unknown operator in a list: leave the namespaces as they were
        raise
    _state.update(initialized=True, scaler=scaler)


# -- dynamic loss scaling --------------------------------------------------------------------------
def _check_trainer(optimizer_or_trainer: Any, what: str) -> None:
    if isinstance(optimizer_or_trainer, Trainer):
        return
    if isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError(f"amp.{what}: AMP is currently only compatible with Gluon Trainer")
    raise TypeError(f"amp.{what}: optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                    f"instead is {type(optimizer_or_trainer)}")


def init_trainer(optimizer_or_trainer: Any) -> None:
    """Give a Gluon Trainer dynamic loss scaling: its ``step`` then skips the update when a
    gradient overflowed (the first trainer shares the scaler of ``init``, later ones get their own)."""
    if not _state["initialized"]:
        raise AssertionError("AMP not initialized, did you forget to call amp.init()?")
    _check_trainer(optimizer_or_trainer, "init_trainer")
    if not _state["scaler_taken"]:
        _state["scaler_taken"] = True
        scaler = _state["scaler"]
    else:
        scaler = LossScaler()
    optimizer_or_trainer._amp_loss_scaler = scaler
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss: Any, optimizer_or_trainer: Any) -> Iterator[Any]:
    """Yield ``loss`` (or each loss of a list) times the loss scale; the trainer divides the
    gradients by it again when it steps."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise AssertionError("Loss scaler is not initialized, did you forget to call amp.init_trainer()?")
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer: Any) -> None:
    """Divide the gradients by the loss scale now (to read or clip them); the next step then
    applies them unscaled."""
    _check_trainer(optimizer_or_trainer, "unscale")
    for p in optimizer_or_trainer._params:
        if p._grad is None:
            continue
        for g in p.list_grad():
            g[:] *= optimizer_or_trainer._scale
    optimizer_or_trainer._scale = 1.0
