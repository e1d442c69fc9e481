"""BucketingModule, SequentialModule, PythonModule and PythonLossModule (MXNet 1.x
semantics): shared parameters across buckets, switch_bucket, default bucket,
checkpoints; chaining with take_labels / auto_wiring; a Python loss."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import plexnet as mx
from plexnet.io import DataBatch, DataDesc
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _needs_ops():
    ops = registries().operators
    if any(n not in ops for n in ("FullyConnected", "SoftmaxOutput", "sum", "Activation")):
        pytest.skip("needs plexnet-ops-basic")


def _sym_gen(key):
    """A net whose input length is the bucket key; its parameters do not depend on it."""
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=8, name="fc_in", flatten=False)  # (b, key, 8)
    h = mx.sym.sum(h, axis=1)                                                    # (b, 8)
    out = mx.sym.FullyConnected(h, num_hidden=3, name="fc_out")
    return mx.sym.SoftmaxOutput(out, name="softmax"), ("data",), ("softmax_label",)


def _batch(key, rng, b=4):
    x = rng.uniform(-1, 1, (b, key, 5)).astype("float32")
    y = (x.sum(axis=(1, 2)) > 0).astype("float32") + (x[:, 0, 0] > 0.5)
    return DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=key,
                     provide_data=[DataDesc("data", (b, key, 5))], provide_label=[DataDesc("softmax_label", (b,))])


def test_bucketing_module_shares_parameters_and_trains(tmp_path):
    rng = np.random.RandomState(0)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=10, context=mx.cpu())
    assert mod.data_names == ["data"] and mod.output_names == ["softmax_output"]
    mod.bind(data_shapes=[("data", (4, 10, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    batches = [_batch(key, rng) for key in (3, 10, 3, 10)]

    def loss():
        metric = mx.metric.create("ce")
        for b in batches:
            mod.forward(b, is_train=False)
            mod.update_metric(metric, b.label)
        return metric.get()[1]

    before = loss()
    for _ in range(20):
        for b in batches:
            mod.forward(b, is_train=True)
            mod.backward()
            mod.update()
            assert mod.data_shapes[0].shape == (4, b.bucket_key, 5)
    assert loss() < 0.8 * before
    assert set(mod._buckets) == {3, 10}
    # the buckets share the very same parameter arrays
    m3, m10 = mod._buckets[3], mod._buckets[10]
    w3 = m3._exec_group.execs[0].arg_dict["fc_in_weight"]
    w10 = m10._exec_group.execs[0].arg_dict["fc_in_weight"]
    assert mx.test_utils.same_array(w3, w10)
    # switch_bucket back to the default and predict
    mod.switch_bucket(10, [("data", (4, 10, 5))], [("softmax_label", (4,))])
    assert mod.symbol.list_arguments()[0] == "data"
    arg, aux = mod.get_params()
    assert set(arg) == {"fc_in_weight", "fc_in_bias", "fc_out_weight", "fc_out_bias"}
    # checkpoints in MXNet's layout
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 3)
    for f in ("bk-0003.params", "bk-3-symbol.json", "bk-10-symbol.json", "bk.buckets"):
        assert (tmp_path / f).exists(), f
    loaded = mx.mod.BucketingModule.load(prefix, 3, sym_gen=_sym_gen, default_bucket_key=10)
    loaded.bind(data_shapes=[("data", (4, 10, 5))], label_shapes=[("softmax_label", (4,))], for_training=False)
    batch = _batch(3, rng)
    mod.forward(batch, is_train=False)
    loaded.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy(), rtol=1e-5)
    with pytest.raises(ValueError):
        mx.mod.BucketingModule(_sym_gen)
    with pytest.raises(ValueError):
        mx.mod.BucketingModule.load(prefix, 3, sym_gen=_sym_gen)


def test_bucketing_module_fit_with_bucket_iterator():
    rng = np.random.RandomState(1)

    class BucketIter(mx.io.DataIter):
        def __init__(self):
            super().__init__(4)
            self.default_bucket_key = 6
            self.provide_data = [DataDesc("data", (4, 6, 5))]
            self.provide_label = [DataDesc("softmax_label", (4,))]
            self._i = 0

        def reset(self):
            self._i = 0

        def next(self):
            if self._i >= 6:
                raise StopIteration
            self._i += 1
            return _batch((2, 6)[self._i % 2], rng)

    it = BucketIter()
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=it.default_bucket_key)
    mod.fit(it, num_epoch=2, optimizer_params={"learning_rate": 0.05}, eval_metric="acc")
    assert set(mod._buckets) == {2, 6}
    score = mod.score(it, "acc")
    assert 0 <= score[0][1] <= 1


def test_sequential_module_take_labels_and_auto_wiring():
    rng = np.random.RandomState(2)
    net1 = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=6, name="fc1"),
                             act_type="relu", name="relu1")
    net2 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("hidden"), num_hidden=3, name="fc2"),
                                name="softmax")
    m1 = mx.mod.Module(net1, data_names=["data"], label_names=None)
    m2 = mx.mod.Module(net2, data_names=["hidden"], label_names=["softmax_label"])
    seq = mx.mod.SequentialModule().add(m1).add(m2, take_labels=True, auto_wiring=True)
    with pytest.raises(ValueError, match="Unknown meta"):
        seq.add(m1, take_label=True)
    assert len(seq._modules) == 2  # refused before being added
    seq.bind(data_shapes=[("data", (8, 4))], label_shapes=[("softmax_label", (8,))])
    assert seq.data_names == ["data"] and seq.output_names == ["softmax_output"]
    assert seq.output_shapes[0][1] == (8, 3) and seq.label_shapes == [("softmax_label", (8,))]
    seq.init_params(mx.init.Xavier())
    seq.init_optimizer(optimizer_params={"learning_rate": 0.5})
    x = rng.uniform(-1, 1, (8, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("float32") * 2
    batch = DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    metric = mx.metric.create("acc")
    first = None
    for _ in range(30):
        seq.forward(batch, is_train=True)
        seq.backward()
        seq.update()
        metric.reset()
        seq.update_metric(metric, batch.label)
        first = first if first is not None else metric.get()[1]
    assert metric.get()[1] >= first and metric.get()[1] > 0.7
    arg, _ = seq.get_params()
    assert {"fc1_weight", "fc2_weight"} <= set(arg)
    # a duplicated parameter name across modules is refused
    dup = mx.mod.SequentialModule().add(mx.mod.Module(net1, data_names=["data"], label_names=None)).add(
        mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=6, name="fc1"), data_names=["x"],
                      label_names=None), auto_wiring=True)
    dup.bind(data_shapes=[("data", (2, 6))], label_shapes=None)
    with pytest.raises(ValueError, match="Duplicated parameter names"):
        dup.init_params()
    with pytest.raises(ValueError, match="empty"):
        mx.mod.SequentialModule().bind([("data", (1, 1))])


def test_python_loss_module_in_a_sequence():
    rng = np.random.RandomState(3)
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc")
    body = mx.mod.Module(net, data_names=["data"], label_names=None)

    def mse_grad(scores, labels):  # d/ds of (s - y)^2 / 2 (Module rescales by 1/batch)
        return scores.asnumpy() - labels.asnumpy().reshape(scores.shape)

    loss = mx.mod.PythonLossModule(data_names=["fc_output"], label_names=["lin_reg_label"], grad_func=mse_grad)
    seq = mx.mod.SequentialModule().add(body).add(loss, take_labels=True, auto_wiring=True)
    seq.bind(data_shapes=[("data", (16, 3))], label_shapes=[("lin_reg_label", (16,))])
    seq.init_params(mx.init.Zero())
    seq.init_optimizer(optimizer_params={"learning_rate": 0.5})
    true_w = np.array([1.0, -2.0, 0.5], dtype="float32")
    for _ in range(100):
        x = rng.uniform(-1, 1, (16, 3)).astype("float32")
        batch = DataBatch([mx.nd.array(x)], [mx.nd.array(x @ true_w)])
        seq.forward(batch, is_train=True)
        seq.backward()
        seq.update()
    np.testing.assert_allclose(seq.get_params()[0]["fc_weight"].asnumpy().ravel(), true_w, atol=0.05)
    assert loss.output_shapes == [("pyloss_output", (16, 1))] and loss.get_params() == ({}, {})
    with pytest.raises(ValueError, match="out_grads"):
        loss.backward(out_grads=[mx.nd.ones((1,))])
    with pytest.raises(NotImplementedError):
        mx.mod.PythonLossModule().install_monitor(None)
    with pytest.raises(ValueError, match="write"):
        mx.mod.PythonLossModule().bind([("data", (1, 1))], grad_req="add")

    class Scale(mx.mod.PythonModule):
        def _compute_output_shapes(self):
            return [("scale_output", self._data_shapes[0][1])]

    s = Scale(["data"], None, ["scale_output"], logger=logging)
    s.bind([("data", (2, 2))])
    assert s.binded and s.output_shapes == [("scale_output", (2, 2))]
