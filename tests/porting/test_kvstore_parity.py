"""MXNet 1.9's ``TestStore`` (``mx.kv.create('teststore')``), used by MXNet's test_gluon_trainer."""
import pytest

import plexnet as mx
from plexnet import gluon


def test_teststore_pushpull_and_broadcast():
    kv = mx.kv.create("teststore")
    assert (kv.type, kv.rank, kv.num_workers) == ("teststore", 0, 1)
    a = [mx.nd.ones((2,)) * i for i in (1, 2, 3)]
    kv.pushpull(0, a)  # values as in MXNet 1.9.1
    assert [x.asnumpy().tolist() for x in a] == [[6.0, 6.0]] * 3
    o = mx.nd.zeros((2,))
    kv.pushpull(0, [mx.nd.ones((2,)), mx.nd.ones((2,))], out=o)
    assert o.asnumpy().tolist() == [2.0, 2.0]
    kv.broadcast(0, mx.nd.ones((2,)) * 7, out=a)
    assert [x.asnumpy().tolist() for x in a] == [[7.0, 7.0]] * 3
    assert kv.is_capable("optimizer") is False
    with pytest.raises(ValueError):
        kv.is_capable("bogus")


def test_trainer_with_teststore():
    x = gluon.Parameter("x", shape=(10,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    kv = mx.kv.create("teststore")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0, "momentum": 0.5}, kvstore=kv)
    with mx.autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    assert (x.data(mx.cpu(1)).asnumpy() == -2).all()
    invalid = gluon.Trainer([x], "sgd", kvstore=kv, update_on_kvstore=True)
    with pytest.raises(ValueError):
        invalid._init_kvstore()


def test_teststore_is_capable_is_a_staticmethod():
    # MXNet's test_kvstore_custom calls it on the class
    assert type(mx.kv.create("teststore")).is_capable("optimizer") is False
    assert mx.kv.create("teststore").is_capable("optimizer") is False


def test_optimizer_capability_constant():
    assert mx.kv.KVStore.OPTIMIZER == "optimizer"
    assert mx.kv.create("local").is_capable(mx.kv.KVStore.OPTIMIZER) is True
