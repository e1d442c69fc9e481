"""Binary elementwise SimpleOps: broadcast_* (numpy broadcasting, gradients summed back
to each input's shape) and the equal-shape elemwise_* / _maximum ... family."""
from __future__ import annotations

import numpy as np
import pytest
from tensorref import ALL_REQS, rand, shape_error

from opcheck import check_forward, check_gradient, check_req, make_prop, run_backward, run_forward


def _mod(l, r):  # MXNet: sign of the divisor, x mod 0 = 0
    with np.errstate(all="ignore"):
        return np.where(r == 0, 0.0, l - np.floor(l / r) * r)


# op suffix: (reference, lhs range, rhs range, differentiable)
OPS = {
    "add": (np.add, (-2, 2), (-2, 2), True),
    "sub": (np.subtract, (-2, 2), (-2, 2), True),
    "mul": (np.multiply, (-2, 2), (-2, 2), True),
    "div": (np.divide, (-2, 2), (0.5, 2), True),
    "mod": (_mod, (-4, 4), (0.7, 2), True),
    "power": (np.power, (0.5, 2), (-1.5, 1.5), True),
    "maximum": (np.maximum, (-2, 2), (-2, 2), True),
    "minimum": (np.minimum, (-2, 2), (-2, 2), True),
    "hypot": (np.hypot, (-2, 2), (-2, 2), True),
    "equal": (lambda l, r: (l == r) * 1.0, (-2, 2), (-2, 2), False),
    "not_equal": (lambda l, r: (l != r) * 1.0, (-2, 2), (-2, 2), False),
    "greater": (lambda l, r: (l > r) * 1.0, (-2, 2), (-2, 2), False),
    "greater_equal": (lambda l, r: (l >= r) * 1.0, (-2, 2), (-2, 2), False),
    "lesser": (lambda l, r: (l < r) * 1.0, (-2, 2), (-2, 2), False),
    "lesser_equal": (lambda l, r: (l <= r) * 1.0, (-2, 2), (-2, 2), False),
    "logical_and": (lambda l, r: np.logical_and(l, r) * 1.0, (-2, 2), (-2, 2), False),
    "logical_or": (lambda l, r: np.logical_or(l, r) * 1.0, (-2, 2), (-2, 2), False),
    "logical_xor": (lambda l, r: np.logical_xor(l, r) * 1.0, (-2, 2), (-2, 2), False),
}
ELEMWISE = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul", "div": "elemwise_div"}
ALIASES = {"broadcast_plus": "add", "broadcast_minus": "sub", "_plus": "add", "_Plus": "add", "_add": "add",
           "_minus": "sub", "_sub": "sub", "_Minus": "sub", "_mul": "mul", "_Mul": "mul", "_div": "div",
           "_Div": "div", "_Mod": "mod", "_Power": "power", "_Maximum": "maximum", "_Minimum": "minimum",
           "_Hypot": "hypot", "_grad_add": "add"}

BCAST_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((1,), (2, 2)), ((4, 1), (1, 5)),
                ((3,), (2, 1, 3))]


def bname(op: str) -> str:
    return f"broadcast_{op}"


def ename(op: str) -> str:
    return ELEMWISE.get(op, f"_{op}")


def _inputs(op: str, ls: tuple, rs: tuple, seed: int = 0, ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    _, lr, rr, _ = OPS[op]
    if ties:  # small integers: comparisons see equal values
        rng = np.random.default_rng(seed)
        return rng.integers(-2, 3, ls).astype(np.float64), rng.integers(-2, 3, rs).astype(np.float64)
    return rand(ls, *lr, seed=seed), rand(rs, *rr, seed=seed + 1)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shapes", BCAST_SHAPES, ids=str)
def test_broadcast_forward(op: str, shapes: tuple) -> None:
    l, r = _inputs(op, *shapes, ties=not OPS[op][3])
    check_forward(bname(op), [l, r], {}, OPS[op][0](l, r), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", sorted(o for o in OPS if OPS[o][3]))
@pytest.mark.parametrize("shapes", BCAST_SHAPES[1:5], ids=str)
def test_broadcast_gradient(op: str, shapes: tuple) -> None:
    check_gradient(bname(op), list(_inputs(op, *shapes, seed=3)), {}, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op", sorted(o for o in OPS if not OPS[o][3]))
def test_comparison_gradient_is_zero(op: str) -> None:
    l, r = _inputs(op, (2, 3), (3,), ties=True)
    g = run_backward(bname(op), [l, r], {})
    np.testing.assert_array_equal(g[0], 0)
    np.testing.assert_array_equal(g[1], 0)


@pytest.mark.parametrize("op", sorted(OPS))
def test_broadcast_req(op: str) -> None:
    check_req(bname(op), list(_inputs(op, (2, 3), (2, 1), seed=5)), {}, req=("null", "write", "add"))


@pytest.mark.parametrize("op", sorted(OPS))
def test_elemwise_forward_gradient_req(op: str) -> None:
    name = ename(op)
    l, r = _inputs(op, (2, 3), (2, 3), seed=7)
    check_forward(name, [l, r], {}, OPS[op][0](l, r), rtol=1e-12, atol=1e-12)
    if OPS[op][3]:
        check_gradient(name, [l, r], {}, rtol=1e-5, atol=1e-7)
    done = check_req(name, [l, r], {}, req=ALL_REQS)
    assert "forward:inplace" in done and "backward:inplace" in done


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases(alias: str) -> None:
    op = ALIASES[alias]
    l, r = _inputs(op, (2, 3), (2, 3))
    check_forward(alias, [l, r], {}, OPS[op][0](l, r), rtol=1e-12, atol=1e-12)


def test_comparisons_output_input_dtype() -> None:
    l = np.array([[1, 2, 3]], dtype=np.int32)
    r = np.array([[2], [2]], dtype=np.int32)
    out = run_forward("broadcast_greater", [l, r])[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[0, 0, 1], [0, 0, 1]])
    f = run_forward("broadcast_equal", [l.astype(np.float32), r.astype(np.float32)])[0]
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, [[0, 1, 0], [0, 1, 0]])


def test_mod_mxnet_semantics() -> None:
    l = np.array([5.0, -5.0, 5.0, -5.0, 3.0])
    r = np.array([3.0, 3.0, -3.0, -3.0, 0.0])
    np.testing.assert_array_equal(run_forward("broadcast_mod", [l, r])[0], [2, 1, -1, -2, 0])
    li, ri = l.astype(np.int32), r.astype(np.int32)
    np.testing.assert_array_equal(run_forward("_mod", [li, ri])[0], [2, 1, -1, -2, 0])


def test_integer_division_truncates() -> None:
    l = np.array([7, -7, 6], dtype=np.int32)
    r = np.array([2, 2, 3], dtype=np.int32)
    out = run_forward("broadcast_div", [l, r])[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [3, -3, 2])


def test_maximum_gradient_on_ties_goes_to_lhs() -> None:
    l = np.array([1.0, 2.0, 3.0])
    r = np.array([1.0, 1.0, 4.0])
    g = run_backward("broadcast_maximum", [l, r], {}, out_grads=[np.ones(3)])
    np.testing.assert_array_equal(g[0], [1, 1, 0])
    np.testing.assert_array_equal(g[1], [0, 0, 1])


def test_shape_inference_partial_and_errors() -> None:
    prop = make_prop("broadcast_add")
    assert prop.infer_shape([(2, 1, 4), (3, 1)])[1] == [(2, 3, 4)]
    assert prop.infer_shape([None, (3, 1)])[1] == [None]
    shape_error("broadcast_add", {}, (2, 3), (2, 4), match=("(2, 3)", "(2, 4)"))
    shape_error("broadcast_greater", {}, (5,), (4, 3), match=("(5,)", "(4, 3)"))
    shape_error("elemwise_add", {}, (2, 3), (3,), match=("(2, 3)", "(3,)"))
    shape_error("_maximum", {}, (2, 3), (3, 2), match=("(2, 3)", "(3, 2)"))
    # elemwise ops fill an unknown input from the known one
    assert make_prop("elemwise_mul").infer_shape([None, (4, 5)])[0] == [(4, 5), (4, 5)]
