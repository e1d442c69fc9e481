"""AMP's operator lists (MXNet 1.9.1's ``amp.list_*`` functions), apart from ``amp`` so that
the graph conversion (``convert``) and the operator patching (``amp``) both read them
without importing each other.

``lists`` holds MXNet 1.9.1's lists verbatim; each function returns the operators of its
list that the installed plugins register, read when called, so an operator plugin installed
later (or left out) changes the lists as it changes the registry."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import lists

__all__ = ["list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params"]


def _kind(target_dtype: Any) -> str:
    """'float16' or 'bfloat16' for the spellings MXNet accepts; else an AssertionError as MXNet."""
    if isinstance(target_dtype, str) and target_dtype in ("float16", "bfloat16"):
        return target_dtype
    try:
        if np.dtype(target_dtype) == np.float16:
            return "float16"
    except TypeError:
        pass
    raise AssertionError(f"AMP currently supports only float16 or bfloat16 as a target_dtype, got {target_dtype!r}")


def _registered(names: Any) -> list[str]:
    from ...symbol.node import op_registry
    known = set(op_registry().list_operators())
    return [n for n in names if n in known]


def _lists(target_dtype: Any) -> Any:
    return lists.symbol_fp16 if _kind(target_dtype) == "float16" else lists.symbol_bf16


def list_lp16_ops(target_dtype: Any) -> list[str]:
    """Operators AMP runs in ``target_dtype`` (float16 or bfloat16)."""
    m = _lists(target_dtype)
    return _registered(m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS)


def list_fp32_ops(target_dtype: Any) -> list[str]:
    """Operators AMP runs in float32 (overflow-prone in low precision)."""
    return _registered(_lists(target_dtype).FP32_FUNCS)


def list_lp16_fp32_ops(target_dtype: Any) -> list[str]:
    """Operators that run in either precision (AMP leaves their inputs alone)."""
    m = _lists(target_dtype)
    return _registered(m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS)


def list_conditional_fp32_ops(target_dtype: Any) -> list[tuple[str, str, list[str]]]:
    """``(operator, parameter, values)``: the operator runs in float32 when the parameter has one of the values."""
    conds = _lists(target_dtype).CONDITIONAL_FP32_FUNCS
    keep = set(_registered([a for a, _, _ in conds]))
    return [(a, b, list(c)) for a, b, c in conds if a in keep]


def list_widest_type_cast(target_dtype: Any) -> list[str]:
    """Operators whose inputs are cast to the widest type among them."""
    return _registered(_lists(target_dtype).WIDEST_TYPE_CASTS)


def list_loss_output_functions(target_dtype: Any) -> list[str]:
    """Loss output operators whose ``grad_scale`` AMP multiplies by the loss scale."""
    return _registered(_lists(target_dtype).LOSS_OUTPUT_FUNCTIONS)


def list_lp16_use_fp32_params(target_dtype: Any) -> dict[str, list[str]] | None:
    """For bfloat16: operator -> the parameters kept in float32 (``''`` is the data); None for float16."""
    if _kind(target_dtype) == "float16":
        return None
    params = lists.symbol_bf16.BF16_USE_FP32_PARAMS
    keep = set(_registered(list(params)))
    return {k: list(v) for k, v in params.items() if k in keep}
