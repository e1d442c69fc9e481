"""Edge semantics (issue 14 point 3) beyond the recorded MXNet cases of
test_mxnet_fixtures.py (which cover integer backward, Dropout p=0, Pooling conventions
with count_include_pad, and take/pick/one_hot index modes): Dropout p=1, zero-size arrays."""
from __future__ import annotations

import numpy as np
import pytest

from opcheck import check_forward, run_backward, run_forward


def test_dropout_p1_drops_everything() -> None:
    # MXNet 1.9.1 gives NaN here (mask 0 * 1/0), and its v1.9.x test_dropout asserts it
    x = np.arange(6.0).reshape(2, 3)
    out = run_forward("Dropout", [x], {"p": 1.0}, is_train=True)
    assert np.isnan(out[0]).all()
    g = run_backward("Dropout", [x], {"p": 1.0}, [np.ones_like(x)], is_train=True)
    assert np.isnan(g[0]).all()
    np.testing.assert_array_equal(run_forward("Dropout", [x], {"p": 1.0}, is_train=False)[0], x)


def test_dropout_p0_is_identity_in_training() -> None:
    x = np.arange(6.0).reshape(2, 3)
    out = run_forward("Dropout", [x], {"p": 0.0, "mode": "always"}, is_train=True)
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(run_backward("Dropout", [x], {"p": 0.0}, [np.full_like(x, 2.0)])[0],
                                  np.full_like(x, 2.0))


Z = np.zeros((0, 3))
ZERO_CASES = [
    ("relu", [Z], {}, (0, 3)),
    ("broadcast_add", [Z, np.ones((1, 3))], {}, (0, 3)),
    ("sum", [Z], {"axis": 0}, (3,)),
    ("sum", [Z], {"axis": 1}, (0,)),
    ("Concat", [Z, np.ones((2, 3))], {"dim": 0, "num_args": 2}, (2, 3)),
    ("dot", [Z, np.ones((3, 2))], {}, (0, 2)),
    ("take", [np.ones((3, 2)), np.zeros((0,))], {}, (0, 2)),
    ("softmax", [Z], {}, (0, 3)),
    ("sort", [Z], {"axis": 0}, (0, 3)),
    ("cumsum", [Z], {"axis": 0}, (0, 3)),
    ("transpose", [Z], {}, (3, 0)),
    ("shape_array", [Z], {}, (2,)),
    ("moments", [np.zeros((0, 3))], {"axes": (1,)}, (0,)),
    ("SequenceMask", [np.zeros((0, 2, 3))], {}, (0, 2, 3)),
]


@pytest.mark.parametrize("name,inputs,kw,shape", ZERO_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(ZERO_CASES)])
def test_zero_size_arrays(name: str, inputs: list, kw: dict, shape: tuple) -> None:
    # MXNet 1.x (legacy shape semantics: 0 means unknown) rejects most of these; plexnet runs them
    outs = run_forward(name, inputs, kw)
    assert outs[0].shape == shape
    if name == "sum" and kw["axis"] == 0:
        np.testing.assert_array_equal(outs[0], np.zeros(3))
    grads = run_backward(name, inputs, kw, [np.ones(o.shape, o.dtype) for o in outs[:outs.prop.num_visible_outputs()]])
    for g, x in zip(grads, inputs):
        assert g.shape == x.shape


def test_sum_of_empty_is_zero() -> None:
    check_forward("sum", [Z], {}, np.zeros((1,)))
