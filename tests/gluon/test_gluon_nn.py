"""gluon.nn layers (shapes, imperative == hybridized), containers, SymbolBlock, utils."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon, nd
from plexnet.gluon import nn

LAYERS = [
    (lambda: nn.Dense(5, flatten=False), (2, 3, 4), (2, 3, 5)),
    (lambda: nn.Conv1D(3, 3, padding=1), (2, 2, 7), (2, 3, 7)),
    (lambda: nn.Conv2D(3, (3, 2), strides=2, groups=1), (1, 2, 7, 6), (1, 3, 3, 3)),
    (lambda: nn.Conv3D(2, 2), (1, 1, 4, 4, 4), (1, 2, 3, 3, 3)),
    (lambda: nn.Conv1DTranspose(2, 3, strides=2), (1, 3, 4), (1, 2, 9)),
    (lambda: nn.Conv2DTranspose(2, 3, strides=2, output_padding=1), (1, 3, 4, 4), (1, 2, 10, 10)),
    (lambda: nn.Conv3DTranspose(2, 2), (1, 1, 2, 2, 2), (1, 2, 3, 3, 3)),
    (lambda: nn.MaxPool1D(), (2, 3, 8), (2, 3, 4)),
    (lambda: nn.MaxPool3D(), (1, 1, 4, 4, 4), (1, 1, 2, 2, 2)),
    (lambda: nn.AvgPool1D(3, 1, 1), (2, 3, 8), (2, 3, 8)),
    (lambda: nn.AvgPool3D(), (1, 1, 4, 4, 4), (1, 1, 2, 2, 2)),
    (lambda: nn.GlobalAvgPool1D(), (2, 3, 8), (2, 3, 1)),
    (lambda: nn.GlobalMaxPool2D(), (2, 3, 4, 4), (2, 3, 1, 1)),
    (lambda: nn.GlobalAvgPool3D(), (1, 2, 2, 2, 2), (1, 2, 1, 1, 1)),
    (lambda: nn.BatchNorm(), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.BatchNormReLU(), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.SyncBatchNorm(), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.InstanceNorm(), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.LayerNorm(), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.GroupNorm(3), (2, 6, 4), (2, 6, 4)),
    (lambda: nn.Dropout(0.5), (4, 5), (4, 5)),
    (lambda: nn.Flatten(), (2, 3, 4), (2, 12)),
    (lambda: nn.Activation("softrelu"), (2, 3), (2, 3)),
    (lambda: nn.LeakyReLU(0.2), (2, 3), (2, 3)),
    (lambda: nn.PReLU(), (2, 3), (2, 3)),
    (lambda: nn.ELU(), (2, 3), (2, 3)),
    (lambda: nn.SELU(), (2, 3), (2, 3)),
    (lambda: nn.GELU(), (2, 3), (2, 3)),
    (lambda: nn.Swish(), (2, 3), (2, 3)),
    (lambda: nn.SiLU(), (2, 3), (2, 3)),
    (lambda: nn.ReflectionPad2D(1), (1, 2, 3, 3), (1, 2, 5, 5)),
    (lambda: nn.Identity(), (2, 3), (2, 3)),
    (lambda: nn.HybridLambda(lambda F, x: F.relu(x) * 2), (2, 3), (2, 3)),
    (lambda: nn.HybridLambda("tanh"), (2, 3), (2, 3)),
]


@pytest.mark.parametrize("make,shape,out_shape", LAYERS)
def test_layer_shapes_and_hybridize(make, shape, out_shape) -> None:
    x = nd.array(np.random.RandomState(1).randn(*shape))
    blk = make()
    blk.initialize()
    with autograd.predict_mode():
        y0 = blk(x)
    assert y0.shape == out_shape
    blk.hybridize()
    with autograd.predict_mode():
        y1 = blk(x)
    np.testing.assert_allclose(y1.asnumpy(), y0.asnumpy(), rtol=1e-5, atol=1e-6)
    repr(blk)


def test_embedding_and_lambda_and_containers() -> None:
    emb = nn.Embedding(10, 4)
    emb.initialize()
    assert emb(nd.array([[1, 2], [3, 9]])).shape == (2, 2, 4)
    assert nn.Embedding(10, 4, sparse_grad=True).weight._grad_stype == "row_sparse"  # tests/gluon/test_sparse_grad.py
    lam = nn.Lambda("exp")
    np.testing.assert_allclose(lam(nd.zeros((2,))).asnumpy(), [1., 1.])
    with pytest.raises(mx.PlexnetError, match="not found"):
        nn.Lambda("no_such_fn")
    seq = nn.Sequential()
    with seq.name_scope():
        seq.add(nn.Dense(4), nn.Lambda(lambda x: x * 2), nn.Dense(3))
    seq.initialize()
    assert seq(nd.ones((2, 5))).shape == (2, 3)
    assert len(seq) == 3 and isinstance(seq[1], nn.Lambda) and len(seq[:2]) == 2
    cat = nn.HybridConcatenate(axis=1)
    with cat.name_scope():
        cat.add(nn.Dense(2), nn.Dense(3))
    cat.initialize()
    assert cat(nd.ones((2, 4))).shape == (2, 5)
    cat.hybridize()
    assert cat(nd.ones((2, 4))).shape == (2, 5)
    cat2 = nn.Concatenate()
    cat2.add(nn.Dense(2), nn.Dense(1))
    cat2.initialize()
    assert cat2(nd.ones((2, 4))).shape == (2, 3)


class TwoInTwoOut(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.d = nn.Dense(3)

    def hybrid_forward(self, F, a, b):
        h = self.d(a) + self.d(b)
        return h, F.relu(h)


def test_multi_input_output_block_and_symbol_block() -> None:
    blk = TwoInTwoOut()
    blk.initialize()
    a, b = nd.ones((2, 4)), nd.ones((2, 4)) * 2
    o0 = [o.asnumpy() for o in blk(a, b)]
    blk.hybridize()
    a.attach_grad()
    with autograd.record():
        h, r = blk(a, b)
        (h.sum() + r.sum()).backward()
    for u, v in zip(o0, (h.asnumpy(), r.asnumpy())):
        np.testing.assert_allclose(u, v, rtol=1e-6)
    assert a.grad.shape == (2, 4)
    sym = blk(mx.sym.var("a"), mx.sym.var("b"))
    assert len(sym) == 2
    sb = gluon.SymbolBlock(list(sym), [mx.sym.var("a"), mx.sym.var("b")], params=blk.collect_params())
    out = sb(a, b)
    np.testing.assert_allclose(out[0].asnumpy(), o0[0], rtol=1e-6)


def test_cast_reset_ctx_and_summary(capsys) -> None:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4), nn.Dense(2))
    net.initialize()
    x = nd.ones((3, 5))
    want = net(x).asnumpy()
    net.hybridize()
    net(x)
    net.cast("float64")
    assert net[0].weight.data().dtype == np.float64
    np.testing.assert_allclose(net(x.astype("float64")).asnumpy(), want, rtol=1e-6)
    net.reset_ctx(mx.cpu(1))
    assert net[0].weight.list_ctx() == [mx.cpu(1)]
    np.testing.assert_allclose(net(x.astype("float64").as_in_context(mx.cpu(1))).asnumpy(), want, rtol=1e-6)
    net2 = nn.HybridSequential()
    with net2.name_scope():
        net2.add(nn.Dense(4, in_units=5))
    net2.initialize()
    net2.summary(nd.ones((1, 5)))
    assert "Total params: 24" in capsys.readouterr().out


def test_utils(tmp_path) -> None:
    # MXNet 1.9.1's sections: the first slices take the extra examples (numpy's array_split),
    # fewer examples than slices leave empty ones at the end
    parts = gluon.utils.split_data(nd.arange(10).reshape((5, 2)), 2, even_split=False)
    assert [p.shape[0] for p in parts] == [3, 2]
    parts = gluon.utils.split_data(nd.arange(3).reshape((3, 1)), 5, even_split=False)
    assert [p.shape for p in parts] == [(1, 1)] * 3 + [(0, 1)] * 2
    parts = gluon.utils.split_data(nd.arange(14).reshape((2, 7)), 3, batch_axis=1, even_split=False)
    assert [p.shape for p in parts] == [(2, 3), (2, 2), (2, 2)]
    with pytest.raises(ValueError, match="evenly"):
        gluon.utils.split_data(nd.ones((5, 2)), 2)
    f = tmp_path / "x.bin"
    f.write_bytes(b"plexnet")
    sha = hashlib.sha1(b"plexnet").hexdigest()
    assert gluon.utils.check_sha1(str(f), sha)
    assert gluon.utils.download("http://127.0.0.1:9/x.bin", path=str(f), sha1_hash=sha) == str(f)
    with pytest.raises(mx.PlexnetError, match="cannot fetch.*place it at"):
        gluon.utils.download("http://127.0.0.1:9/y.bin", path=str(tmp_path / "y.bin"), retries=1, timeout=2)
    grads = [nd.ones((2,)) * 3, nd.ones((2,)) * 4]
    norm = gluon.utils.clip_global_norm(grads, 1.0)
    assert abs(norm - np.sqrt(50)) < 1e-4
    assert abs(sum(float((g * g).sum().asscalar()) for g in grads) - 1.0) < 1e-3


def test_block_save_load_and_op_hook(tmp_path) -> None:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = nd.ones((3, 5))
    want = net(x).asnumpy()
    net.save(str(tmp_path / "m"))
    net2 = nn.HybridSequential()
    with net2.name_scope():
        net2.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net2.load(str(tmp_path / "m"))
    np.testing.assert_allclose(net2(x).asnumpy(), want, rtol=1e-6)
    seen = []
    net2.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)))
    net2(x)
    assert any(op == "FullyConnected" for _, op, _ in seen)
    with pytest.raises(ValueError, match="backend"):
        net2.optimize_for(x)
    pd = gluon.ParameterDict()
    pd.get("w", shape=(2,))
    pd.load_dict({"arg:w": nd.ones((2,))})
    np.testing.assert_allclose(pd["w"].data().asnumpy(), [1., 1.])
