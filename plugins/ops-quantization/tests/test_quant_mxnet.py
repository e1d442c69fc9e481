"""Quantization operators against MXNet 1.9.1's recorded outputs
(``fixtures/make_mxnet_quant_fixtures.py``): integer outputs and ranges exactly, float
outputs to float32 rounding."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from plexnet.testing.opcheck import make_prop, run_forward

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_quant.npz"))
N = int(FIX["n"])
IDS = [f"{i}-{FIX[f'{i}/op']}" for i in range(N)]


def _case(i: int):
    op = "_contrib_" + str(FIX[f"{i}/op"])
    kw = json.loads(str(FIX[f"{i}/kw"]))
    ins = [FIX[f"{i}/in{k}"] for k in range(12) if f"{i}/in{k}" in FIX]
    outs = [FIX[f"{i}/out{k}"] for k in range(4) if f"{i}/out{k}" in FIX]
    return op, kw, ins, outs


@pytest.mark.parametrize("i", range(N), ids=IDS)
def test_matches_mxnet(i: int) -> None:
    op, kw, ins, outs = _case(i)
    n_args = len(make_prop(op, kw).list_arguments())
    res = run_forward(op, ins[:n_args], kw, aux=ins[n_args:] or None, is_train=False)
    assert len(res) == len(outs)
    for k, want in enumerate(outs):
        got = res[k]
        assert got.shape == want.shape and got.dtype == want.dtype, (op, k, got.shape, got.dtype, want.dtype)
        if want.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {kw} output {k}")
        else:
            rtol = 1e-4 if op == "_contrib_calibrate_entropy" else 2e-6  # KL sums in another order
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-7, err_msg=f"{op} {kw} output {k}")
