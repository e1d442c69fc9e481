import numpy as np
import pytest
from nnref import ref_conv

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, random_args
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
