"""mx.optimizer.contrib.GroupAdaGrad (MXNet 1.9.1; missing before, found by porting
test_contrib_optimizer.py). Values checked against MXNet 1.9.1 side by side."""
import itertools

import numpy as np
import pytest

import plexnet as mx


def _reference(w, grads, lr, eps, rescale, clip):
    w, hist = w.copy(), np.zeros((w.shape[0], 1), np.float32)
    for g in grads:
        g = g * rescale
        if clip is not None:
            g = np.clip(g, -clip, clip)
        hist += np.mean(g * g, axis=1, keepdims=True)
        w -= lr * g / np.sqrt(hist + eps)
    return w, hist


@pytest.mark.parametrize("eps,clip,rescale", itertools.product([1e-5, 1e-8], [None, 0.4], [1.0, 0.14]))
def test_group_adagrad_matches_the_formula(eps, clip, rescale):
    rng = np.random.RandomState(0)
    w0 = rng.uniform(-1, 1, (5, 6)).astype(np.float32)
    grads = [rng.uniform(-1, 1, (5, 6)).astype(np.float32) for _ in range(3)]
    kw = {"learning_rate": 0.1, "eps": eps, "rescale_grad": rescale}
    if clip is not None:
        kw["clip_gradient"] = clip
    opt = mx.optimizer.create("groupadagrad", **kw)
    assert isinstance(opt, mx.optimizer.contrib.GroupAdaGrad)
    w = mx.nd.array(w0)
    state = opt.create_state(0, w)
    assert state.shape == (5, 1)
    for g in grads:
        opt.update(0, w, mx.nd.array(g), state)
    ref_w, ref_h = _reference(w0, grads, 0.1, eps, rescale, clip)
    np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), ref_h, rtol=1e-5, atol=1e-6)


def test_group_adagrad_first_step_as_mxnet():
    opt = mx.optimizer.create("groupadagrad", learning_rate=0.1)
    w = mx.nd.ones((3, 4))
    state = opt.create_state(0, w)
    opt.update(0, w, mx.nd.arange(12).reshape((3, 4)), state)
    assert state.asnumpy().ravel().tolist() == [3.5, 31.5, 91.5]
    np.testing.assert_allclose(w.asnumpy()[0], [1.0, 0.94655, 0.8931, 0.83964], atol=1e-5)


def test_group_adagrad_refuses_weight_decay_and_non_2d_weights():
    opt = mx.optimizer.create("groupadagrad", wd=0.1)
    w = mx.nd.ones((2, 2))
    with pytest.raises(AssertionError, match="Weight decay"):
        opt.update(0, w, mx.nd.ones((2, 2)), opt.create_state(0, w))
    with pytest.raises(AssertionError):
        opt.create_state(0, mx.nd.ones((4,)))


def test_group_adagrad_in_a_trainer():
    net = mx.gluon.nn.Dense(3, in_units=4, use_bias=False)
    net.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(net.collect_params(), "groupadagrad", {"learning_rate": 0.5})
    with mx.autograd.record():
        loss = net(mx.nd.ones((2, 4))).sum()
    loss.backward()
    trainer.step(2)
    # grad of every weight is 2 (two rows of ones), rescaled by 1/2 -> 1; history 1; step 0.5/sqrt(1+1e-5)
    np.testing.assert_allclose(net.weight.data().asnumpy(), np.full((3, 4), 1 - 0.5 / np.sqrt(1 + 1e-5)), rtol=1e-6)
