"""Every tensor operator is registered (with MXNet's aliases), rejects unknown or bad
arguments with a ParamError naming operator/argument/value (an operator without
parameters ignores keywords, as MXNet 1.9.1), and leaves shapes unknown
(None) rather than failing when inputs are unknown."""
from __future__ import annotations

import pytest
from tensorref import param_error, registry

from opcheck import make_prop

EXPECTED = """
abs sign negative reciprocal square sqrt rsqrt cbrt rcbrt exp expm1 log log1p log2 log10 sin cos tan arcsin
arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees radians floor ceil round rint trunc fix relu sigmoid
softsign erf gamma gammaln _copy identity BlockGrad stop_gradient make_loss zeros_like ones_like
broadcast_add broadcast_plus broadcast_sub broadcast_minus broadcast_mul broadcast_div broadcast_mod
broadcast_power broadcast_maximum broadcast_minimum broadcast_hypot broadcast_equal broadcast_not_equal
broadcast_greater broadcast_greater_equal broadcast_lesser broadcast_lesser_equal broadcast_logical_and
broadcast_logical_or broadcast_logical_xor elemwise_add elemwise_sub elemwise_mul elemwise_div _plus _minus
_mul _div _Plus _Minus _Mul _Div _add _sub _grad_add _mod _power _maximum _minimum _hypot _equal _not_equal
_greater _greater_equal _lesser _lesser_equal _logical_and _logical_or _logical_xor
_plus_scalar _minus_scalar _rminus_scalar _mul_scalar _div_scalar _rdiv_scalar _mod_scalar _rmod_scalar
_power_scalar _rpower_scalar _maximum_scalar _minimum_scalar _hypot_scalar _equal_scalar _not_equal_scalar
_greater_scalar _greater_equal_scalar _lesser_scalar _lesser_equal_scalar _PlusScalar _RMinusScalar clip
smooth_l1 sum sum_axis mean max max_axis min min_axis prod nansum nanprod norm argmax argmin dot batch_dot
Reshape reshape Flatten flatten transpose SwapAxis swapaxes expand_dims squeeze Concat concat stack
SliceChannel split add_n ElementWiseSum slice crop slice_axis take pick one_hot where tile repeat reverse flip
broadcast_to broadcast_axis broadcast_axes broadcast_like Cast cast
""".split()

# minimal required keyword arguments
REQUIRED = {
    "clip": {"a_min": 0, "a_max": 1}, "Reshape": {"shape": (-1,)}, "reshape": {"shape": (-1,)},
    "expand_dims": {"axis": 0}, "Concat": {"num_args": 2}, "concat": {"num_args": 2}, "stack": {"num_args": 2},
    "SliceChannel": {"num_outputs": 2}, "split": {"num_outputs": 2}, "add_n": {"num_args": 2},
    "ElementWiseSum": {"num_args": 2}, "slice": {"begin": (0,), "end": (1,)}, "crop": {"begin": (0,), "end": (1,)},
    "slice_axis": {"axis": 0, "begin": 0, "end": 1}, "one_hot": {"depth": 3}, "tile": {"reps": (2,)},
    "repeat": {"repeats": 2}, "reverse": {"axis": 0}, "flip": {"axis": 0}, "Cast": {"dtype": "float32"},
    "cast": {"dtype": "float32"},
}


def test_all_registered() -> None:
    reg = registry()
    missing = [n for n in EXPECTED if n not in reg]
    assert not missing, missing


@pytest.mark.parametrize("name", EXPECTED)
def test_unknown_argument_is_a_param_error(name: str) -> None:
    kw = dict(REQUIRED.get(name, {}), bogus_arg="7")
    if registry().property_class(name).param_cls is None:
        # as MXNet 1.9.1 (nd.abs(x, bogus_arg='7') runs): an operator without parameters
        # ignores keyword arguments
        make_prop(name, kw)
        return
    param_error(name, kw, "bogus_arg")


@pytest.mark.parametrize("name", EXPECTED)
def test_unknown_input_shapes_stay_unknown(name: str) -> None:
    prop = make_prop(name, REQUIRED.get(name, {}))
    nargs = len(prop.list_arguments())
    ins, outs, aux = prop.infer_shape([None] * nargs)
    assert len(outs) == prop.num_outputs() and all(o is None for o in outs)
    assert aux == []


@pytest.mark.parametrize("name,kw,match", [
    ("clip", {"a_min": "x", "a_max": 1}, ("a_min", "'x'")),
    ("sum", {"axis": "(0, a)"}, ("axis", "(0, a)")),
    ("sum", {"keepdims": "perhaps"}, ("keepdims", "perhaps")),
    ("norm", {"ord": "3"}, ("ord", "3")),
    ("Concat", {"num_args": "x"}, ("num_args", "x")),
    ("take", {"mode": "bad"}, ("mode", "bad")),
    ("one_hot", {"depth": "three"}, ("depth", "three")),
    ("transpose", {"axes": "[1, b]"}, ("axes",)),
    ("_div_scalar", {"scalar": "half"}, ("scalar", "half")),
])
def test_bad_values_are_param_errors(name: str, kw: dict, match: tuple) -> None:
    param_error(name, kw, *match)


@pytest.mark.parametrize("name,kw", [("exp", {"scalar": 1}), ("where", {"axis": 1})])
def test_operators_without_parameters_ignore_keywords(name: str, kw: dict) -> None:
    # MXNet 1.9.1: nd.exp(x, scalar=1) and nd.where(c, x, y, axis=1) run
    make_prop(name, kw)


def test_simple_ops_have_docs_and_gradients() -> None:
    reg = registry()
    for name in EXPECTED:
        cls = reg.property_class(name)
        simple = getattr(cls, "simple", None)
        if simple is not None:
            assert simple.doc, name
            assert simple.gradient is not None, name
