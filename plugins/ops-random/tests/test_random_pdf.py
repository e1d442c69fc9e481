"""The density operators against MXNet 1.9.1's recorded values and gradients
(``fixtures/make_mxnet_random.py``) and against central differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from opcheck import check_gradient, check_req, run_backward, run_forward

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_random.npz"))
N = int(FIX["n"])
IDS = [f"{i}-{str(FIX[f'{i}/op'])[12:]}{'-log' if 'true' in str(FIX[f'{i}/kw']) else ''}" for i in range(N)]


def _case(i: int):
    ins, grads = [], []
    k = 0
    while f"{i}/in{k}" in FIX:
        ins.append(FIX[f"{i}/in{k}"])
        grads.append(FIX[f"{i}/grad{k}"])
        k += 1
    return str(FIX[f"{i}/op"]), json.loads(str(FIX[f"{i}/kw"])), ins, FIX[f"{i}/out"], FIX[f"{i}/og"], grads


@pytest.mark.parametrize("i", range(N), ids=IDS)
def test_pdf_matches_mxnet(i: int) -> None:
    op, kw, ins, out, og, grads = _case(i)
    np.testing.assert_allclose(run_forward(op, ins, kw)[0], out, rtol=1e-5, atol=1e-7)
    g = run_backward(op, ins, kw, out_grads=[og])
    for k, want in enumerate(grads):
        np.testing.assert_allclose(g[k], want, rtol=1e-4, atol=1e-6, err_msg=f"{op} {kw}: gradient of input {k}")


@pytest.mark.parametrize("i", range(N), ids=IDS)
def test_pdf_numeric_gradient(i: int) -> None:
    op, kw, ins, *_ = _case(i)
    discrete = any(d in op for d in ("poisson", "negative_binomial"))
    args = ["sample", "mu", "sigma", "low", "high", "alpha", "beta", "lam", "k", "p"]
    wrt = [a for a in args if not (discrete and a == "sample")]
    if "uniform" in op:
        wrt = ["low", "high"]
    check_gradient(op, ins, kw, wrt=wrt, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("i", [0, 14], ids=[IDS[0], IDS[14]])
def test_pdf_req(i: int) -> None:
    op, kw, ins, *_ = _case(i)
    check_req(op, ins, kw, req=("null", "write", "add"))


def test_pdf_shape_errors_name_operator_and_shapes() -> None:
    import plexnet as mx
    with pytest.raises(mx.base.ShapeError, match=r"_random_pdf_normal: the shape of 'sample'.*sample=\(3, 2\)"):
        mx.nd.random_pdf_normal(mx.nd.ones((3, 2)), mx.nd.ones((2,)), mx.nd.ones((2,)))
    with pytest.raises(mx.base.ShapeError, match=r"_random_pdf_gamma: the parameters must all have the same shape"):
        mx.nd.random_pdf_gamma(mx.nd.ones((2, 2)), mx.nd.ones((2,)), mx.nd.ones((3,)))
