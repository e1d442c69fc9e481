"""gluon.model_zoo.vision against MXNet 1.9.1: every network's parameter names and
shapes, outputs of the small networks for fixed weights, pretrained loading."""
from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import PlexnetError
from plexnet.gluon.model_zoo import vision

from .zoo_structure import EXTRA_CASES, signatures, structure
from .zoo_weights import OUTPUT_CASES, input_for, weights_for

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "zoo_params.json")) as _f:
    PARAMS = json.load(_f)
OUTPUTS = np.load(os.path.join(HERE, "fixtures", "zoo_outputs.npz"))
with gzip.open(os.path.join(HERE, "fixtures", "zoo_structure.json.gz"), "rt") as _f:
    STRUCTURE = json.load(_f)
SIGNATURES = STRUCTURE.pop("__signatures__")
EXTRA = STRUCTURE.pop("__extra__")


def _shapes(net, shape):
    net.initialize()
    net.infer_shape(mx.nd.zeros(shape))
    return {k: list(v.shape) for k, v in net._collect_params_with_prefix().items()}


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_parameter_names_and_shapes_as_mxnet(name):
    net = vision.get_model(name)
    shape = (1, 3, 299, 299) if name == "inceptionv3" else (1, 3, 224, 224)
    assert _shapes(net, shape) == PARAMS[name]["structural"]
    assert [k[len(net.prefix):] for k in net.collect_params().keys()] == PARAMS[name]["full"]


def _check_structure(got, ref):
    assert got["params"] == ref["params"]
    assert got["heads"] == ref["heads"]
    assert len(got["nodes"]) == len(ref["nodes"])
    for g, r in zip(got["nodes"], ref["nodes"]):
        assert g[:3] == r[:3], (g, r)
        # plexnet's layers leave some defaulted operator attributes unwritten (Dense's
        # no_bias): every attribute written must be MXNet's value
        assert all(r[3].get(k) == v for k, v in g[3].items()), (g, r)
        if g[0] == "null":
            assert g[3] == r[3], (g, r)


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_built_network_as_mxnet(name):
    # names, declared shapes, initializers, grad_req, dtypes in collect_params() order and
    # the traced graph: what save/load, export, initialize() and hybridize() depend on
    _check_structure(structure(vision.get_model(name), mx), STRUCTURE[name])


@pytest.mark.parametrize("label", sorted(EXTRA_CASES))
def test_other_arguments_and_units_as_mxnet(label):
    _check_structure(structure(EXTRA_CASES[label](vision, mx), mx), EXTRA[label])


def test_public_names_and_signatures_as_mxnet():
    assert signatures(vision, list(SIGNATURES)) == SIGNATURES


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_pretrained_looks_for_mxnets_file(name, tmp_path):
    from plexnet.gluon.model_zoo.model_store import short_hash
    with pytest.raises(PlexnetError, match=rf"{name}-{short_hash(name)}\.params"):
        vision.get_model(name, pretrained=True, root=str(tmp_path))


@pytest.mark.parametrize("name", sorted(OUTPUT_CASES))
def test_outputs_as_mxnet_hybridized(name):
    shape, kwargs = OUTPUT_CASES[name]
    net = vision.get_model(name, **kwargs)
    w = weights_for(_shapes(net, shape))
    for k, p in net._collect_params_with_prefix().items():
        p.set_data(mx.nd.array(w[k]))
    net.hybridize()
    out = net(mx.nd.array(input_for(shape))).asnumpy()
    np.testing.assert_allclose(out, OUTPUTS[name], rtol=1e-3, atol=1e-4)


def test_imperative_equals_hybridized_and_mxnet():
    shape, kwargs = OUTPUT_CASES["resnet18_v1"]
    net = vision.resnet18_v1(**kwargs)
    w = weights_for(_shapes(net, shape))
    for k, p in net._collect_params_with_prefix().items():
        p.set_data(mx.nd.array(w[k]))
    x = mx.nd.array(input_for(shape))
    imp = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), imp, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(imp, OUTPUTS["resnet18_v1"], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name,shape", [
    ("vgg11_bn", (1, 3, 32, 32)), ("alexnet", (1, 3, 67, 67)), ("densenet121", (1, 3, 224, 224)),
    ("inceptionv3", (1, 3, 299, 299)), ("squeezenet1.0", (1, 3, 224, 224)), ("mobilenet1.0", (1, 3, 32, 32)),
])
def test_build_and_shape_other_families(name, shape):
    # shape inference only for the heavy ones: no 224x224 densenet forward in CI
    net = vision.get_model(name, classes=7)
    net.initialize()
    net.hybridize()
    x = mx.nd.zeros(shape)
    if name in ("densenet121", "inceptionv3", "squeezenet1.0"):
        _, out, _ = net(mx.sym.var("data")).infer_shape(data=shape)
        assert tuple(out[0]) == (1, 7)
    else:
        assert net(x).shape == (1, 7)


def test_get_model_unknown_name():
    with pytest.raises(ValueError, match="resnet18_v1"):
        vision.get_model("resnet19_v1")


def test_pretrained_refused_names_the_file(tmp_path):
    with pytest.raises(PlexnetError, match=r"resnet18_v1-a0666292\.params"):
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))


def test_pretrained_loads_local_file(tmp_path):
    src = vision.resnet18_v1(classes=10)
    src.initialize(mx.init.Xavier())
    src(mx.nd.zeros((1, 3, 32, 32)))
    src.save_parameters(str(tmp_path / "resnet18_v1.params"))
    net = vision.get_model("resnet18_v1", pretrained=True, root=str(tmp_path), classes=10)
    x = mx.nd.array(input_for((1, 3, 32, 32)))
    np.testing.assert_allclose(net(x).asnumpy(), src(x).asnumpy(), rtol=1e-5)


def test_pretrained_sha1_mismatch(tmp_path):
    (tmp_path / "alexnet-44335d1f.params").write_bytes(b"not the weights")
    with pytest.raises(PlexnetError, match="SHA-1"):
        vision.alexnet(pretrained=True, root=str(tmp_path))


def test_export_and_import_round_trip(tmp_path):
    shape, kwargs = OUTPUT_CASES["mobilenetv2_0.25"]
    net = vision.get_model("mobilenetv2_0.25", **kwargs)
    w = weights_for(_shapes(net, shape))
    for k, p in net._collect_params_with_prefix().items():
        p.set_data(mx.nd.array(w[k]))
    net.hybridize()
    x = mx.nd.array(input_for(shape))
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "m"))
    back = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ref, OUTPUTS["mobilenetv2_0.25"], rtol=1e-3, atol=1e-4)
