"""``gluon.SymbolBlock``: a block made from a Symbol (an exported model, or a graph
written with ``mx.sym``), run through the cached graph."""
from __future__ import annotations

import warnings
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
        arg_names, aux_names = out.list_arguments(), out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, len(arg_names), len(aux_names))
        for i, t in zip(arg_names, arg_types):
            if i not in input_names:
                self.params.get(i, allow_deferred_init=True, dtype=t)
        for i, t in zip(aux_names, aux_types):
            if i not in input_names:
                self.params.get(i, grad_req="null", allow_deferred_init=True, dtype=t)
        # as MXNet 1.9.1: a graph with a row_sparse variable cannot be a SymbolBlock
        for j in out.get_internals():
            if j.attr("__storage_type__") == "1":
                raise AssertionError(f"SymbolBlock doesn't support Parameter '{j.name}' because its storage "
                                     f"type is 'row_sparse'.")
        self._cached_graph = syms, out
        n = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[n:]: val for key, val in self._params.items()}

    def __repr__(self) -> str:
        # MXNet 1.9.1's form: the graph's symbol and its number of inputs -> outputs
        syms, out = self._cached_graph
        return f"{self.__class__.__name__}(\n{out} : {len(syms)} -> {len(out.list_outputs())}\n)"

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


def _infer_param_types(inputs: list[Symbol], out: Symbol, n_arg: int, n_aux: int) -> tuple[list[Any], list[Any]]:
    """Parameter dtypes as MXNet 1.9.1's SymbolBlock gives them: inferred from the input
    variables' dtypes when every input has one (``var('data', dtype='float64')``), else float32."""
    arg_types: Any = None
    aux_types: Any = None
    in_types = {}
    for i in inputs:
        with warnings.catch_warnings():  # an untyped input: MXNet warns "Cannot decide type"
            warnings.simplefilter("ignore")
            t = i.infer_type()[0]
        if not t:
            break
        in_types[i.name] = t[0]
    else:
        try:
            arg_types, _, aux_types = out.infer_type(**in_types)
        except (PlexnetError, ValueError, TypeError):
            arg_types, aux_types = None, None
    if arg_types is None or len(arg_types) != n_arg:
        arg_types = [mx_real_t] * n_arg
    if aux_types is None or len(aux_types) != n_aux:
        aux_types = [mx_real_t] * n_aux
    return list(arg_types), list(aux_types)


def _regroup_out(sym: Symbol, fmt: Any) -> Any:
    from .block import _regroup
    outs = [sym[i] for i in range(len(sym.list_outputs()))]
    return _regroup(outs, fmt)[0]
