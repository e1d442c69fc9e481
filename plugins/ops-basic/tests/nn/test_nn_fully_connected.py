import pytest

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, random_args
from plexnet.base import ShapeError


def ref_fc(x, w, b=None, flatten=True):
    x2 = x.reshape(x.shape[0], -1) if flatten else x
    y = x2 @ w.T
    return y if b is None else y + b


CASES = [
    ((4, 5), dict(num_hidden=3)),
    ((2, 3, 4), dict(num_hidden=6)),
    ((2, 3, 4), dict(num_hidden=2, flatten=False)),
    ((3, 2, 2, 2), dict(num_hidden=4, no_bias=True)),
]


@pytest.mark.parametrize("shape,kw", CASES)
def test_forward(shape, kw):
    a = random_args("FullyConnected", kw, data=shape, dtype="float32")
    check_forward("FullyConnected", a, kw,
                  ref_fc(*[v.astype("f8") for v in a.values()], flatten=kw.get("flatten", True)), rtol=1e-5)


@pytest.mark.parametrize("shape,kw", CASES)
def test_gradient(shape, kw):
    check_gradient("FullyConnected", random_args("FullyConnected", kw, data=shape), kw)


@pytest.mark.parametrize("req", REQS)
def test_req(req):
    kw = dict(num_hidden=3)
    check_req("FullyConnected", random_args("FullyConnected", kw, data=(4, 5)), kw, req=req)


def test_infer_shape():
    ins, outs, aux = infer_shapes("FullyConnected", dict(num_hidden=7), data=(8, 2, 3))
    assert ins == [(8, 2, 3), (7, 6), (7,)] and outs == [(8, 7)] and aux == []
    ins, outs, _ = infer_shapes("FullyConnected", dict(num_hidden=7, flatten=False), data=(8, 2, 3))
    assert ins[1] == (7, 3) and outs == [(8, 2, 7)]
    ins, outs, _ = infer_shapes("FullyConnected", dict(num_hidden=7), weight=(7, 4))
    assert ins[0] is None and outs == [None]
    with pytest.raises(ShapeError, match="weight"):
        infer_shapes("FullyConnected", dict(num_hidden=7), data=(8, 5), weight=(7, 4))
