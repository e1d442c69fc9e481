"""The operators Symbol arithmetic creates, named as MXNet 1.x writes them in symbol JSON
(``a + b`` -> ``elemwise_add`` hinted ``_plus``; ``a + 1`` -> ``_plus_scalar``), and the
registered equivalents used when a plugin registers another name for the same thing."""
from __future__ import annotations

from .node import op_registry

__all__ = ["arith_op_name"]

# key -> (symbol op, hint, scalar op, hint, reflected scalar op, hint) as MXNet 1.x writes them
_ARITH: dict[str, tuple] = {
    "add": ("elemwise_add", "_plus", "_plus_scalar", "_plusscalar", "_plus_scalar", "_plusscalar"),
    "sub": ("elemwise_sub", "_minus", "_minus_scalar", "_minusscalar", "_rminus_scalar", "_rminusscalar"),
    "mul": ("elemwise_mul", "_mul", "_mul_scalar", "_mulscalar", "_mul_scalar", "_mulscalar"),
    "div": ("elemwise_div", "_div", "_div_scalar", "_divscalar", "_rdiv_scalar", "_rdivscalar"),
    "mod": ("_mod", "_mod", "_mod_scalar", "_modscalar", "_rmod_scalar", "_rmodscalar"),
    "pow": ("_power", "_power", "_power_scalar", "_powerscalar", "_rpower_scalar", "_rpower_scalar"),
    "eq": ("_equal", "_equal", "_equal_scalar", "_equal_scalar", "_equal_scalar", "_equal_scalar"),
    "ne": ("_not_equal", "_not_equal", "_not_equal_scalar", "_not_equal_scalar", "_not_equal_scalar",
           "_not_equal_scalar"),
    "gt": ("_greater", "_greater", "_greater_scalar", "_greater_scalar", "_lesser_scalar", "_lesser_scalar"),
    "ge": ("_greater_equal", "_greater_equal", "_greater_equal_scalar", "_greater_equal_scalar",
           "_lesser_equal_scalar", "_lesser_equal_scalar"),
    "lt": ("_lesser", "_lesser", "_lesser_scalar", "_lesser_scalar", "_greater_scalar", "_greater_scalar"),
    "le": ("_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", "_lesser_equal_scalar",
           "_greater_equal_scalar", "_greater_equal_scalar"),
}

#: MXNet's operator name -> other registered names meaning the same (first registered wins)
_ARITH_FALLBACK: dict[str, tuple[str, ...]] = {
    "elemwise_add": ("_plus", "_Plus", "_add", "broadcast_add"),
    "elemwise_sub": ("_minus", "_Minus", "_sub", "broadcast_sub"),
    "elemwise_mul": ("_mul", "_Mul", "broadcast_mul"),
    "elemwise_div": ("_div", "_Div", "broadcast_div"),
    "_mod": ("_Mod", "broadcast_mod"),
    "_power": ("_Power", "broadcast_power"),
    "_equal": ("broadcast_equal",), "_not_equal": ("broadcast_not_equal",),
    "_greater": ("broadcast_greater",), "_greater_equal": ("broadcast_greater_equal",),
    "_lesser": ("broadcast_lesser",), "_lesser_equal": ("broadcast_lesser_equal",),
    "_plus_scalar": ("_PlusScalar",), "_minus_scalar": ("_MinusScalar",), "_rminus_scalar": ("_RMinusScalar",),
    "_mul_scalar": ("_MulScalar",), "_div_scalar": ("_DivScalar",), "_rdiv_scalar": ("_RDivScalar",),
    "_mod_scalar": ("_ModScalar",), "_rmod_scalar": ("_RModScalar",), "_power_scalar": ("_PowerScalar",),
    "_rpower_scalar": ("_RPowerScalar",),
}


def arith_op_name(name: str) -> str:
    """The registered operator to use for MXNet operator ``name`` (itself when
    registered, else a registered equivalent)."""
    reg = op_registry()
    if name in reg:
        return name
    for alt in _ARITH_FALLBACK.get(name, ()):
        if alt in reg:
            return alt
    return name  # let create() report it
