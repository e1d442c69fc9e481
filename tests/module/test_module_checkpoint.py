"""Checkpoints: MXNet's file layout, round trips, atomic writes, optimizer states."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

import plexnet as mx
from module_testlib import mlp

pytestmark = pytest.mark.timeout(120)

MXNET_PY = "/work/mxvenv/bin/python"


def _trained(digits, epochs=2):
    np.random.seed(1)
    mx.random.seed(1)
    mod = mx.mod.Module(mlp())
    train = mx.io.NDArrayIter(digits[0], digits[1], 50, shuffle=True)
    mod.fit(train, num_epoch=epochs, initializer=mx.init.Xavier(), progress=False,
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    return mod


def _files(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


def test_save_checkpoint_layout_and_load(digits, tmp_path):
    mod = _trained(digits)
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert _files(tmp_path) == ["mlp-0003.params", "mlp-0003.states", "mlp-symbol.json"]
    raw = mx.nd.load(prefix + "-0003.params")
    assert sorted(raw) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias", "arg:fc2_weight"]
    graph = json.loads(open(prefix + "-symbol.json").read())
    assert "nodes" in graph and "heads" in graph

    sym, arg, aux = mx.model.load_checkpoint(prefix, 3)
    assert sym.list_arguments() == mod.symbol.list_arguments()
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(arg[k].asnumpy(), v.asnumpy())

    loaded = mx.mod.Module.load(prefix, 3, load_optimizer_states=True)
    val = mx.io.NDArrayIter(digits[2], digits[3], 50)
    loaded.bind(data_shapes=val.provide_data, label_shapes=val.provide_label)
    np.testing.assert_allclose(loaded.predict(val).asnumpy(), mod.predict(val).asnumpy(), rtol=1e-6)
    # optimizer states come back with init_optimizer and training continues from them
    loaded.bind(data_shapes=val.provide_data, label_shapes=val.provide_label, for_training=True,
                force_rebind=True)
    loaded.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    assert loaded._preload_opt_states is None
    assert loaded._updater.get_states() == mod._updater.get_states()


def test_model_save_load_checkpoint_functions(tmp_path):
    sym = mlp()
    arg = {"fc1_weight": mx.nd.ones((32, 64)), "fc1_bias": mx.nd.zeros((32,))}
    aux = {"bn_moving_mean": mx.nd.array([1, 2, 3])}
    prefix = str(tmp_path / "m")
    mx.model.save_checkpoint(prefix, 12, sym, arg, aux)
    assert os.path.exists(prefix + "-0012.params") and os.path.exists(prefix + "-symbol.json")
    s2, a2, x2 = mx.model.load_checkpoint(prefix, 12)
    assert sorted(a2) == ["fc1_bias", "fc1_weight"] and list(x2) == ["bn_moving_mean"]
    np.testing.assert_array_equal(x2["bn_moving_mean"].asnumpy(), [1, 2, 3])
    mx.model.save_checkpoint(prefix, 13, None, arg, {})  # symbol=None: params only
    assert os.path.exists(prefix + "-0013.params")
    mx.nd.save(prefix + "-0014.params", {"bogus:x": mx.nd.zeros((1,))})
    with pytest.raises(ValueError, match="bogus"):
        mx.model.load_checkpoint(prefix, 14)


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    """A failure while writing leaves the previous checkpoint intact and no temp file."""
    sym = mlp()
    prefix = str(tmp_path / "a")
    good = {"fc1_weight": mx.nd.ones((2, 2))}
    mx.model.save_checkpoint(prefix, 1, sym, good, {})
    before_params = open(prefix + "-0001.params", "rb").read()
    before_sym = open(prefix + "-symbol.json").read()

    import plexnet.model as model_mod
    real_fdopen = os.fdopen

    class Exploding:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[: len(data) // 2])  # half written, then the disk is "full"
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_mod.os, "fdopen", lambda fd, mode: Exploding(real_fdopen(fd, mode)))
    with pytest.raises(OSError, match="No space"):
        mx.model.save_checkpoint(prefix, 1, sym, {"fc1_weight": mx.nd.zeros((2, 2))}, {})
    monkeypatch.setattr(model_mod.os, "fdopen", real_fdopen)
    assert open(prefix + "-0001.params", "rb").read() == before_params
    assert open(prefix + "-symbol.json").read() == before_sym
    assert _files(tmp_path) == ["a-0001.params", "a-symbol.json"]  # no temp files left behind

    # and os.replace is what publishes the file
    seen = []
    real_replace = os.replace
    monkeypatch.setattr(model_mod.os, "replace", lambda s, d: (seen.append((s, d)), real_replace(s, d)))
    mx.model.save_checkpoint(prefix, 2, sym, good, {})
    assert [os.path.basename(d) for _, d in seen] == ["a-symbol.json", "a-0002.params"]
    assert all(os.path.dirname(s) == os.path.dirname(d) for s, d in seen)


def test_save_load_params_and_optimizer_states(digits, tmp_path):
    mod = _trained(digits, epochs=1)
    fname = str(tmp_path / "p.params")
    mod.save_params(fname)
    other = mx.mod.Module(mlp())
    other.bind(data_shapes=[("data", (50, 1, 8, 8))], label_shapes=[("softmax_label", (50,))])
    other.init_params(mx.init.Zero())
    other.load_params(fname)
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(other.get_params()[0][k].asnumpy(), v.asnumpy())
    states = str(tmp_path / "o.states")
    mod.save_optimizer_states(states)
    other.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    other.load_optimizer_states(states)
    assert other._updater.get_states() == mod._updater.get_states()


@pytest.mark.skipif(not os.path.exists(MXNET_PY), reason="needs the Apache MXNet 1.9.1 venv")
def test_checkpoint_loads_in_mxnet(digits, tmp_path):
    """The files load in Apache MXNet and give the same predictions there."""
    mod = _trained(digits, epochs=1)
    prefix = str(tmp_path / "x")
    mod.save_checkpoint(prefix, 1)
    x = digits[2][:20]
    np.save(tmp_path / "x.npy", x)
    ours = mod.predict(mx.io.NDArrayIter(x, None, 20)).asnumpy()
    script = f"""
import mxnet as mx, numpy as np
sym, arg, aux = mx.model.load_checkpoint({prefix!r}, 1)
mod = mx.mod.Module(sym, context=mx.cpu())
mod.bind(data_shapes=[('data', (20, 1, 8, 8))], for_training=False)
mod.set_params(arg, aux)
out = mod.predict(mx.io.NDArrayIter(np.load({str(tmp_path / 'x.npy')!r}), None, 20)).asnumpy()
np.save({str(tmp_path / 'mx_out.npy')!r}, out)
"""
    r = subprocess.run([MXNET_PY, "-c", script], capture_output=True, text=True, timeout=100)
    if r.returncode != 0 and "No module named 'mxnet'" in r.stderr:
        pytest.skip("mxnet not importable in the venv")
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = np.load(tmp_path / "mx_out.npy")
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


def test_optimizer_states_through_kvstore(digits, tmp_path):
    """With update_on_kvstore the states live in the kvstore and round-trip through it."""
    np.random.seed(2)
    mx.random.seed(2)
    mod = mx.mod.Module(mlp())
    train = mx.io.NDArrayIter(digits[0], digits[1], 50)
    mod.fit(train, num_epoch=1, kvstore=mx.kv.create("local"), initializer=mx.init.Xavier(), progress=False,
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    assert mod._update_on_kvstore
    prefix = str(tmp_path / "kv")
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    loaded = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    loaded.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    loaded.init_optimizer(kvstore=mx.kv.create("local"),
                          optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    assert loaded._kvstore._updater.get_states() == mod._kvstore._updater.get_states()
