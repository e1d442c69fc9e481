import numpy as np
import pytest

from opcheck import REQS, check_forward, check_req, infer_shapes, make_prop, run_backward
from plexnet.base import ShapeError

OPS = ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"]


def fwd(op, x):
    return 1 / (1 + np.exp(-x)) if op == "LogisticRegressionOutput" else x


@pytest.mark.parametrize("dshape,lshape", [((4, 3), (4, 3)), ((4, 1), (4,)), ((2, 3, 2), (2, 3, 2))])
@pytest.mark.parametrize("op", OPS)
def test_forward_backward(op, dshape, lshape, rng):
    x = rng.standard_normal(dshape)
    lab = rng.standard_normal(lshape)
    check_forward(op, [x, lab], dict(grad_scale=2.0), fwd(op, x), rtol=1e-7)
    g = run_backward(op, [x, lab], dict(grad_scale=2.0), out_grads=[np.full(dshape, 7.0)])
    d = fwd(op, x) - lab.reshape(dshape)
    if op == "MAERegressionOutput":
        d = np.sign(d)
    num_output = lab.size // lab.shape[0]
    np.testing.assert_allclose(g[0], d * 2.0 / num_output, rtol=1e-7)
    np.testing.assert_array_equal(g[1], 0)


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("op", OPS)
def test_req(op, req, rng):
    check_req(op, [rng.standard_normal((3, 2)), rng.standard_normal((3, 2))], {}, req=req)


@pytest.mark.parametrize("op", OPS)
def test_contract(op):
    p = make_prop(op, {})
    assert not p.need_top_grad()
    assert sorted(p.declare_backward_dependency([0], [1, 2], [3])) == [2, 3]
    assert infer_shapes(op, {}, data=(4, 1))[0][1] == (4,)
    assert infer_shapes(op, {}, data=(4, 3))[0][1] == (4, 3)
    with pytest.raises(ShapeError, match="label"):
        infer_shapes(op, {}, data=(4, 3), label=(4,))
