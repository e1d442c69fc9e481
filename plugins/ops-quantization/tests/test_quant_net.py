"""MXNet's own quantization flow, end to end: symbols that MXNet 1.9.1's
``contrib.quantization.quantize_model`` produced (quantize_v2 -> quantized_conv /
fully_connected -> requantize -> quantized_act / pooling -> dequantize), loaded from
MXNet's JSON with MXNet's quantized parameters, run by plexnet's executor and compared
with MXNet's outputs (``fixtures/make_mxnet_quant_fixtures.py``, ``quantized_net``)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import plexnet as mx

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_quant_net.npz"))
CASES = sorted({k.rsplit("/", 1)[0] for k in FIX.files if k.endswith("/json")})


@pytest.mark.parametrize("case", CASES)
def test_mxnet_quantized_graph_runs_as_in_mxnet(case: str) -> None:
    net = case.split("/")[0]
    sym = mx.sym.load_json(str(FIX[f"{case}/json"]))
    ops = {n["op"] for n in json.loads(str(FIX[f"{case}/json"]))["nodes"]}
    assert {"_contrib_quantize_v2", "_contrib_requantize", "_contrib_dequantize",
            "_contrib_quantized_fully_connected"} <= ops
    prefix = f"{case}/arg/"
    args = {k[len(prefix):]: mx.nd.array(FIX[k], dtype=FIX[k].dtype) for k in FIX.files if k.startswith(prefix)}
    args["data"] = mx.nd.array(FIX[f"{net}/data"])
    feed = {n: args[n] for n in sym.list_arguments()}
    out = sym.bind(mx.cpu(), feed, grad_req="null").forward()[0].asnumpy()
    want = FIX[f"{case}/out"]
    # float32 dequantize of int32 values: equal up to the last bits
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    # and the quantized net approximates the float one as MXNet's does
    ref = FIX[f"{case}/float"]
    assert np.abs(out - ref).max() <= 1.5 * np.abs(want - ref).max() + 1e-6
