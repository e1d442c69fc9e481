"""``Module(group2ctxs=...)`` on host contexts places each ``ctx_group``'s arrays on its
context, one dict for all contexts or one per context; placements are MXNet 1.9.1's."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

pytestmark = pytest.mark.timeout(60)


def _net():
    with mx.AttrScope(ctx_group="dev1"):
        h = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc1")
    with mx.AttrScope(ctx_group="dev2"):
        o = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=2, name="fc2"), name="softmax")
    return o


def _placement(exe):
    return {k: str(v.context) for k, v in sorted(exe.arg_dict.items())}


def test_one_dict_for_every_context_trains():
    mod = mx.mod.Module(_net(), context=mx.cpu(0), group2ctxs={"dev1": mx.cpu(1), "dev2": mx.cpu(2)})
    mod.bind([("data", (3, 5))], [("softmax_label", (3,))])
    mod.init_params(mx.init.Xavier(rnd_type="gaussian"))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    # MXNet 1.9.1 places them so
    assert _placement(mod._exec_group.execs[0]) == {
        "data": "cpu(1)", "fc1_bias": "cpu(1)", "fc1_weight": "cpu(1)", "fc2_bias": "cpu(2)", "fc2_weight": "cpu(2)",
        "softmax_label": "cpu(2)"}
    ref = mx.mod.Module(_net(), context=mx.cpu(0))
    ref.bind([("data", (3, 5))], [("softmax_label", (3,))])
    ref.init_params(arg_params=mod.get_params()[0], aux_params=mod.get_params()[1])
    ref.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    b = mx.io.DataBatch([mx.nd.array(np.arange(15).reshape(3, 5) / 10.0)], [mx.nd.array([0, 1, 1])])
    for m in (mod, ref):
        for _ in range(3):
            m.forward(b, is_train=True)
            m.backward()
            m.update()
    for k, v in ref.get_params()[0].items():  # the same training as without groups
        np.testing.assert_allclose(mod.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-5, err_msg=k)


def test_one_dict_per_context():
    mod = mx.mod.Module(_net(), context=[mx.cpu(0), mx.cpu(1)],
                        group2ctxs=[{"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, {"dev1": mx.cpu(3), "dev2": mx.cpu(4)}])
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    got = [_placement(e) for e in mod._exec_group.execs]
    assert got[0]["fc1_weight"] == "cpu(1)" and got[0]["fc2_weight"] == "cpu(2)"
    assert got[1]["fc1_weight"] == "cpu(3)" and got[1]["softmax_label"] == "cpu(4)"
    with pytest.raises(ValueError, match="one dict per context"):
        mx.mod.Module(_net(), context=[mx.cpu(0), mx.cpu(1)], group2ctxs=[{"dev1": mx.cpu(1)}])
