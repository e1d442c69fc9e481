"""Checkpoints (symbol JSON + .params) move between MXNet 1.9.1 and plexnet both ways:
LeNet, a ResNet with BatchNorm and an LSTM (``tests/fixtures/ckpt_nets.py``).
``checkpoints/mxnet_*`` were written by MXNet; ``checkpoints/plexnet_*`` by plexnet and
loaded by MXNet, whose outputs are recorded in ``checkpoints/expected.json``
(``make_mxnet_checkpoint_fixtures.py``)."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)

_FIXDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
_CKPT = os.path.join(_FIXDIR, "checkpoints")
sys.path.insert(0, _FIXDIR)
import ckpt_nets  # noqa: E402

with open(os.path.join(_CKPT, "expected.json")) as _f:
    EXPECTED = json.load(_f)


@pytest.fixture(autouse=True)
def _needs_ops():
    ops = registries().operators
    if any(n not in ops for n in ("Convolution", "BatchNorm", "Pooling", "Embedding", "SliceChannel")):
        pytest.skip("needs plexnet-ops-basic")


@pytest.mark.parametrize("name", list(ckpt_nets.NETS))
def test_mxnet_checkpoint_loads_and_gives_mxnets_outputs(name):
    sym, args, aux = mx.model.load_checkpoint(os.path.join(_CKPT, f"mxnet_{name}"), 0)
    out = ckpt_nets.forward(mx, sym, {k: v.asnumpy() for k, v in args.items()},
                            {k: v.asnumpy() for k, v in aux.items()}, name)
    np.testing.assert_allclose(out.ravel(), EXPECTED["mxnet_written"][name], rtol=1e-4, atol=1e-6)
    # Module.load reads the same files
    mod = mx.mod.Module.load(os.path.join(_CKPT, f"mxnet_{name}"), 0, label_names=["softmax_label"])
    assert set(mod._arg_params) == set(args)


@pytest.mark.parametrize("name", list(ckpt_nets.NETS))
def test_plexnet_checkpoint_loads_in_mxnet(name, tmp_path):
    """MXNet's outputs on plexnet's files equal plexnet's own, and plexnet still writes
    those files the same way (so MXNet's recorded reading applies)."""
    prefix = os.path.join(_CKPT, f"plexnet_{name}")
    sym, args, aux = mx.model.load_checkpoint(prefix, 0)
    out = ckpt_nets.forward(mx, sym, {k: v.asnumpy() for k, v in args.items()},
                            {k: v.asnumpy() for k, v in aux.items()}, name)
    np.testing.assert_allclose(out.ravel(), EXPECTED["plexnet_written"][name], rtol=1e-4, atol=1e-6)
    # automatic names (_plus2 ...) as in the fresh process that wrote the files, building them in NETS order
    with mx.name.NameManager():
        for n, build in ckpt_nets.NETS.items():
            fresh = build(mx)
            if n == name:
                break
    a, x = ckpt_nets.random_params(mx, fresh, name, seed=7)
    mx.model.save_checkpoint(str(tmp_path / "again"), 0, fresh, {k: mx.nd.array(v) for k, v in a.items()},
                             {k: mx.nd.array(v) for k, v in x.items()})
    with open(prefix + "-symbol.json") as f1, open(str(tmp_path / "again-symbol.json")) as f2:
        assert json.load(f1) == json.load(f2)
    _, a2, x2 = mx.model.load_checkpoint(str(tmp_path / "again"), 0)
    for k in args:
        np.testing.assert_array_equal(a2[k].asnumpy(), args[k].asnumpy())
