"""plexnet's Gluon against values recorded from MXNet 1.9.1's Gluon
(``tests/fixtures/make_mxnet_gluon_fixtures.py``): an exported model imports and
gives MXNet's outputs; save_parameters files load; losses and layers compute MXNet's
values and gradients."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from plexnet import autograd, gluon, nd
from plexnet.gluon import nn

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gluon")
EXP = json.load(open(os.path.join(HERE, "expected.json")))
L = gluon.loss


def test_mxnet_exported_model_imports_and_matches() -> None:
    blk = gluon.SymbolBlock.imports(os.path.join(HERE, "mxnet_gluon_net-symbol.json"), ["data"],
                                    os.path.join(HERE, "mxnet_gluon_net-0000.params"))
    x = nd.array(EXP["input"])
    np.testing.assert_allclose(blk(x).asnumpy(), EXP["output"], rtol=1e-4, atol=1e-5)
    assert sorted(blk.collect_params().keys()) == EXP["params"]
    # imperative use of the imported block: gradients flow to its parameters
    with autograd.record():
        y = blk(x).sum()
    y.backward()
    assert any(np.abs(p.grad().asnumpy()).sum() > 0 for p in blk.collect_params().values() if p.grad_req != "null")


def _net() -> nn.HybridSequential:
    n = nn.HybridSequential(prefix="net_")
    with n.name_scope():
        n.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(),
              nn.Conv2D(6, 3, activation="tanh"), nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(8, activation="relu"),
              nn.Dropout(0.3), nn.Dense(3))
    return n


def test_mxnet_save_parameters_file_loads() -> None:
    n = _net()
    assert sorted(nd.load(os.path.join(HERE, "mxnet_gluon_net.params"))) == EXP["structural"]
    n.load_parameters(os.path.join(HERE, "mxnet_gluon_net.params"))
    assert sorted(n.collect_params().keys()) == EXP["params"]
    np.testing.assert_allclose(n(nd.array(EXP["input"])).asnumpy(), EXP["output"], rtol=1e-4, atol=1e-5)
    n.hybridize()
    np.testing.assert_allclose(n(nd.array(EXP["input"])).asnumpy(), EXP["output"], rtol=1e-4, atol=1e-5)


LOSSES = {
    "SoftmaxCrossEntropyLoss": lambda: L.SoftmaxCrossEntropyLoss(),
    "SoftmaxCELoss_dense": lambda: L.SoftmaxCELoss(sparse_label=False),
    "L2Loss": lambda: L.L2Loss(), "L1Loss": lambda: L.L1Loss(),
    "SigmoidBCELoss": lambda: L.SigmoidBCELoss(),
    "SigmoidBCELoss_from_sigmoid": lambda: L.SigmoidBCELoss(from_sigmoid=True),
    "KLDivLoss": lambda: L.KLDivLoss(from_logits=False), "HuberLoss": lambda: L.HuberLoss(rho=0.5),
    "HingeLoss": lambda: L.HingeLoss(), "SquaredHingeLoss": lambda: L.SquaredHingeLoss(),
    "LogisticLoss": lambda: L.LogisticLoss(), "TripletLoss": lambda: L.TripletLoss(),
    "PoissonNLLLoss": lambda: L.PoissonNLLLoss(), "CosineEmbeddingLoss": lambda: L.CosineEmbeddingLoss(),
    "SDMLLoss": lambda: L.SDMLLoss(), "L2Loss_weighted": lambda: L.L2Loss(weight=0.3),
    "CTCLoss": lambda: L.CTCLoss(),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("hybrid", [False, True])
def test_losses_match_mxnet(name: str, hybrid: bool) -> None:
    case = EXP["losses"][name]
    blk = LOSSES[name]()
    if hybrid and name != "SDMLLoss":  # SDMLLoss needs concrete shapes (as in MXNet)
        blk.hybridize()
    p = nd.array(case["pred"])
    p.attach_grad()
    with autograd.record():
        v = blk(p, *[nd.array(e) for e in case["extra"]])
    v.backward()
    np.testing.assert_allclose(v.asnumpy(), case["value"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(p.grad.asnumpy(), case["grad"], rtol=1e-4, atol=1e-5)


LAYERS = {
    "Dense": lambda: nn.Dense(3, in_units=4), "Conv1D": lambda: nn.Conv1D(2, 3, in_channels=2),
    "Conv2DTranspose": lambda: nn.Conv2DTranspose(2, 3, strides=2, in_channels=2),
    "AvgPool2D_ceil": lambda: nn.AvgPool2D(3, 2, ceil_mode=True), "GlobalMaxPool1D": lambda: nn.GlobalMaxPool1D(),
    "LayerNorm": lambda: nn.LayerNorm(in_channels=4), "InstanceNorm": lambda: nn.InstanceNorm(in_channels=2),
    "GroupNorm": lambda: nn.GroupNorm(num_groups=2), "Embedding": lambda: nn.Embedding(5, 3),
    "PReLU": lambda: nn.PReLU(), "ELU": lambda: nn.ELU(0.5), "SELU": lambda: nn.SELU(), "GELU": lambda: nn.GELU(),
    "Swish": lambda: nn.Swish(2.0), "LeakyReLU": lambda: nn.LeakyReLU(0.1),
    "ReflectionPad2D": lambda: nn.ReflectionPad2D(2),
}


#: input gradients where the ops-basic operator's backward differs from MXNet's (the
#: symbolic executor gives the same values as autograd; reported to the ops owner)
OPS_BACKWARD_DIFFERS = {# recorded with MKLDNN, whose backward divides unpadded 2-D border windows by the whole
                        # kernel while its forward and the reference kernels use the clipped window; plexnet
                        # matches the reference kernels (tests/ndarray/test_frontend_parity.py)
                        "AvgPool2D_ceil": "MXNet's MKLDNN avg-pool backward at the border ('full' convention)"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=OPS_BACKWARD_DIFFERS[n], strict=False))
                                  if n in OPS_BACKWARD_DIFFERS else n for n in sorted(LAYERS)])
@pytest.mark.parametrize("hybrid", [False, True])
def test_layers_match_mxnet(name: str, hybrid: bool) -> None:
    case = EXP["layers"][name]
    blk = LAYERS[name]()
    blk.initialize()
    for _k, p in sorted(blk.collect_params().items()):
        v = np.arange(np.prod(p.shape), dtype=np.float32).reshape(p.shape) / 10.0 - 0.3
        p.set_data(nd.array(v))
    if hybrid:
        blk.hybridize()
    x = nd.array(case["input"])
    if case["input_grad"] is not None:
        x.attach_grad()
    with autograd.record():
        y = blk(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), case["output"], rtol=1e-4, atol=1e-5)
    if case["input_grad"] is not None:
        np.testing.assert_allclose(x.grad.asnumpy(), case["input_grad"], rtol=1e-4, atol=1e-5)
    for k, g in case["params"].items():
        np.testing.assert_allclose(blk.collect_params()[blk.prefix + k].grad().asnumpy(), g, rtol=1e-4, atol=1e-5,
                                   err_msg=k)
