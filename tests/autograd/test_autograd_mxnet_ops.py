"""Every operator family through autograd against MXNet 1.9.1's autograd.

``plugins/ops-basic/tests/fixtures/mxnet_ops.npz`` holds, per case, the inputs, MXNet's
outputs, the head gradients and the input gradients that ``mx.autograd.record()`` +
``mx.autograd.backward`` gave (``make_mxnet_op_fixtures.py``). Here the same calls run
through ``plexnet.nd`` under ``plexnet.autograd.record()``: the tape must replay every
operator's gradient to MXNet's values (tolerances as the ops-basic replay test).
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from plexnet import autograd, nd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NPZ = os.path.join(ROOT, "plugins", "ops-basic", "tests", "fixtures", "mxnet_ops.npz")
if not os.path.exists(NPZ):  # pragma: no cover - the ops-basic sources are not next to this checkout
    pytest.skip("ops-basic's MXNet fixtures are not available", allow_module_level=True)
DATA = np.load(NPZ)
INDEX = [c for c in json.loads(str(DATA["__index__"])) if c["grad"]]
RTOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-5}


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} != MXNet's {want.shape}"
    scale = float(np.max(np.abs(want))) if want.size and want.dtype.kind == "f" else 1.0
    atol = 1e-5 * max(scale, 1.0) if want.dtype.kind == "f" else 0.0
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=RTOL.get(want.dtype.name, 0),
                               atol=atol, err_msg=what)


@pytest.mark.parametrize("case", INDEX, ids=[f"{c['key']}-{c['op']}" for c in INDEX])
def test_autograd_matches_mxnet(case: dict) -> None:
    key, op, kw = case["key"], case["op"], dict(case["kwargs"])
    fn = nd.op_function(op)
    if fn is None:
        pytest.skip(f"operator {op} is not installed")
    arrays = {a: nd.array(DATA[f"{key}/in/{a}"], dtype=DATA[f"{key}/in/{a}"].dtype) for a in case["args"]}
    for a in case["grad"]:
        arrays[a].attach_grad()
    with autograd.record():
        out = fn(*arrays.values(), **kw)
    outs = out if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == case["nout"]
    for i, o in enumerate(outs):
        _close(o.asnumpy(), DATA[f"{key}/out/{i}"], f"{op} {kw}: output {i}")
    heads = [DATA[f"{key}/head/{i}"] for i in range(len(outs))]
    autograd.backward(outs, [nd.array(h, dtype=h.dtype) for h in heads])
    for a in case["grad"]:
        _close(arrays[a].grad.asnumpy(), DATA[f"{key}/grad/{a}"], f"{op} {kw}: gradient of {a!r}")
