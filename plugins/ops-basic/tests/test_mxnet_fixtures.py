"""Replay MXNet 1.9.1's recorded outputs and input gradients (``fixtures/mxnet_ops.npz``,
written by ``fixtures/make_mxnet_op_fixtures.py``) on plexnet's operators.

Tolerances are MXNet's own defaults for float32 in ``test_utils.assert_almost_equal``
(rtol 1e-4; atol tightened from 1e-3 to 1e-5, relative to the value scale).
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from opcheck import make_prop, run_backward, run_forward

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = np.load(os.path.join(HERE, "fixtures", "mxnet_ops.npz"))
INDEX = json.loads(str(DATA["__index__"]))
RTOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-5}


def _tol(a: np.ndarray) -> tuple[float, float]:
    rtol = RTOL.get(a.dtype.name, 0.0)
    scale = float(np.max(np.abs(a))) if a.size and a.dtype.kind == "f" else 1.0
    return rtol, (1e-5 * max(scale, 1.0) if a.dtype.kind == "f" else 0.0)


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} != MXNet's {want.shape}"
    rtol, atol = _tol(want)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                               err_msg=what)


@pytest.mark.parametrize("case", INDEX, ids=[f"{c['key']}-{c['op']}" for c in INDEX])
def test_replays_mxnet_reference(case: dict) -> None:
    key, op, kw = case["key"], case["op"], case["kwargs"]
    prop = make_prop(op, kw)
    aux_names = prop.list_auxiliary_states()
    inputs = {a: DATA[f"{key}/in/{a}"] for a in case["args"] if a not in aux_names}
    aux = [DATA[f"{key}/in/{a}"].copy() for a in aux_names] if aux_names else None
    nvis = prop.num_visible_outputs()
    assert nvis == case["nout"], f"{op}: {nvis} visible outputs, MXNet gives {case['nout']}"
    # fused optimizer updates write their states in place (MXNet's FMutateInputs)
    outs = run_forward(op, inputs, kw, aux, check_inputs=not hasattr(prop, "mutate_inputs"))
    for i in range(nvis):
        _close(outs[i], DATA[f"{key}/out/{i}"], f"{op} {kw}: output {i}")
    if case["grad"]:
        heads = [DATA[f"{key}/head/{i}"] for i in range(nvis)]
        grads = run_backward(op, inputs, kw, heads, fwd=outs)
        names = prop.list_arguments()
        for a in case["grad"]:
            _close(grads[names.index(a)], DATA[f"{key}/grad/{a}"], f"{op} {kw}: gradient of {a!r}")


@pytest.mark.parametrize("case", [c for c in INDEX if "signature" in c],
                         ids=[f"{c['key']}-{c['op']}" for c in INDEX if "signature" in c])
def test_parameters_in_mxnet_order(case: dict) -> None:
    """MXNet's generated ``nd.<op>`` takes positional parameters in declaration order:
    ours declare the same names in the same order (what MXNet names and we do not are
    array inputs)."""
    prop = make_prop(case["op"], case["kwargs"])
    ours = list(prop.param_cls._fields) if prop.param_cls is not None else []
    arrays = set(prop.list_arguments()) | set(prop.list_auxiliary_states())
    theirs = [p for p in case["signature"] if p not in arrays and not p.startswith("arg")]
    assert [p for p in theirs if p in ours] == [p for p in ours if p in theirs], (theirs, ours)
