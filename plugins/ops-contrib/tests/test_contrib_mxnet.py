"""Contrib operators against MXNet 1.9.1's recorded outputs and gradients
(``fixtures/make_mxnet_contrib.py``), plus central-difference gradients."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from opcheck import check_gradient, run_backward, run_forward

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_contrib.npz"))
N = int(FIX["n"])
IDS = [f"{i}-{FIX[f'{i}/op']}" for i in range(N)]


def _case(i: int):
    op = str(FIX[f"{i}/op"])
    kw = json.loads(str(FIX[f"{i}/kw"]))
    ins = [FIX[f"{i}/in{k}"] for k in range(8) if f"{i}/in{k}" in FIX]
    outs = [FIX[f"{i}/out{k}"] for k in range(4) if f"{i}/out{k}" in FIX]
    return "_contrib_" + op, kw, ins, outs


PYTHON_LEVEL = {"boolean_mask"}  # nd.contrib functions (data-dependent shapes), not operators here


@pytest.mark.parametrize("i", [i for i in range(N) if str(FIX[f"{i}/op"]) in PYTHON_LEVEL],
                         ids=[IDS[i] for i in range(N) if str(FIX[f"{i}/op"]) in PYTHON_LEVEL])
def test_python_level_matches_mxnet(i: int) -> None:
    import plexnet as mx
    op, kw, ins, outs = _case(i)
    arrs = [mx.nd.array(x, dtype=x.dtype) for x in ins]
    arrs[0].attach_grad()
    with mx.autograd.record():
        res = getattr(mx.nd.contrib, op[len("_contrib_"):])(*arrs, **kw)
    np.testing.assert_allclose(res.asnumpy(), outs[0], rtol=1e-6)
    res.backward(mx.nd.array(FIX[f"{i}/og0"]))
    np.testing.assert_allclose(arrs[0].grad.asnumpy(), FIX[f"{i}/grad0"], rtol=1e-6)


@pytest.mark.parametrize("i", [i for i in range(N) if str(FIX[f"{i}/op"]) not in PYTHON_LEVEL],
                         ids=[IDS[i] for i in range(N) if str(FIX[f"{i}/op"]) not in PYTHON_LEVEL])
def test_matches_mxnet(i: int) -> None:
    op, kw, ins, outs = _case(i)
    res = run_forward(op, ins, kw)
    for k, want in enumerate(outs):
        assert res[k].shape == want.shape, f"{op} output {k}"
        np.testing.assert_allclose(res[k].astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-5,
                                   err_msg=f"{op} {kw} output {k}")
    if f"{i}/grad0" in FIX:
        g = run_backward(op, ins, kw, out_grads=[FIX[f"{i}/og0"]] + [np.zeros_like(r) for r in res[1:len(outs)]])
        for k in range(len(ins)):
            if f"{i}/grad{k}" in FIX:
                np.testing.assert_allclose(g[k], FIX[f"{i}/grad{k}"], rtol=1e-5, atol=1e-5,
                                           err_msg=f"{op} {kw} gradient of input {k}")


SMOOTH = {"div_sqrt_dim", "quadratic", "AdaptiveAvgPooling2D", "BilinearResize2D", "index_copy", "ROIAlign",
          "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk",
          "interleaved_matmul_encdec_valatt", "PSROIPooling", "RROIAlign", "hawkesll", "DeformablePSROIPooling"}


@pytest.mark.parametrize("i", [i for i in range(N) if str(FIX[f"{i}/op"]) in SMOOTH],
                         ids=[IDS[i] for i in range(N) if str(FIX[f"{i}/op"]) in SMOOTH])
def test_numeric_gradient(i: int) -> None:
    op, kw, ins, _ = _case(i)
    wrt = {"_contrib_index_copy": ["old_tensor", "new_tensor"], "_contrib_ROIAlign": ["data"],
           "_contrib_PSROIPooling": ["data"], "_contrib_RROIAlign": ["data"],
           "_contrib_hawkesll": ["lda", "alpha", "beta"], "_contrib_DeformablePSROIPooling": ["data", "trans"]}.get(op)
    ins = [x if x.dtype.kind == "i" else x.astype(np.float64) for x in ins]
    out_index = [0] if op == "_contrib_hawkesll" else None  # MXNet's gradient: of the log likelihood only
    check_gradient(op, ins, kw, wrt=wrt, out_index=out_index, rtol=1e-4, atol=1e-6)
