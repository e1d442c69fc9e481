import pytest
from nnref import ref_deconv

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, random_args
from plexnet.base import ShapeError
from plexnet.operator import ParamError

CASES = [
    ((2, 3, 5), dict(kernel=(3,), num_filter=2)),
    ((1, 2, 4), dict(kernel=(2,), num_filter=3, stride=(2,), adj=(1,), no_bias=False)),
    ((2, 2, 4, 3), dict(kernel=(3, 3), num_filter=3)),
    ((1, 2, 3, 4), dict(kernel=(3, 2), num_filter=2, stride=(2, 2), pad=(1, 0), adj=(1, 1), no_bias=False)),
    ((1, 2, 3, 3), dict(kernel=(2, 2), num_filter=2, dilate=(2, 1), pad=(1, 1))),
    ((2, 4, 3, 3), dict(kernel=(3, 3), num_filter=2, num_group=2, stride=(2, 1), no_bias=False)),
    ((1, 2, 2, 3, 2), dict(kernel=(2, 2, 2), num_filter=2, stride=(1, 2, 1))),
]


def _ref(a, kw):
    return ref_deconv(a["data"], a["weight"], a.get("bias"), kw.get("stride"), kw.get("pad"), kw.get("dilate"),
                      kw.get("adj"), kw.get("num_group", 1))


@pytest.mark.parametrize("shape,kw", CASES)
def test_forward(shape, kw):
    a = random_args("Deconvolution", kw, data=shape, dtype="float32")
    check_forward("Deconvolution", a, kw, _ref(a, kw), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,kw", CASES)
def test_gradient(shape, kw):
    check_gradient("Deconvolution", random_args("Deconvolution", kw, data=shape), kw)


@pytest.mark.parametrize("req", REQS)
def test_req(req):
    kw = dict(kernel=(3, 3), num_filter=2, stride=(2, 2), pad=(1, 1), no_bias=False)
    check_req("Deconvolution", random_args("Deconvolution", kw, data=(2, 3, 3, 4)), kw, req=req)


@pytest.mark.parametrize("target,pad,adj", [((8, 10), (1, 1), (1, 1)), ((8, 9), (1, 1), (1, 0)),
                                             ((9, 11), (0, 0), (0, 0)), ((7, 8), (1, 2), (0, 1))])
def test_target_shape(target, pad, adj):
    kw = dict(kernel=(3, 3), num_filter=2, stride=(2, 2), target_shape=target)
    a = random_args("Deconvolution", kw, data=(1, 2, 4, 5), dtype="float32")
    _, outs, _ = infer_shapes("Deconvolution", kw, data=(1, 2, 4, 5))
    assert outs == [(1, 2) + target]
    exp = ref_deconv(a["data"], a["weight"], None, (2, 2), pad, None, adj)
    check_forward("Deconvolution", a, kw, exp, rtol=1e-4, atol=1e-5)


def test_infer_shape():
    ins, outs, _ = infer_shapes("Deconvolution", dict(kernel=(3, 3), num_filter=4, num_group=2), data=(1, 2, 5, 5))
    assert ins == [(1, 2, 5, 5), (2, 2, 3, 3)] and outs == [(1, 4, 7, 7)]
    ins, outs, _ = infer_shapes("Deconvolution", dict(kernel=(4, 4), num_filter=3, stride=(2, 2), pad=(1, 1),
                                                      no_bias=False), data=(2, 5, 8, 8))
    assert ins[1:] == [(5, 3, 4, 4), (3,)] and outs == [(2, 3, 16, 16)]
    with pytest.raises(ShapeError, match="weight"):
        infer_shapes("Deconvolution", dict(kernel=(3, 3), num_filter=4), data=(1, 2, 5, 5), weight=(4, 2, 3, 3))
    with pytest.raises(ShapeError, match="too big"):
        infer_shapes("Deconvolution", dict(kernel=(3, 3), num_filter=4, target_shape=(20, 20)), data=(1, 2, 5, 5))
    with pytest.raises(ParamError, match="adj"):
        infer_shapes("Deconvolution", dict(kernel=(3, 3), num_filter=4, adj=(1, 1)))


@pytest.mark.parametrize("target", [(6, 6), (4, 4), (6, 5)])
def test_target_shape_needing_adj_at_stride_one_refused(target):
    # MXNet 1.9.1 refuses these at shape inference ("adj(y) must be smaller than stride");
    # they used to fail later inside the kernel with a bare AssertionError
    with pytest.raises(ShapeError, match=r"needs adj .* smaller than stride \(1, 1\)"):
        infer_shapes("Deconvolution", dict(kernel=(3, 3), num_filter=4, target_shape=target), data=(1, 2, 5, 5))
    # an even surplus is padding only, as in MXNet: target (5, 5) from 7 is pad 1
    _, outs, _ = infer_shapes("Deconvolution", dict(kernel=(3, 3), num_filter=4, target_shape=(5, 5)),
                              data=(1, 2, 5, 5))
    assert outs == [(1, 4, 5, 5)]
