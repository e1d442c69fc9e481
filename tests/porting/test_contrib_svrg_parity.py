"""mx.contrib.svrg_optimization (MXNet 1.9.1's SVRGModule; missing before, found by porting
test_contrib_svrg_module/_optimizer.py) and the two MXNet behaviours it relies on."""
import numpy as np

import plexnet as mx
from plexnet.contrib.svrg_optimization.svrg_module import SVRGModule
from plexnet.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def _linreg(n=40, batch=10, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randint(1, 5, [n, 2]).astype(np.float32)
    y = x.dot(np.array([1.0, 2.0], dtype=np.float32))
    di = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name="lin_reg_label")
    fc = mx.sym.FullyConnected(mx.sym.var("data"), name="fc1", num_hidden=1)
    return di, mx.sym.LinearRegressionOutput(fc, mx.sym.var("lin_reg_label"), name="lro")


def test_parameterless_operators_ignore_keyword_arguments():
    a = mx.nd.ones((2, 2))
    assert mx.nd.broadcast_add(a, a, axis=0).asnumpy().tolist() == [[2, 2], [2, 2]]   # MXNet 1.9.1 too
    assert mx.nd.relu(a, foo=1).asnumpy().tolist() == [[1, 1], [1, 1]]


def test_kvstore_private_barrier():
    mx.kv.create("local")._barrier()


def test_svrg_optimizer_assigns_full_gradients():
    opt = _SVRGOptimizer(default_optimizer="sgd", param_idx2name={0: "w", 1: "w_full"}, learning_rate=1.0)
    kv = mx.kv.create("local")
    kv.set_optimizer(opt)
    w, full = mx.nd.zeros(3), mx.nd.ones(3)
    kv.init(0, w)
    kv.push(0, mx.nd.ones(3))
    kv.pull(0, w)
    kv.init(1, full)
    kv.push(1, mx.nd.array([2, 2, 2]))
    kv.pull(1, full)
    assert w.asnumpy().tolist() == [-1, -1, -1] and full.asnumpy().tolist() == [2, 2, 2]


def test_update_full_grads_is_the_mean_gradient():
    di, sym = _linreg(n=10, batch=5)
    mod = SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label)
    mod.init_params(initializer=mx.init.One())
    mod.init_optimizer(kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),))
    arg, aux = mod.get_params()
    mod._mod_aux.set_params(arg_params=arg, aux_params=aux)
    total = mx.nd.zeros((1, 2))
    for batch in di:
        mod.forward(batch)
        mod.backward()
        total = total + mod._exec_group.grad_arrays[0][0]
    di.reset()
    mod.update_full_grads(di)
    np.testing.assert_allclose(mod._param_dict[0]["fc1_weight"].asnumpy(), (total / 2).asnumpy(), rtol=1e-6)


def test_svrg_fit_converges():
    di, sym = _linreg(n=200, batch=20)
    mod = SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
    metric = mx.metric.create("mse")
    mod.fit(di, eval_metric=metric, optimizer="sgd", optimizer_params=(("learning_rate", 0.025),), num_epoch=30,
            kvstore="local", initializer=mx.init.Uniform(0.01))
    assert metric.get()[1] < 0.02
    w = mod.get_params()[0]["fc1_weight"].asnumpy()
    np.testing.assert_allclose(w, [[1.0, 2.0]], atol=0.15)
