"""BatchNormWithReLU and SyncBatchNorm against MXNet 1.9.1 (training mode: outputs, moving
statistics, gradients); they run on the registered BatchNorm operator."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from opcheck import run_backward, run_forward

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_contrib_norm.npz"))
N = int(FIX["n"])


@pytest.mark.parametrize("i", range(N), ids=[f"{i}-{FIX[f'{i}/op']}" for i in range(N)])
def test_matches_mxnet(i: int) -> None:
    op, kw = "_contrib_" + str(FIX[f"{i}/op"]), json.loads(str(FIX[f"{i}/kw"]))
    ins = [FIX[f"{i}/in{k}"] for k in range(5)]
    outs = run_forward(op, ins[:3], kw, aux=[ins[3].copy(), ins[4].copy()], is_train=True)
    np.testing.assert_allclose(outs[0], FIX[f"{i}/out"], rtol=1e-4, atol=1e-5)
    aux = [ins[3].copy(), ins[4].copy()]
    g = run_backward(op, ins[:3], kw, out_grads=[FIX[f"{i}/og"]], aux=aux, is_train=True)
    if not np.array_equal(FIX[f"{i}/moving_mean"], ins[3]):
        # recorded after MXNet's backward, which moves them (MXNet 1.9.1's MKL-DNN
        # BatchNormWithReLU leaves them untouched with fix_gamma=True, unlike its BatchNorm;
        # plexnet updates them as BatchNorm does)
        np.testing.assert_allclose(aux[0], FIX[f"{i}/moving_mean"], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(aux[1], FIX[f"{i}/moving_var"], rtol=1e-4, atol=1e-6)
    for k in range(3):
        np.testing.assert_allclose(g[k], FIX[f"{i}/grad{k}"], rtol=1e-3, atol=1e-4, err_msg=f"{op} gradient {k}")


def test_batchnorm_with_relu_is_nonnegative_and_sync_needs_key() -> None:
    import plexnet as mx
    x = mx.nd.array(np.random.default_rng(0).normal(size=(4, 3)))
    args = [mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,)), mx.nd.ones((3,))]
    assert (mx.nd.contrib.BatchNormWithReLU(x, *args).asnumpy() >= 0).all()
    with pytest.raises(mx.operator.ParamError, match=r"_contrib_SyncBatchNorm: required argument 'key'"):
        mx.nd.contrib.SyncBatchNorm(x, *args)
