import numpy as np
import pytest
from nnref import ref_conv

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, random_args, run_backward
from plexnet.base import ShapeError
from plexnet.operator import ParamError

CASES = [
    # (data shape, kwargs)
    ((2, 3, 7), dict(kernel=(3,), num_filter=4)),
    ((2, 2, 9), dict(kernel=(3,), num_filter=3, stride=(2,), pad=(1,), dilate=(2,))),
    ((2, 3, 6, 5), dict(kernel=(3, 3), num_filter=4)),
    ((2, 3, 6, 5), dict(kernel=(3, 2), num_filter=2, pad=(1, 2))),
    ((1, 2, 7, 8), dict(kernel=(3, 3), num_filter=3, stride=(2, 3), pad=(1, 1))),
    ((2, 2, 7, 7), dict(kernel=(2, 3), num_filter=2, dilate=(2, 2), pad=(1, 0))),
    ((2, 4, 5, 5), dict(kernel=(3, 3), num_filter=6, num_group=2, pad=(1, 1), no_bias=True)),
    ((2, 4, 5, 5), dict(kernel=(1, 1), num_filter=3)),
    ((1, 2, 4, 5, 4), dict(kernel=(2, 3, 2), num_filter=2, pad=(1, 0, 1), stride=(1, 2, 1))),
]


def _ref(a, kw):
    return ref_conv(a["data"], a["weight"], a.get("bias"), kw.get("stride"), kw.get("pad"), kw.get("dilate"),
                    kw.get("num_group", 1))


@pytest.mark.parametrize("shape,kw", CASES)
def test_forward(shape, kw):
    a = random_args("Convolution", kw, data=shape, dtype="float32")
    check_forward("Convolution", a, kw, _ref(a, kw), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,kw", CASES)
def test_gradient(shape, kw):
    check_gradient("Convolution", random_args("Convolution", kw, data=shape), kw)


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("kw", [dict(kernel=(3, 3), num_filter=3, pad=(1, 1)),
                                dict(kernel=(3, 3), num_filter=2, stride=(2, 2))])
def test_req(req, kw):
    check_req("Convolution", random_args("Convolution", kw, data=(2, 2, 6, 5)), kw, req=req)


def test_lenet_shapes_float32():
    kw = dict(kernel=(5, 5), num_filter=8)
    a = random_args("Convolution", kw, data=(4, 3, 12, 12), dtype="float32")
    check_forward("Convolution", a, kw, _ref(a, kw), rtol=1e-4, atol=1e-4)


def test_infer_shape():
    ins, outs, _ = infer_shapes("Convolution", dict(kernel=(3, 3), num_filter=8, stride=(2, 2), pad=(1, 1)),
                                data=(4, 3, 32, 31))
    assert ins[1:] == [(8, 3, 3, 3), (8,)] and outs == [(4, 8, 16, 16)]
    ins, outs, _ = infer_shapes("Convolution", dict(kernel=(3,), num_filter=6, num_group=3, no_bias=True),
                                data=(2, 6, 10))
    assert ins[1:] == [(6, 2, 3)] and outs == [(2, 6, 8)]
    ins, outs, _ = infer_shapes("Convolution", dict(kernel=(3, 3), num_filter=8))
    assert outs == [None]
    with pytest.raises(ShapeError, match="weight"):
        infer_shapes("Convolution", dict(kernel=(3, 3), num_filter=8), data=(1, 3, 8, 8), weight=(8, 2, 3, 3))
    with pytest.raises(ShapeError, match="num_group"):
        infer_shapes("Convolution", dict(kernel=(3, 3), num_filter=8, num_group=2), data=(1, 3, 8, 8))
    with pytest.raises(ShapeError):
        infer_shapes("Convolution", dict(kernel=(3, 3), num_filter=8), data=(1, 3, 8))
    with pytest.raises(ShapeError, match="exceeds"):
        infer_shapes("Convolution", dict(kernel=(5, 5), num_filter=8), data=(1, 3, 4, 4))


def test_params():
    with pytest.raises(ParamError, match="stride"):
        infer_shapes("Convolution", dict(kernel=(3, 3), num_filter=8, stride=(1, 1, 1)))
    with pytest.raises(ParamError, match="num_filter"):
        infer_shapes("Convolution", dict(kernel=(3, 3)))
    from opcheck import make_prop
    p = make_prop("Convolution", {"kernel": "(3, 3)", "num_filter": "8", "no_bias": "True"})
    assert p.list_arguments() == ["data", "weight"]
    assert p.param.stride == (1, 1) and p.param.pad == (0, 0)
    assert p.declare_backward_dependency([0], [1, 2], [3]) == [0, 1, 2]


@pytest.mark.parametrize("op", ["Convolution", "Deconvolution"])
@pytest.mark.parametrize("req", ["write", "add"])
def test_workspace_chunking_matches(op, req, monkeypatch):
    """A tiny ``workspace`` splits the batch into chunks; results must not change."""
    import plexnet_ops_basic.nn._convcore as cc
    kw = dict(kernel=(3, 3), num_filter=3, pad=(1, 1), no_bias=False)
    a = random_args(op, kw, data=(5, 2, 6, 5))
    full = run_backward(op, a, kw)
    # ~1 sample per chunk
    monkeypatch.setattr(cc, "batch_chunk", lambda g, it, mb, bw: max(1, g.N // 3))
    import plexnet_ops_basic.nn._convparams as conv_base  # ConvOpBase._chunks calls it
    monkeypatch.setattr(conv_base, "batch_chunk", cc.batch_chunk)
    from plexnet.plugins import registries
    registries().operators._clear_caches()
    chunked = run_backward(op, a, kw)
    for x, y in zip(full.outputs, chunked.outputs):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)
    for x, y in zip(full, chunked):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)
    check_req(op, a, kw, req=req)
    registries().operators._clear_caches()


def test_batch_chunk_budget():
    from plexnet_ops_basic.nn._convcore import CACHE_BUDGET, STREAM_BUDGET, ConvGeom, batch_chunk
    g = ConvGeom(128, 3, 64, 1, (224, 224), (7, 7), (2, 2), (1, 1), (3, 3))
    per = g.per_sample_elems(False) * 4
    assert 2 * per > CACHE_BUDGET  # not two samples in cache: chunks aim at STREAM_BUDGET
    nb = batch_chunk(g, 4, 64, False)
    assert 1 <= nb < 128 and nb * per <= max(per, min(64 << 20, STREAM_BUDGET))
    want = STREAM_BUDGET // per
    assert batch_chunk(g, 4, 0, False) == -(-128 // -(-128 // want))
    assert batch_chunk(g, 4, 16, False) == 1  # the workspace argument still bounds a chunk
    resnet = ConvGeom(32, 64, 64, 1, (32, 32), (3, 3), (1, 1), (1, 1), (1, 1))
    assert batch_chunk(resnet, 4, 1024, True) >= 8
    small = ConvGeom(64, 20, 50, 1, (12, 12), (5, 5), (1, 1), (1, 1), (0, 0))
    assert small.csn and batch_chunk(small, 4, 1024, True) == 22  # balanced chunks of LeNet's conv2 (no junk)
    tiny = ConvGeom(4, 1, 2, 1, (5, 5), (3, 3), (1, 1), (1, 1), (0, 0))
    assert batch_chunk(tiny, 4, 1024, False) == 4
