"""Optimizer-state files written by MXNet 1.9.1 (pickles) load into plexnet and training
resumes with MXNet's values (fixtures: ``tests/fixtures/mxnet_states/make_mxnet_states.py``);
the restricted unpickler refuses every other global; a Trainer takes a dict's parameters in
sorted name order, as MXNet 1.9.1 (the states' indices depend on it)."""
from __future__ import annotations

import json
import os
import pickle
import runpy
from types import SimpleNamespace

import numpy as np
import pytest

import plexnet as mx
from plexnet.optimizer.mxnet_pickle import load_mxnet_states

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_states")
E = json.load(open(os.path.join(HERE, "expected.json")))


G = SimpleNamespace(**runpy.run_path(os.path.join(HERE, "make_mxnet_states.py")))   # the generator's helpers


def test_trainer_resumes_from_mxnets_states() -> None:
    net = G.gluon_net(mx, np.array(E["trainer_w1"], "f4"), np.array(E["trainer_b1"], "f4"))
    tr = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.5})
    tr.load_states(os.path.join(HERE, "trainer_adam.states"))
    # the pickled Adam replaces the trainer's, with its scheduler and update counts
    assert type(tr._optimizer).__name__ == E["trainer_loaded"]["type"]
    assert tr._optimizer.num_update == E["trainer_loaded"]["num_update"]
    assert tr.learning_rate == pytest.approx(E["trainer_loaded"]["lr"])
    G.gluon_step(mx, net, tr)
    np.testing.assert_allclose(net.weight.data().asnumpy(), E["trainer_w2"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(net.bias.data().asnumpy(), E["trainer_b2"], rtol=1e-6, atol=1e-7)


def test_module_resumes_from_mxnets_states() -> None:
    mod = G.module(mx, {"fc_weight": mx.nd.array(E["module_w1"]), "fc_bias": mx.nd.array(E["module_b1"])})
    mod.load_optimizer_states(os.path.join(HERE, "module_sgd.states"))
    G.module_step(mx, mod)
    params = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    np.testing.assert_allclose(params["fc_weight"], E["module_w2"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(params["fc_bias"], E["module_b2"], rtol=1e-6, atol=1e-7)


def test_plexnet_writes_its_own_format_and_reads_it_back(tmp_path) -> None:
    net = G.gluon_net(mx, np.array(E["w0"], "f4"), np.array(E["b0"], "f4"))
    tr = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    G.gluon_step(mx, net, tr)
    path = str(tmp_path / "t.states")
    tr.save_states(path)
    assert open(path, "rb").read(2) != b"\x80\x04"   # npz, not pickle
    tr2 = mx.gluon.Trainer(net.collect_params(), "adam")
    tr2.load_states(path)
    assert tr2._optimizer.num_update == 1


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


@pytest.mark.parametrize("payload", [
    _Evil(),
    ({0: 1}, _Evil()),
    {0: print},              # a builtin function: pickled as a global
], ids=["os.system", "os.system beside states", "builtin function"])
def test_the_unpickler_refuses_other_globals(payload, tmp_path) -> None:
    data = pickle.dumps(payload, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load"):
        load_mxnet_states(data)
    net = G.gluon_net(mx, np.array(E["w0"], "f4"), np.array(E["b0"], "f4"))
    tr = mx.gluon.Trainer(net.collect_params(), "adam")
    path = tmp_path / "evil.states"
    path.write_bytes(data)
    with pytest.raises(pickle.UnpicklingError):
        tr.load_states(str(path))


def test_a_truncated_mxnet_file_is_a_clear_error() -> None:
    data = open(os.path.join(HERE, "trainer_adam.states"), "rb").read()[:100]
    with pytest.raises(ValueError, match="optimizer states"):
        load_mxnet_states(data)


def test_trainer_orders_a_dicts_parameters_by_name_as_mxnet() -> None:
    net = mx.gluon.nn.Dense(2, in_units=3, prefix="d_")   # collect_params: weight, bias
    net.initialize()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd")
    assert [p.name for p in tr._params] == ["d_bias", "d_weight"]
    tr2 = mx.gluon.Trainer([net.weight, net.bias], "sgd")  # a list keeps its order
    assert [p.name for p in tr2._params] == ["d_weight", "d_bias"]
