"""Module: bind / init / fit / score / predict, parameters, optimizer and kvstore rules."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

import plexnet as mx
from module_testlib import mlp

pytestmark = pytest.mark.timeout(120)


def _iters(digits, batch_size=50, shuffle=True):
    tx, ty, vx, vy = digits
    return (mx.io.NDArrayIter(tx, ty, batch_size, shuffle=shuffle),
            mx.io.NDArrayIter(vx, vy, batch_size))


def _fit(mod, digits, epochs=4, **kw):
    train, val = _iters(digits)
    kw.setdefault("optimizer_params", {"learning_rate": 0.1, "momentum": 0.9})
    mod.fit(train, eval_data=val, num_epoch=epochs, initializer=mx.init.Xavier(), progress=False, **kw)
    return train, val


def test_fit_score_predict(digits, seeded, caplog):
    mod = mx.mod.Module(mlp(), context=mx.cpu())
    with caplog.at_level(logging.INFO):
        train, val = _fit(mod, digits, epochs=5)
    text = caplog.text
    assert "Epoch[0] Train-accuracy=" in text and "Epoch[4] Time cost=" in text
    assert "Epoch[4] Validation-accuracy=" in text
    # MXNet's INFO lines only; the throughput line is DEBUG
    assert "Speed=" not in text
    assert mod.last_fit_stats["samples_per_sec"] > 0
    res = dict(mod.score(val, "acc"))
    assert res["accuracy"] > 0.9
    # predict drops the padding of the last batch and merges batches
    vy = digits[3]
    prob = mod.predict(val)
    assert prob.shape == (len(vy), 10)
    np.testing.assert_allclose(prob.asnumpy().sum(axis=1), 1.0, rtol=1e-5)
    acc = (prob.asnumpy().argmax(1) == vy).mean()
    assert acc > 0.9
    # iter_predict yields unpadded outputs per batch
    n = 0
    for outs, nbatch, batch in mod.iter_predict(val):
        assert outs[0].shape[0] == batch.data[0].shape[0] - batch.pad
        n += outs[0].shape[0]
    assert n == len(vy)
    # unmerged output, numpy input, list output
    per_batch = mod.predict(val, merge_batches=False)
    assert len(per_batch) == math.ceil(len(vy) / 50) and isinstance(per_batch[0], list)
    assert mod.predict(val, always_output_list=True)[0].shape == (len(vy), 10)
    stats = mod.last_fit_stats
    assert len(stats["epochs"]) == 5 and stats["samples"] == 5 * len(digits[1])
    assert stats["samples_per_sec"] > 0


def test_predict_other_batch_size_reshapes(digits, seeded):
    mod = mx.mod.Module(mlp(), context=mx.cpu())
    _fit(mod, digits, epochs=1)
    vx = digits[2]
    full = mod.predict(mx.io.NDArrayIter(vx, None, 50)).asnumpy()
    small = mod.predict(mx.io.NDArrayIter(vx, None, 7)).asnumpy()
    np.testing.assert_allclose(full, small, rtol=1e-5, atol=1e-6)
    one = mod.predict(vx[:3])  # numpy input: one forward
    np.testing.assert_allclose(one.asnumpy(), full[:3], rtol=1e-5, atol=1e-6)


def test_bind_variants_and_errors():
    net = mlp()
    mod = mx.mod.Module(net)
    with pytest.raises(ValueError, match="data_names"):
        mx.mod.Module(net, data_names=("x",))
    with pytest.warns(UserWarning):
        mx.mod.Module(net, label_names=("lbl",))
    with pytest.raises(ValueError, match="don't match"):
        mod.bind(data_shapes=[("wrong", (4, 1, 8, 8))])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (4, 1, 8, 8))], label_shapes=[("softmax_label", (4,))])
    assert mod.binded and mod.data_shapes[0].shape == (4, 1, 8, 8)
    assert mod.output_shapes == [("softmax_output", (4, 10))]
    with pytest.raises(RuntimeError, match="init_params"):
        mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 1, 8, 8))]))
    mod.init_params(mx.init.Xavier())
    arg, aux = mod.get_params()
    assert sorted(arg) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"] and aux == {}
    assert np.all(arg["fc1_bias"].asnumpy() == 0) and np.abs(arg["fc1_weight"].asnumpy()).sum() > 0
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params()
    with pytest.raises(ValueError, match="num_epoch"):
        mod.fit(mx.io.NDArrayIter(np.zeros((4, 1, 8, 8)), np.zeros(4), 4))


@pytest.mark.filterwarnings("ignore:Data provided by label_shapes")
def test_inference_only_and_input_grads(seeded):
    net = mlp()
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[("data", (5, 1, 8, 8))], for_training=False)
    mod.init_params(mx.init.Xavier())
    mod.forward(mx.io.DataBatch([mx.nd.ones((5, 1, 8, 8))]), is_train=False)
    assert mod.get_outputs()[0].shape == (5, 10)
    with pytest.raises(RuntimeError):
        mod.backward()

    mod2 = mx.mod.Module(net)
    mod2.bind(data_shapes=[("data", (5, 1, 8, 8))], label_shapes=[("softmax_label", (5,))],
              inputs_need_grad=True)
    mod2.init_params(mx.init.Xavier())
    batch = mx.io.DataBatch([mx.nd.ones((5, 1, 8, 8))], [mx.nd.array([1, 2, 3, 4, 5])])
    mod2.forward_backward(batch)
    g = mod2.get_input_grads()[0]
    assert g.shape == (5, 1, 8, 8) and np.abs(g.asnumpy()).sum() > 0


@pytest.mark.filterwarnings("ignore:Data provided by label_shapes")
def test_init_params_from_arrays(seeded):
    net = mlp()
    src = mx.mod.Module(net)
    src.bind(data_shapes=[("data", (2, 1, 8, 8))])
    src.init_params(mx.init.Xavier())
    arg, aux = src.get_params()
    dst = mx.mod.Module(net)
    dst.bind(data_shapes=[("data", (2, 1, 8, 8))])
    partial = {k: v for k, v in arg.items() if k != "fc2_bias"}
    with pytest.raises(RuntimeError, match="fc2_bias"):
        dst.init_params(arg_params=partial)
    dst.init_params(mx.init.One(), arg_params=partial, allow_missing=True, force_init=True)
    a2, _ = dst.get_params()
    np.testing.assert_array_equal(a2["fc1_weight"].asnumpy(), arg["fc1_weight"].asnumpy())
    np.testing.assert_array_equal(a2["fc2_bias"].asnumpy(), np.zeros(10))  # bias rule of One
    wrong = dict(arg, fc1_weight=mx.nd.zeros((3, 3)))
    with pytest.raises(ValueError, match="fc1_weight"):
        dst.set_params(wrong, aux)
    dst.set_params(arg, aux)
    x = mx.io.DataBatch([mx.nd.ones((2, 1, 8, 8))])
    src.forward(x, is_train=False)
    dst.forward(x, is_train=False)
    np.testing.assert_allclose(src.get_outputs()[0].asnumpy(), dst.get_outputs()[0].asnumpy(), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_fixed_params_stay_fixed(digits, seeded):
    mod = mx.mod.Module(mlp(), fixed_param_names=["fc1_weight"])
    mod.bind(data_shapes=[("data", (50, 1, 8, 8))], label_shapes=[("softmax_label", (50,))])
    mod.init_params(mx.init.Xavier())
    before = mod.get_params()[0]["fc1_weight"].asnumpy().copy()
    b_before = mod.get_params()[0]["fc2_weight"].asnumpy().copy()
    _fit(mod, digits, epochs=1)
    after = mod.get_params()[0]
    np.testing.assert_array_equal(after["fc1_weight"].asnumpy(), before)
    assert not np.array_equal(after["fc2_weight"].asnumpy(), b_before)


def test_kvstore_rules(monkeypatch):
    from plexnet.model import _create_kvstore
    params = {"w": mx.nd.zeros((4, 4))}
    assert _create_kvstore(None, 1, params) == (None, False)
    assert _create_kvstore("local", 1, params) == (None, False)  # one device: no kvstore
    kv, upd = _create_kvstore("local", 2, params)
    assert kv.type == "local" and upd is True
    kv_obj = mx.kv.create("local")
    kv, upd = _create_kvstore(kv_obj, 1, params)
    assert kv is kv_obj and upd is True
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    assert _create_kvstore("local", 2, params)[1] is False
    monkeypatch.delenv("MXNET_UPDATE_ON_KVSTORE")
    big = {"w": mx.nd.zeros((4097, 4097))}
    assert _create_kvstore("local", 2, big)[1] is False
    with pytest.raises(TypeError):
        _create_kvstore(3, 1, params)


@pytest.mark.parametrize("kvstore", ["local", "kvobject", None])
def test_fit_with_kvstore_choices(digits, seeded, kvstore):
    kv = mx.kv.create("local") if kvstore == "kvobject" else kvstore
    mod = mx.mod.Module(mlp())
    _fit(mod, digits, epochs=2, kvstore=kv)
    if kvstore == "kvobject":
        assert mod._kvstore is kv and mod._update_on_kvstore
    else:
        assert mod._kvstore is None and mod._updater is not None
    assert dict(mod.score(_iters(digits)[1], "acc"))["accuracy"] > 0.8


def test_data_parallel_two_devices_matches_one(digits):
    """cpu(0) + cpu(1) with the 'local' kvstore computes what one device computes."""
    tx, ty = digits[0][:200], digits[1][:200]
    results = []
    for ctxs in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        np.random.seed(3)
        mx.random.seed(3)
        mod = mx.mod.Module(mlp(), context=ctxs)
        it = mx.io.NDArrayIter(tx, ty, 40, shuffle=False)
        mod.fit(it, num_epoch=2, initializer=mx.init.Xavier(), progress=False,
                optimizer_params={"learning_rate": 0.1})
        results.append({k: v.asnumpy() for k, v in mod.get_params()[0].items()})
    assert mod._kvstore is not None and mod._kvstore.type == "local"
    for k in results[0]:
        np.testing.assert_allclose(results[0][k], results[1][k], rtol=1e-4, atol=1e-5)


def test_optimizer_object_and_errors(digits, seeded):
    mod = mx.mod.Module(mlp())
    mod.bind(data_shapes=[("data", (50, 1, 8, 8))], label_shapes=[("softmax_label", (50,))])
    with pytest.raises(RuntimeError, match="init_params"):
        mod.init_optimizer()
    mod.init_params(mx.init.Xavier())
    opt = mx.optimizer.create("sgd", learning_rate=0.1)
    with pytest.warns(UserWarning, match="rescale_grad"):
        mod.init_optimizer(optimizer=opt)
    assert mod._optimizer is opt
    with pytest.raises(TypeError):
        mod.init_optimizer(optimizer=42, force_init=True)


def test_callbacks(digits, seeded, caplog, tmp_path):
    calls = {"batch": 0, "epoch": []}

    def on_batch(param):
        calls["batch"] += 1
        assert param.eval_metric is not None and param.locals is not None

    def on_epoch(epoch, sym, arg, aux):
        calls["epoch"].append(epoch)
        assert "fc1_weight" in arg

    mod = mx.mod.Module(mlp())
    prefix = str(tmp_path / "cb")
    with caplog.at_level(logging.INFO):
        _fit(mod, digits, epochs=2,
             batch_end_callback=[on_batch, mx.callback.Speedometer(50, 5), mx.callback.log_train_metric(10)],
             epoch_end_callback=[on_epoch, mx.callback.do_checkpoint(prefix, period=2),
                                 mx.callback.module_checkpoint(mod, prefix + "-mod")])
    n_batches = math.ceil(len(digits[1]) / 50)
    assert calls["batch"] == 2 * n_batches and calls["epoch"] == [0, 1]
    assert "Speed:" in caplog.text and "samples/sec" in caplog.text and "Iter[0] Batch[0] Train-" in caplog.text
    assert (tmp_path / "cb-symbol.json").exists() and (tmp_path / "cb-0002.params").exists()
    assert not (tmp_path / "cb-0001.params").exists()
    assert (tmp_path / "cb-mod-0001.params").exists() and (tmp_path / "cb-mod-0002.params").exists()


def test_progress_bar(digits, seeded, capsys):
    pytest.importorskip("tqdm")
    mod = mx.mod.Module(mlp())
    train, _ = _iters(digits)
    mod.fit(train, num_epoch=1, progress=True, optimizer_params={"learning_rate": 0.1})
    err = capsys.readouterr().err
    assert "Epoch 0" in err and "batch" in err


def test_progress_falls_back_without_tqdm(digits, seeded, monkeypatch, capsys):
    import builtins
    real_import = builtins.__import__

    def no_tqdm(name, *a, **k):
        if name == "tqdm":
            raise ImportError("no tqdm")
        return real_import(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    mod = mx.mod.Module(mlp())
    train, _ = _iters(digits)
    mod.fit(train, num_epoch=1, progress=True, optimizer_params={"learning_rate": 0.1})
    assert "Epoch 0" not in capsys.readouterr().err


def _bn_net():
    data = mx.sym.Variable("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="c1")
    bn = mx.sym.BatchNorm(c, name="bn1")
    f = mx.sym.FullyConnected(mx.sym.Flatten(bn), num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(f, name="softmax")


@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_aux_states_and_shared_module(tmp_path, seeded):
    """BatchNorm's moving statistics are initialised by name (mean 0, var 1), updated
    in training, returned as aux params and checkpointed as ``aux:``; a module bound
    with ``shared_module`` uses the same parameters and optimizer."""
    net = _bn_net()
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[("data", (10, 1, 8, 8))], label_shapes=[("softmax_label", (10,))])
    mod.init_params(mx.init.Xavier())
    _, aux = mod.get_params()
    assert sorted(aux) == ["bn1_moving_mean", "bn1_moving_var"]
    np.testing.assert_array_equal(aux["bn1_moving_mean"].asnumpy(), np.zeros(4))
    np.testing.assert_array_equal(aux["bn1_moving_var"].asnumpy(), np.ones(4))
    x = np.random.rand(40, 1, 8, 8).astype("f") + 1.0
    y = np.random.randint(0, 10, 40).astype("f")
    mod.fit(mx.io.NDArrayIter(x, y, 10), num_epoch=2, progress=False)
    _, aux = mod.get_params()
    assert not np.allclose(aux["bn1_moving_mean"].asnumpy(), 0)

    prefix = str(tmp_path / "bn")
    mod.save_checkpoint(prefix, 2)
    keys = sorted(mx.nd.load(prefix + "-0002.params"))
    assert "aux:bn1_moving_mean" in keys and "aux:bn1_moving_var" in keys and "arg:c1_weight" in keys

    m2 = mx.mod.Module(net)
    m2.bind(data_shapes=[("data", (5, 1, 8, 8))], label_shapes=[("softmax_label", (5,))], shared_module=mod)
    assert m2.params_initialized and m2.optimizer_initialized
    m2.forward(mx.io.DataBatch([mx.nd.array(x[:5])], [mx.nd.array(y[:5])]), is_train=False)
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:10])], [mx.nd.array(y[:10])]), is_train=False)
    np.testing.assert_allclose(m2.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy()[:5], rtol=1e-5)
