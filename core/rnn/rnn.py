"""Checkpoints of RNN models (``mx.rnn``): parameters saved unpacked (one array per
gate), as MXNet's ``save_rnn_checkpoint`` writes them, and packed again on load."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def rnn_unroll(cell: BaseRNNCell, length: int, inputs: Any = None, begin_state: Any = None,
               input_prefix: str = "", layout: str = "NTC") -> Any:
    """Deprecated: ``cell.unroll(length, inputs, begin_state, layout)``."""
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.", DeprecationWarning, stacklevel=2)
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def _cells(cells: Any) -> list:
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells: Any, prefix: str, epoch: int, symbol: Any, arg_params: dict,
                        aux_params: dict) -> None:
    """``save_checkpoint`` with the cells' weights unpacked per gate."""
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells: Any, prefix: str, epoch: int) -> tuple[Any, dict, dict]:
    """``load_checkpoint`` with the cells' weights packed again."""
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells: Any, prefix: str, period: int = 1) -> Callable[..., None]:
    """An epoch-end callback saving an RNN checkpoint every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
