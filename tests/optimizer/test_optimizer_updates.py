"""Optimizer updates against closed-form numpy expectations (MXNet 1.x formulas)."""
import json
import os
import pickle
import subprocess

import numpy as np
import pytest

import plexnet as mx
from plexnet import optimizer as opt

pytestmark = pytest.mark.timeout(60)

RNG = np.random.default_rng(0)
W0 = RNG.standard_normal((5, 7)).astype(np.float32)
GRADS = [RNG.standard_normal((5, 7)).astype(np.float32) * 3 for _ in range(4)]


def _clip(x, c):
    return x if c is None else np.clip(x, -c, c)


def ref_sgd(w, grads, lr, wd, rg, clip, momentum):
    w = w.astype(np.float64).copy()
    mom = np.zeros_like(w)
    for g in grads:
        t = _clip(rg * g, clip)
        if momentum:
            mom = momentum * mom - lr * wd * w - lr * t
            w = w + mom
        else:
            w = (1 - lr * wd) * w - lr * t
    return w


def ref_nag(w, grads, lr, wd, rg, clip, momentum):
    """MXNet 1.9.1's ``nag_mom_update`` called with ``out=weight``: the momentum's
    weight-decay term reads the weight after it was overwritten."""
    w = w.astype(np.float64).copy()
    mom = np.zeros_like(w)
    for g in grads:
        t = _clip(rg * g, clip) + wd * w
        if momentum:
            mom = momentum * mom
            w = w - mom + (momentum + 1) * (mom - lr * t)
            mom = mom - lr * (_clip(rg * g, clip) + wd * w)
        else:
            w = w - lr * t
    return w


def ref_adam(w, grads, lr, wd, rg, clip, b1=0.9, b2=0.999, eps=1e-8):
    w = w.astype(np.float64).copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for n, g in enumerate(grads, 1):
        t = _clip(rg * g + wd * w, clip)
        m = b1 * m + (1 - b1) * t
        v = b2 * v + (1 - b2) * t * t
        w = w - lr * np.sqrt(1 - b2 ** n) / (1 - b1 ** n) * m / (np.sqrt(v) + eps)
    return w


def ref_adagrad(w, grads, lr, wd, rg, clip, eps=1e-7):
    w = w.astype(np.float64).copy()
    h = np.zeros_like(w)
    for g in grads:
        t = _clip(rg * g, clip)
        h = h + t * t
        w = w - lr * (t / np.sqrt(h + eps) + wd * w)
    return w


def ref_rmsprop(w, grads, lr, wd, rg, clip, g1=0.9, g2=0.9, eps=1e-8, centered=False, clip_weights=None):
    w = w.astype(np.float64).copy()
    n = np.zeros_like(w)
    gm = np.zeros_like(w)
    d = np.zeros_like(w)
    for g in grads:
        t = _clip(rg * g + wd * w, clip)
        n = (1 - g1) * t * t + g1 * n
        if centered:
            gm = (1 - g1) * t + g1 * gm
            d = g2 * d - lr * t / np.sqrt(n - gm * gm + eps)
            w = w + d
        else:
            w = w - lr * t / np.sqrt(n + eps)
        if clip_weights is not None:
            w = np.clip(w, -clip_weights, clip_weights)
    return w


CASES = [
    ("sgd", dict(momentum=0.0), lambda **k: ref_sgd(momentum=0.0, **k)),
    ("sgd", dict(momentum=0.9), lambda **k: ref_sgd(momentum=0.9, **k)),
    ("nag", dict(momentum=0.0), lambda **k: ref_nag(momentum=0.0, **k)),
    ("nag", dict(momentum=0.8), lambda **k: ref_nag(momentum=0.8, **k)),
    ("adam", dict(), ref_adam),
    ("adam", dict(beta1=0.8, beta2=0.99, epsilon=1e-6), lambda **k: ref_adam(b1=0.8, b2=0.99, eps=1e-6, **k)),
    ("adagrad", dict(eps=1e-6), lambda **k: ref_adagrad(eps=1e-6, **k)),
    ("rmsprop", dict(), ref_rmsprop),
    ("rmsprop", dict(centered=True, gamma2=0.8), lambda **k: ref_rmsprop(centered=True, g2=0.8, **k)),
    ("rmsprop", dict(clip_weights=0.9), lambda **k: ref_rmsprop(clip_weights=0.9, **k)),
]
HYPER = [dict(lr=0.1, wd=0.0, rg=1.0, clip=None), dict(lr=0.05, wd=0.01, rg=0.5, clip=1.0)]


@pytest.mark.parametrize("name,kw,ref", CASES)
@pytest.mark.parametrize("hp", HYPER)
@pytest.mark.parametrize("kind", ["numpy", "ndarray"])
def test_update_matches_closed_form(name, kw, ref, hp, kind):
    o = opt.create(name, learning_rate=hp["lr"], wd=hp["wd"], rescale_grad=hp["rg"],
                   clip_gradient=hp["clip"], **kw)
    if kind == "numpy":
        w = W0.copy()
        state = o.create_state(0, w)
        for g in GRADS:
            o.update(0, w, g.copy(), state)
        got = w
    else:
        w = mx.nd.array(W0)
        state = o.create_state(0, w)
        for g in GRADS:
            o.update(0, w, mx.nd.array(g), state)
        got = w.asnumpy()
    want = ref(w=W0, grads=GRADS, lr=hp["lr"], wd=hp["wd"], rg=hp["rg"], clip=hp["clip"])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_update_does_not_modify_gradient():
    o = opt.Adam(wd=0.1, clip_gradient=0.5)
    w, g = mx.nd.array(W0), mx.nd.array(GRADS[0])
    o.update(0, w, g, o.create_state(0, w))
    np.testing.assert_array_equal(g.asnumpy(), GRADS[0])


def test_sgd_multi_precision_keeps_float32_master():
    lr = 1e-4
    w16 = mx.nd.array(np.ones(1000, np.float16), dtype=np.float16)
    g = mx.nd.array(np.ones(1000, np.float16), dtype=np.float16)
    mp = opt.SGD(learning_rate=lr, multi_precision=True, momentum=0.0)
    u = opt.get_updater(mp)
    for _ in range(10):
        u(0, g, w16)
    master = u.states[0][1]  # MXNet 1.9.1 SGD: (momentum, weight32)
    assert master.dtype == np.float32
    np.testing.assert_allclose(master.asnumpy(), 1 - 10 * lr, rtol=1e-6)
    np.testing.assert_allclose(w16.asnumpy().astype(np.float32), np.float16(1 - 10 * lr), rtol=1e-3)
    # without it float16 accumulation loses the small steps completely
    w16b = mx.nd.array(np.ones(1000, np.float16), dtype=np.float16)
    with pytest.warns(UserWarning, match="multi_precision"):
        ub = opt.get_updater(opt.SGD(learning_rate=lr))
        for _ in range(10):
            ub(0, g, w16b)
    assert np.all(w16b.asnumpy() == 1.0)


def test_lr_wd_mult_and_idx2name():
    o = opt.SGD(learning_rate=1.0, wd=0.1, param_idx2name={0: "fc_weight", 1: "fc_bias"})
    assert o._get_wd(0) == pytest.approx(0.1) and o._get_wd(1) == 0.0  # no decay on biases
    o.set_lr_mult({"fc_weight": 0.5})
    assert o._get_lr(0) == 0.5 and o._get_lr(1) == 1.0
    o.set_wd_mult({1: 2.0})
    assert o._get_wd(1) == pytest.approx(0.2)


def test_lr_scheduler_drives_learning_rate():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    o = opt.SGD(learning_rate=1.0, lr_scheduler=sched)
    w, g = np.zeros(1, np.float32), np.ones(1, np.float32)
    for _ in range(5):
        o.update(0, w, g, None)
    # updates 1..5 use lr 1, 1, 0.5, 0.5, 0.25
    assert w[0] == pytest.approx(-3.25)
    assert o.num_update == 5 and o.learning_rate == 0.25
    with pytest.raises(UserWarning):
        o.set_learning_rate(0.1)


def test_num_update_counts_once_per_device():
    o = opt.SGD(learning_rate=0.1)
    u0, u1 = opt.get_updater(o), opt.get_updater(o)
    w0, w1 = mx.nd.zeros((2,), ctx=mx.cpu(0)), mx.nd.zeros((2,), ctx=mx.cpu(1))
    g = mx.nd.ones((2,))
    for _ in range(3):
        u0(7, g, w0)
        u1(7, g.as_in_context(mx.cpu(1)), w1)
    assert o.num_update == 3


def test_registry_create_and_register():
    assert set(opt.list_optimizers()) >= {"sgd", "nag", "adam", "adagrad", "rmsprop"}
    assert isinstance(opt.create("SGD", momentum=0.5), opt.SGD)
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("adam"), opt.Adam)
    with pytest.raises(ValueError, match="Cannot find optimizer 'nope'"):
        opt.create("nope")

    @opt.Optimizer.register
    class MyHalf(opt.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight * 0.5

    try:
        o = opt.create("myhalf")
        w = mx.nd.ones((3,))
        opt.get_updater(o)(0, mx.nd.ones((3,)), w)
        np.testing.assert_array_equal(w.asnumpy(), 0.5)
        assert opt.from_config(o.get_config()).__class__ is MyHalf
    finally:
        opt.optimizer._user_registry.pop("myhalf", None)


def test_config_roundtrip_is_plain_json():
    import json
    sched = mx.lr_scheduler.MultiFactorScheduler(step=[3, 6], factor=0.5)
    o = opt.Adam(learning_rate=0.01, wd=0.001, lr_scheduler=sched, param_idx2name={0: "a_weight", 1: "b"})
    o._update_count(0)
    cfg = json.loads(json.dumps(o.get_config()))
    p = opt.from_config(cfg)
    assert isinstance(p, opt.Adam) and p.beta1 == o.beta1 and p.idx2name == {0: "a_weight", 1: "b"}
    assert p.wd_mult == o.wd_mult and p.num_update == 1 and p._index_update_count == {0: 1}
    assert isinstance(p.lr_scheduler, mx.lr_scheduler.MultiFactorScheduler)
    with pytest.raises(ValueError):
        opt.from_config({"type": "nope", "attrs": {}})


def _train(u, w, grads, keys=(0, "b")):
    for g in grads:
        for k in keys:
            u(k, mx.nd.array(g), w[k])


def test_updater_states_roundtrip_continues_identically(tmp_path):
    mk = lambda: opt.Adam(learning_rate=0.01, wd=0.01)  # noqa: E731
    ref_u = opt.get_updater(mk())
    ref_w = {0: mx.nd.array(W0), "b": mx.nd.array(W0 * 2)}
    _train(ref_u, ref_w, GRADS)

    u = opt.get_updater(mk())
    w = {0: mx.nd.array(W0), "b": mx.nd.array(W0 * 2)}
    _train(u, w, GRADS[:2])
    blob = u.get_states(dump_optimizer=True)
    assert blob[:2] == b"PK"  # an npz archive, not a pickle
    u2 = opt.get_updater(opt.SGD())  # replaced by the dumped Adam
    u2.set_states(blob)
    assert isinstance(u2.optimizer, opt.Adam) and u2.optimizer.num_update == 2
    _train(u2, w, GRADS[2:])
    for k in w:
        np.testing.assert_allclose(w[k].asnumpy(), ref_w[k].asnumpy(), rtol=1e-6, atol=1e-7)


def test_set_states_reads_pickles_only_of_states():
    """A pickle is read as MXNet's states file, by a restricted unpickler
    (tests/optimizer/test_mxnet_states.py): plain states load, other globals are refused."""
    u = opt.get_updater(opt.SGD())
    u.set_states(pickle.dumps({0: np.zeros(3)}))
    np.testing.assert_array_equal(u.states[0], np.zeros(3))
    with pytest.raises(pickle.UnpicklingError, match="refusing to load"):
        u.set_states(pickle.dumps({0: print}))
    with pytest.raises(ValueError, match="not an optimizer-states file"):
        u.set_states(b"neither npz nor pickle")


MXNET_PY = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")
MX_CASES = [
    ("sgd", dict(momentum=0.9)), ("sgd", dict()), ("nag", dict(momentum=0.9)), ("nag", dict()),
    ("adam", dict(beta1=0.8, beta2=0.99)), ("adagrad", dict(eps=1e-6)), ("rmsprop", dict(gamma1=0.8)),
    ("rmsprop", dict(centered=True, gamma2=0.8, clip_weights=2.0)),
]
MX_HYPER = dict(learning_rate=0.05, wd=0.01, rescale_grad=0.5, clip_gradient=1.0)


@pytest.mark.timeout(240)
@pytest.mark.skipif(not os.path.exists(MXNET_PY), reason=f"no Apache MXNet venv at {MXNET_PY}")
def test_optimizers_match_mxnet_1_9_1(tmp_path):
    """Each built-in optimizer (through an updater, four steps, with wd, rescale and clip)
    against ``mx.optimizer`` of MXNet 1.9.1."""
    script = (
        "import json, sys, numpy as np, mxnet as mx\n"
        "cases, hyper = json.loads(sys.argv[1]), json.loads(sys.argv[2]); d = np.load(sys.argv[3])\n"
        "out = {}\n"
        "for i, (name, kw) in enumerate(cases):\n"
        "    u = mx.optimizer.get_updater(mx.optimizer.create(name, **hyper, **kw))\n"
        "    w = mx.nd.array(d['w'])\n"
        "    for k in range(len(d.files) - 1):\n"
        "        u(0, mx.nd.array(d['g%d' % k]), w)\n"
        "    out['c%d' % i] = w.asnumpy()\n"
        "np.savez(sys.argv[4], **out)\n")
    np.savez(tmp_path / "in.npz", w=W0, **{f"g{k}": g for k, g in enumerate(GRADS)})
    proc = subprocess.run([MXNET_PY, "-c", script, json.dumps(MX_CASES), json.dumps(MX_HYPER),
                           str(tmp_path / "in.npz"), str(tmp_path / "ref.npz")],
                          capture_output=True, text=True, timeout=200)
    if proc.returncode != 0 and "No module named 'mxnet'" in proc.stderr:
        pytest.skip("the MXNet python has no mxnet module")
    assert proc.returncode == 0, proc.stderr[-3000:]
    want = np.load(tmp_path / "ref.npz")
    for i, (name, kw) in enumerate(MX_CASES):
        u = opt.get_updater(opt.create(name, **MX_HYPER, **kw))
        w = mx.nd.array(W0)
        for g in GRADS:
            u(0, mx.nd.array(g), w)
        np.testing.assert_allclose(w.asnumpy(), want[f"c{i}"], rtol=2e-5, atol=2e-6, err_msg=f"{name} {kw}")
