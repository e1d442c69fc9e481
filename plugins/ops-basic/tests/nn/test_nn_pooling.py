import numpy as np
import pytest
from nnref import ref_pool, ref_pool_max_grad

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, run_backward
from plexnet.base import ShapeError
from plexnet.operator import ParamError

POOL_CASES = [
    ((2, 3, 8), dict(kernel=(3,), stride=(2,))),
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pad=(1,), pooling_convention="full")),
    ((2, 2, 6, 6), dict(kernel=(2, 2), stride=(2, 2))),
    ((2, 2, 7, 7), dict(kernel=(2, 2), stride=(2, 2))),  # valid drops the last row/col
    ((2, 2, 7, 7), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")),
    ((1, 2, 8, 8), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention="full")),
    ((1, 2, 7, 6), dict(kernel=(3, 2), stride=(1, 2), pad=(1, 1))),
    ((1, 2, 5, 5), dict(kernel=(3, 3))),  # default stride 1
    ((1, 2, 4, 5, 4), dict(kernel=(2, 3, 2), stride=(2, 1, 2), pad=(1, 1, 0))),
    ((2, 3, 5, 4), dict(global_pool=True)),
    ((2, 3, 5, 4), dict(kernel=(5, 4))),
]
TYPES = ["max", "avg", "sum"]


def _ref(x, kw, pt, **extra):
    return ref_pool(x, kw.get("kernel"), kw.get("stride"), kw.get("pad"), pt, kw.get("pooling_convention", "valid"),
                    global_pool=kw.get("global_pool", False), **extra)


@pytest.mark.parametrize("pool_type", TYPES)
@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_forward(shape, kw, pool_type, rng):
    x = rng.standard_normal(shape).astype("float32")
    kw = dict(kw, pool_type=pool_type)
    check_forward("Pooling", [x], kw, _ref(x, kw, pool_type), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_avg_exclude_pad(shape, kw, rng):
    x = rng.standard_normal(shape)
    kw = dict(kw, pool_type="avg", count_include_pad=False)
    check_forward("Pooling", [x], kw, _ref(x, kw, "avg", count_include_pad=False))


@pytest.mark.parametrize("pool_type", TYPES)
@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_gradient(shape, kw, pool_type, rng):
    x = rng.permutation(np.prod(shape)).reshape(shape) * 0.1  # distinct values: max is differentiable
    check_gradient("Pooling", [x], dict(kw, pool_type=pool_type), eps=1e-4, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("shape,kw", [POOL_CASES[0], POOL_CASES[2], POOL_CASES[5], POOL_CASES[9]])
def test_lp(shape, kw, p, rng):
    x = rng.uniform(0.5, 1.5, shape)
    kw = dict(kw, pool_type="lp", p_value=p)
    check_forward("Pooling", [x], kw, _ref(x, kw, "lp", p_value=p))
    check_gradient("Pooling", [x], kw)


@pytest.mark.parametrize("shape,kw", [POOL_CASES[2], POOL_CASES[5], POOL_CASES[6], POOL_CASES[9]])
def test_max_ties_first_wins(shape, kw, rng):
    # after ReLU many windows are all zero: only the first position gets the gradient
    x = np.maximum(rng.standard_normal(shape), 0)
    x[:, :, :2] = 0
    dy = rng.standard_normal(infer_shapes("Pooling", kw, data=shape)[1][0])
    g = run_backward("Pooling", [x], kw, [dy])
    exp = ref_pool_max_grad(x, dy, kw.get("kernel", shape[2:]) if not kw.get("global_pool") else shape[2:],
                            kw.get("stride"), kw.get("pad"), kw.get("pooling_convention", "valid"))
    np.testing.assert_allclose(g[0], exp, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("pool_type", TYPES + ["lp"])
@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), stride=(2, 2)), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
                                dict(global_pool=True)])
def test_req(req, pool_type, kw, rng):
    x = rng.uniform(0.5, 1.5, (2, 2, 6, 6))
    extra = dict(p_value=2) if pool_type == "lp" else {}
    check_req("Pooling", [x], dict(kw, pool_type=pool_type, **extra), req=req)


def test_infer_shape():
    assert infer_shapes("Pooling", dict(kernel=(2, 2), stride=(2, 2)), data=(64, 20, 24, 24))[1] == [(64, 20, 12, 12)]
    assert infer_shapes("Pooling", dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
                        data=(1, 1, 8, 8))[1] == [(1, 1, 4, 4)]
    assert infer_shapes("Pooling", dict(kernel=(3, 3), stride=(2, 2)), data=(1, 1, 8, 8))[1] == [(1, 1, 3, 3)]
    assert infer_shapes("Pooling", dict(global_pool=True, pool_type="avg"), data=(2, 3, 7, 7))[1] == [(2, 3, 1, 1)]
    assert infer_shapes("Pooling", dict(kernel=(3,)), data=(2, 3, 7))[1] == [(2, 3, 5)]
    with pytest.raises(ShapeError):
        infer_shapes("Pooling", dict(kernel=(3, 3)), data=(2, 3, 7))
    with pytest.raises(ShapeError, match="exceeds"):
        infer_shapes("Pooling", dict(kernel=(9, 9)), data=(2, 3, 7, 7))
    with pytest.raises(ParamError):
        infer_shapes("Pooling", dict(kernel=(2, 2), pool_type="median"))
    with pytest.raises(ParamError, match="p_value"):
        infer_shapes("Pooling", dict(kernel=(2, 2), pool_type="lp"))


def test_backward_dependency():
    from opcheck import make_prop
    assert make_prop("Pooling", dict(kernel=(2, 2))).declare_backward_dependency([0], [1], [2]) == [0, 1, 2]
    assert make_prop("Pooling", dict(kernel=(2, 2), pool_type="avg")).declare_backward_dependency([0], [1], [2]) == [0]
