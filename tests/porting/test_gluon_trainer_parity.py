"""MXNet 1.9.1 gluon.Trainer behaviours found by running MXNet's own test_gluon_trainer.py."""
import pytest

import plexnet as mx
from plexnet import gluon
from plexnet.kvstore import KVStoreBase


def _step(x, trainer):
    with mx.autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)


def test_update_and_allreduce_refused_with_update_on_kvstore():
    x = gluon.Parameter("x", shape=(10,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0})
    _step(x, trainer)
    assert trainer._update_on_kvstore
    with pytest.raises(AssertionError):  # MXNet asserts
        trainer.update(1)
    with pytest.raises(AssertionError):
        trainer.allreduce_grads()


@pytest.mark.parametrize("kv", ["local", "device"])
def test_loading_parameters_resets_an_updating_kvstore(tmp_path, kv):
    fname = str(tmp_path / "p.params")
    params = gluon.ParameterDict()
    x = params.get("x", shape=(10,), lr_mult=1.0)
    params.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1}, kvstore=kv)
    params.save(fname)
    _step(x, trainer)
    assert trainer._kvstore.type == kv
    params.load(fname)
    assert trainer._kvstore is None and trainer._kv_initialized is False
    _step(x, trainer)
    # from the loaded values (0): two devices sum to a gradient of 2 (a stale copy would give -0.4)
    assert (x.data(mx.cpu(0)).asnumpy() == -0.2).all()
    assert (x.data(mx.cpu(1)).asnumpy() == -0.2).all()


def test_update_on_kvstore_with_a_store_without_optimizer_is_refused():
    @KVStoreBase.register
    class NoOptStore(KVStoreBase):
        def __init__(self):
            super().__init__("nooptstore")

        def is_capable(self, capability):
            return False

    x = gluon.Parameter("x", shape=(10,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = gluon.Trainer([x], "sgd", kvstore=mx.kv.create("nooptstore"), update_on_kvstore=True)
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        trainer._init_kvstore()
    KVStoreBase.kv_registry.pop("nooptstore", None)
