"""The local kvstore types: identical results in every mode, API errors, optimizer
states, compression."""
import numpy as np
import pytest

import plexnet as mx
from plexnet.kvstore import KVStoreError, KVStoreKeyError
from plexnet.kvstore.local import LOCAL_TYPES, choose_mode

pytestmark = pytest.mark.timeout(120)

TYPES = list(LOCAL_TYPES)
SHAPES = {3: (4, 5), 9: (7,), 11: (2, 3, 4)}
CTXS = [mx.cpu(0), mx.cpu(1), mx.cpu(2)]


def _vals(seed, key, n_dev):
    rng = np.random.default_rng(seed * 100 + key)
    return [rng.standard_normal(SHAPES[key]).astype(np.float32) for _ in range(n_dev)]


def _run(kvtype, optimizer=None, steps=4, n_dev=3, str_keys=False):
    kv = mx.kv.create(kvtype)
    keys = list(SHAPES)
    name = (lambda k: f"k{k}") if str_keys else (lambda k: k)
    init = {k: np.full(SHAPES[k], 0.5, np.float32) * (k + 1) for k in keys}
    kv.init([name(k) for k in keys], [mx.nd.array(init[k]) for k in keys])
    if optimizer is not None:
        kv.set_optimizer(optimizer())
    outs = {k: [mx.nd.zeros(SHAPES[k], ctx=c) for c in CTXS[:n_dev]] for k in keys}
    for step in range(steps):
        vals = [[mx.nd.array(v, ctx=c) for v, c in zip(_vals(step, k, n_dev), CTXS)] for k in keys]
        kv.push([name(k) for k in keys], vals)
        kv.pull([name(k) for k in keys], out=[outs[k] for k in keys])
    res = {k: [o.asnumpy() for o in outs[k]] for k in keys}
    for k in keys:
        for o in res[k][1:]:
            np.testing.assert_array_equal(o, res[k][0])  # every device got the same value
    return {k: res[k][0] for k in keys}, init


@pytest.mark.parametrize("kvtype", TYPES)
def test_push_replaces_with_sum_without_updater(kvtype):
    got, _ = _run(kvtype, steps=2)
    for k in SHAPES:
        np.testing.assert_allclose(got[k], np.sum(_vals(1, k, 3), axis=0), rtol=1e-6, atol=1e-6)


def _sgd_ref(init, steps, lr=0.1, mom=0.9, wd=0.01):
    out = {}
    for k, w0 in init.items():
        w = w0.astype(np.float64)
        m = np.zeros_like(w)
        for step in range(steps):
            g = np.sum(_vals(step, k, 3), axis=0)
            m = mom * m - lr * wd * w - lr * g
            w = w + m
        out[k] = w
    return out


@pytest.mark.parametrize("kvtype", TYPES)
@pytest.mark.parametrize("str_keys", [False, True])
def test_every_mode_matches_serial_sgd(kvtype, str_keys):
    got, init = _run(kvtype, lambda: mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01),
                     str_keys=str_keys)
    want = _sgd_ref(init, 4)
    for k in SHAPES:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5)


def test_modes_agree_with_adam():
    results = [_run(t, lambda: mx.optimizer.Adam(learning_rate=0.01))[0] for t in TYPES]
    for r in results[1:]:
        for k in SHAPES:
            np.testing.assert_allclose(r[k], results[0][k], rtol=1e-6, atol=1e-6)


def test_mode_selection_rule(monkeypatch):
    cpu, g0 = [mx.cpu(0), mx.cpu(1)], [mx.gpu(0), mx.gpu(1)]
    assert choose_mode(10 ** 9, cpu) == "local_update_cpu"
    assert choose_mode(1000, g0) == "local_update_cpu"
    assert choose_mode(2 * 10 ** 6, g0) == "local_allreduce_cpu"
    assert choose_mode(17 * 2 ** 20, g0) == "local_allreduce_device"
    monkeypatch.setenv("MXNET_KVSTORE_BIGARRAY_BOUND", "100")
    assert choose_mode(1000, g0) == "local_allreduce_cpu"
    monkeypatch.setenv("PLEXNET_KVSTORE_DEVICE_BOUND", "500")
    assert choose_mode(1000, g0) == "local_allreduce_device"


def test_forced_modes_are_reported():
    for t in TYPES:
        kv = mx.kv.create(t)
        kv.init(0, mx.nd.zeros((2,)))
        assert kv.mode_of(0) is None
        kv.push(0, [mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1))])
        want = {"local": "local_update_cpu", "device": "local_allreduce_device"}.get(t, t)
        assert kv.mode_of(0) == want and kv.type == t


def test_single_key_forms_and_multiple_outputs():
    kv = mx.kv.create("local")
    kv.init(5, mx.nd.ones((2, 2)))
    a, b = mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))
    kv.pull(5, out=[a, b])
    np.testing.assert_array_equal(a.asnumpy(), 1)
    np.testing.assert_array_equal(b.asnumpy(), 1)
    kv.push(5, mx.nd.ones((2, 2)) * 4)
    kv.pull(5, out=a)
    np.testing.assert_array_equal(a.asnumpy(), 4)
    kv.pushpull(5, [mx.nd.ones((2, 2)), mx.nd.ones((2, 2))], out=b)
    np.testing.assert_array_equal(b.asnumpy(), 2)
    v = mx.nd.ones((2, 2)) * 3
    kv.pushpull(5, v)  # in place
    np.testing.assert_array_equal(v.asnumpy(), 3)
    kv.broadcast("x" if False else 6, mx.nd.ones((3,)) * 7, out=mx.nd.zeros((3,)))
    assert kv.rank == 0 and kv.num_workers == 1
    kv.barrier()


def test_values_are_copied_at_init_and_push():
    kv = mx.kv.create("local")
    src = mx.nd.ones((3,))
    kv.init(0, src)
    src[:] = 5  # must not change the stored value
    out = mx.nd.zeros((3,))
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 1)
    g = mx.nd.ones((3,)) * 2
    kv.push(0, g)
    g[:] = 9
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 2)


def test_many_keys_ordering_stress():
    kv = mx.kv.create("local")
    n = 40
    kv.init(list(range(n)), [mx.nd.zeros((64,)) for _ in range(n)])
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    outs = [mx.nd.zeros((64,)) for _ in range(n)]
    for _ in range(5):
        kv.push(list(range(n)), [[mx.nd.ones((64,)), mx.nd.ones((64,))] for _ in range(n)])
        kv.pull(list(range(n)), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), -10)


def test_errors_name_the_key():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.zeros((2,)))
    with pytest.raises(KVStoreKeyError, match="key 3 is already initialised"):
        kv.init(3, mx.nd.zeros((2,)))
    with pytest.raises(KVStoreKeyError, match="push: key 4 has not been initialised"):
        kv.push(4, mx.nd.zeros((2,)))
    with pytest.raises(KeyError, match="pull: key 7 has not been initialised"):
        kv.pull(7, out=mx.nd.zeros((2,)))
    with pytest.raises(TypeError, match="can not be mixed"):
        kv.init("w", mx.nd.zeros((2,)))
    with pytest.raises(mx.base.ShapeError, match="key 3"):
        kv.push(3, mx.nd.zeros((3,)))
    with pytest.raises(mx.base.ShapeError, match="key 3"):
        kv.pull(3, out=mx.nd.zeros((5,)))
    with pytest.raises(ValueError, match="2 keys but 1 values"):
        kv.push([3, 3], [mx.nd.zeros((2,))])
    with pytest.raises(TypeError):
        kv.push(3, np.zeros(2))
    with pytest.raises(TypeError):
        kv.push(3.5, mx.nd.zeros((2,)))
    with pytest.raises(KVStoreError, match="set_optimizer"):
        kv.save_optimizer_states("/tmp/never")
    with pytest.raises(KVStoreError, match="not supported"):
        kv.set_gradient_compression({"type": "2bit"})


def test_create_errors_and_registration():
    with pytest.raises(ValueError, match="unknown kvstore type 'nope'.*local"):
        mx.kv.create("nope")
    assert isinstance(mx.kv.create("LOCAL"), mx.kv.KVStore)

    @mx.kv.KVStoreBase.register
    class MyStore(mx.kv.KVStoreBase):
        def __init__(self):
            super().__init__("mystore")

    try:
        assert isinstance(mx.kv.create("mystore"), MyStore)
        assert "mystore" in mx.kv.list_types()
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("mystore")


def test_custom_updater():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones((3,)))
    seen = []

    def upd(key, grad, weight):
        seen.append(key)
        weight[:] = weight + grad * 10

    kv.set_updater(upd)
    kv.push("w", [mx.nd.ones((3,)), mx.nd.ones((3,))])
    out = mx.nd.zeros((3,))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), 21)
    assert seen == ["w"]


@pytest.mark.parametrize("kvtype", ["local", "local_allreduce_cpu"])
def test_save_load_optimizer_states_resumes(tmp_path, kvtype):
    def make():
        kv = mx.kv.create(kvtype)
        kv.init([0, 1], [mx.nd.ones((4,)), mx.nd.ones((2, 2))])
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.05))
        return kv

    grads = [[mx.nd.array(np.full(s, i + 1.0)) for s in ((4,), (2, 2))] for i in range(4)]

    def step(kv, g):
        kv.push([0, 1], [[g[0], g[0].as_in_context(mx.cpu(1))], [g[1], g[1].as_in_context(mx.cpu(1))]])

    ref = make()
    for g in grads:
        step(ref, g)
    a = make()
    for g in grads[:2]:
        step(a, g)
    fname = str(tmp_path / "opt.states")
    a.save_optimizer_states(fname, dump_optimizer=True)
    weights = [mx.nd.zeros((4,)), mx.nd.zeros((2, 2))]
    a.pull([0, 1], out=weights)
    b = mx.kv.create(kvtype)
    b.init([0, 1], weights)
    b.set_optimizer(mx.optimizer.SGD())  # replaced by the dumped Adam
    b.load_optimizer_states(fname)
    for g in grads[2:]:
        step(b, g)
    outs = [[mx.nd.zeros((4,)), mx.nd.zeros((2, 2))] for _ in range(2)]
    ref.pull([0, 1], out=outs[0])
    b.pull([0, 1], out=outs[1])
    for x, y in zip(*outs):
        np.testing.assert_allclose(y.asnumpy(), x.asnumpy(), rtol=1e-6)


def test_device_compression_matches_numpy_reference():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((50,)))
    rng = np.random.default_rng(3)
    res = [np.zeros(50, np.float32) for _ in range(2)]
    out = mx.nd.zeros((50,))
    for _ in range(5):
        gs = [rng.standard_normal(50).astype(np.float32) * 0.6 for _ in range(2)]
        want = np.zeros(50, np.float32)
        for g, r in zip(gs, res):
            r += g
            q = np.where(r >= 0.5, 0.5, np.where(r <= -0.5, -0.5, 0.0)).astype(np.float32)
            r -= q
            want += q
        kv.push(0, [mx.nd.array(gs[0]), mx.nd.array(gs[1], ctx=mx.cpu(1))])
        kv.pull(0, out=out)
        np.testing.assert_allclose(out.asnumpy(), want)
    with pytest.raises(KVStoreError, match="before the first push"):
        kv.set_gradient_compression({"type": "2bit", "threshold": 1})
    with pytest.raises(ValueError):
        mx.kv.create("device").set_gradient_compression({"type": "1bit"})


def test_compression_pack_roundtrip():
    from plexnet.kvstore.compression import dequantize_2bit, quantize_2bit
    rng = np.random.default_rng(0)
    g = rng.standard_normal(37).astype(np.float32)
    r = np.zeros(37, np.float32)
    packed = quantize_2bit(np, g, r, 0.7)
    assert packed.dtype == np.uint8 and packed.size == 10
    d = dequantize_2bit(np, packed, 37, 0.7)
    np.testing.assert_allclose(d + r, g, rtol=1e-6, atol=1e-6)
    assert set(np.unique(d).tolist()) <= {float(np.float32(-0.7)), 0.0, float(np.float32(0.7))}
    # MXNet's bit layout: element 0 in the top two bits of byte 0
    p = quantize_2bit(np, np.array([1.0, -1.0, 0, 1.0], np.float32), np.zeros(4, np.float32), 0.5)
    assert p.tolist() == [0b11100011]
