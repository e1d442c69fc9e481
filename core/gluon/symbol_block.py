"""``gluon.SymbolBlock``: a block made from a Symbol (an exported model, or a graph
written with ``mx.sym``), run through the cached graph."""
from __future__ import annotations

from typing import Any

from ..base import PlexnetError
from ..ndarray import NDArray
from ..ndarray.ndarray import mx_real_t
from ..symbol import Symbol
from ..symbol import Group as _group
from ..symbol import load as _sym_load
from ..symbol import var as _var
from .block import HybridBlock, _flatten
from .parameter import ParameterDict

__all__ = ["SymbolBlock"]


def _common_prefix(names: list[str]) -> str:
    if not names:
        return ""
    prefix = names[0]
    for n in names:
        i = 0
        while i < min(len(prefix), len(n)) and prefix[i] == n[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """Construct a block from ``outputs`` (Symbol) given its ``inputs`` (variables);
    the other arguments and auxiliary states become parameters."""

    @staticmethod
    def imports(symbol_file: str, input_names: Any, param_file: str | None = None, ctx: Any = None,
                allow_missing: bool = False, ignore_extra: bool = False) -> "SymbolBlock":
        """Load a model written by ``HybridBlock.export`` (here or in MXNet)."""
        sym = _sym_load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [_var(i, dtype=mx_real_t) for i in input_names]
        else:
            inputs = [_var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra, cast_dtype=True,
                                      dtype_source="saved")
        return ret

    def __init__(self, outputs: Any, inputs: Any, params: ParameterDict | None = None) -> None:
        super().__init__(prefix="", params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        out = _group(out)
        input_names = set()
        for i in syms:
            if len(i.get_internals().list_outputs()) != 1:
                raise PlexnetError(f"Input symbols must be variable, but {i.name} is an output of operators")
            input_names.add(i.name)
        for i in out.list_arguments():
            if i not in input_names:
                self.params.get(i, allow_deferred_init=True)
        for i in out.list_auxiliary_states():
            if i not in input_names:
                self.params.get(i, grad_req="null", allow_deferred_init=True)
        # as MXNet 1.9.1: a graph with a row_sparse variable cannot be a SymbolBlock
        for j in out.get_internals():
            if j.attr("__storage_type__") == "1":
                raise AssertionError(f"SymbolBlock doesn't support Parameter '{j.name}' because its storage "
                                     f"type is 'row_sparse'.")
        self._cached_graph = syms, out
        n = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[n:]: val for key, val in self._params.items()}

    def forward(self, x: Any, *args: Any) -> Any:
        if isinstance(x, NDArray):
            return self._call_cached_op(x, *args)
        flat, _fmt = _flatten([x, *args], "input")
        inputs = self._cached_graph[0]
        if len(flat) != len(inputs):
            raise ValueError(f"SymbolBlock takes {len(inputs)} inputs, got {len(flat)}")
        ret = self._cached_graph[1].__deepcopy__()
        ret._compose(**{k.name: v for k, v in zip(inputs, flat)})
        return _regroup_out(ret, self._out_format)

    def _clear_cached_op(self) -> None:
        graph = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = graph

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise PlexnetError("SymbolBlock runs its symbol directly; hybrid_forward is not used")


def _regroup_out(sym: Symbol, fmt: Any) -> Any:
    from .block import _regroup
    outs = [sym[i] for i in range(len(sym.list_outputs()))]
    return _regroup(outs, fmt)[0]
