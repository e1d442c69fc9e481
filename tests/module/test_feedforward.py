"""``mx.model.FeedForward`` (MXNet's legacy API) on numpy data and iterators: fit,
predict (with return_data), score, save/load in MXNet's checkpoint layout, create;
``DataParallelExecutorManager``; the names MXNet's ``mx.model`` re-exports."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _needs_ops():
    if any(n not in registries().operators for n in ("FullyConnected", "SoftmaxOutput", "Activation")):
        pytest.skip("needs plexnet-ops-basic")


def _data(n=200, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 4)).astype("float32")
    y = ((x[:, 0] + x[:, 1]) > 0).astype("float32")
    return x, y


def _net():
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=16, name="fc1"), act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=2, name="fc2"), name="softmax")


def test_feedforward_fit_predict_score_save_load(tmp_path):
    x, y = _data()
    model = mx.model.FeedForward(_net(), ctx=mx.cpu(), num_epoch=8, numpy_batch_size=20, learning_rate=0.5,
                                 initializer=mx.init.Xavier())
    model.fit(x, y, eval_data=(x[:40], y[:40]))
    assert set(model.arg_params) == {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}
    prob = model.predict(x)
    assert prob.shape == (200, 2)
    np.testing.assert_allclose(prob.sum(axis=1), 1, rtol=1e-5)
    acc = model.score(mx.io.NDArrayIter(x, y, 50), "acc")
    assert acc > 0.9
    out, data, label = model.predict(mx.io.NDArrayIter(x[:30], y[:30], 20), return_data=True)
    assert out.shape == (30, 2) and data.shape == (30, 4) and label.shape == (30,)  # the pad is removed
    assert model.predict(x, num_batch=2).shape == (40, 2)
    prefix = str(tmp_path / "ff")
    model.save(prefix)
    assert (tmp_path / "ff-symbol.json").exists() and (tmp_path / "ff-0008.params").exists()
    again = mx.model.FeedForward.load(prefix, 8)
    assert again.begin_epoch == 8
    np.testing.assert_allclose(again.predict(x), prob, rtol=1e-5)
    with pytest.raises(ValueError, match="y must be specified"):
        mx.model.FeedForward(_net(), num_epoch=1).fit(x)
    with pytest.raises(ValueError, match="num_epoch"):
        mx.model.FeedForward(_net()).fit(x, y)
    with pytest.raises(RuntimeError, match="no parameters"):
        mx.model.FeedForward(_net()).predict(x)


def test_feedforward_create_with_epoch_size():
    x, y = _data(seed=1)
    model = mx.model.FeedForward.create(_net(), mx.io.NDArrayIter(x, y, 25, shuffle=True), num_epoch=6,
                                        epoch_size=4, learning_rate=0.5, initializer=mx.init.Xavier())
    assert model.score(mx.io.NDArrayIter(x, y, 25), "acc") > 0.85


def test_executor_manager_and_reexports():
    x, y = _data(40)
    it = mx.io.NDArrayIter(x, y, 20)
    net = _net()
    args = net.list_arguments()
    params = [a for a in args if a not in ("data", "softmax_label")]
    mgr = mx.model.DataParallelExecutorManager(net, [mx.cpu(0), mx.cpu(1)], it, args, params,
                                               net.list_auxiliary_states())
    arg_params = {n: mx.nd.ones(s) * 0.1 for n, s in zip(args, net.infer_shape(data=(20, 4))[0])
                  if n in params}
    mgr.set_params(arg_params, {})
    assert len(mgr.param_arrays) == len(params) and len(mgr.param_arrays[0]) == 2
    batch = next(iter(it))
    mgr.load_data_batch(batch)
    mgr.forward(is_train=True)
    mgr.backward()
    metric = mx.metric.create("acc")
    mgr.update_metric(metric, batch.label)
    assert metric.num_inst == 20
    assert all(g[0] is not None for g in mgr.grad_arrays)
    out = {k: mx.nd.zeros(v.shape) for k, v in arg_params.items()}
    mgr.copy_to(out, {})
    np.testing.assert_allclose(out["fc1_weight"].asnumpy(), 0.1, rtol=1e-6)
    assert mx.model.mx_real_t is np.float32 and mx.model.cpu() == mx.cpu()
    assert mx.model.Uniform is mx.init.Uniform and mx.model.get_updater is mx.optimizer.get_updater
    assert isinstance(mx.model.SKLEARN_INSTALLED, bool) and mx.model.DataDesc is mx.io.DataDesc
    with pytest.raises(AttributeError):
        mx.model.NoSuchThing  # noqa: B018
