import math

import numpy as np
import pytest

from opcheck import (REQS, check_forward, check_gradient, check_req, infer_shapes, make_prop, run_backward,
                     run_forward)
from plexnet.base import ShapeError

LAM, ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
_erf = np.vectorize(math.erf)
REFS = {
    "leaky": lambda x, s: np.where(x > 0, x, s * x),
    "elu": lambda x, s: np.where(x > 0, x, s * np.expm1(x)),
    "selu": lambda x, s: LAM * np.where(x > 0, x, ALPHA * np.expm1(x)),
    "gelu": lambda x, s: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
}


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
@pytest.mark.parametrize("act", sorted(REFS))
def test_forward_and_gradient(act, shape, rng):
    x = rng.uniform(-3, 3, shape)
    x[np.abs(x) < 1e-2] = 0.5
    kw = dict(act_type=act, slope=0.3)
    check_forward("LeakyReLU", [x.astype("f4")], kw, REFS[act](x, 0.3), rtol=1e-5, atol=2e-6)
    if act == "selu":
        # MXNet 1.9.1's selu gradient: lambda * (y + alpha) where x <= 0, not the derivative
        g = run_backward("LeakyReLU", [x], kw)[0]
        y = REFS[act](x, 0.3)
        np.testing.assert_allclose(g, np.where(x > 0, LAM, LAM * (y + ALPHA)), rtol=1e-5, atol=1e-6)
        return
    check_gradient("LeakyReLU", [x], kw, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("gshape", ["C", "1", "full"])
def test_prelu(gshape, rng):
    x = rng.uniform(-2, 2, (2, 3, 4))
    g = {"C": rng.uniform(0.1, 0.5, (3,)), "1": np.array([0.3]), "full": rng.uniform(0.1, 0.5, (2, 3, 4))}[gshape]
    gb = g.reshape(1, 3, 1) if gshape == "C" else g
    check_forward("LeakyReLU", [x, g], dict(act_type="prelu"), np.where(x > 0, x, gb * x))
    check_gradient("LeakyReLU", [x, g], dict(act_type="prelu"))


def test_prelu_infer_shape():
    ins, outs, _ = infer_shapes("LeakyReLU", dict(act_type="prelu"), data=(2, 5, 3))
    assert ins == [(2, 5, 3), (5,)] and outs == [(2, 5, 3)]
    with pytest.raises(ShapeError, match="gamma"):
        infer_shapes("LeakyReLU", dict(act_type="prelu"), data=(2, 5, 3), gamma=(3,))
    assert make_prop("LeakyReLU", dict(act_type="prelu")).list_arguments() == ["data", "gamma"]


def test_rrelu(rng):
    x = rng.uniform(-2, 2, (4, 50))
    kw = dict(act_type="rrelu", lower_bound=0.1, upper_bound=0.4)
    out = run_forward("LeakyReLU", [x], kw, is_train=True)
    y, mask = out
    assert make_prop("LeakyReLU", kw).list_outputs() == ["output", "mask"]
    assert mask.min() >= 0.1 and mask.max() <= 0.4 and mask.std() > 0.01
    np.testing.assert_allclose(y, np.where(x > 0, x, mask * x))
    check_gradient("LeakyReLU", [x[:, :6]], kw, out_index=[0])
    # inference: the mean slope
    y = run_forward("LeakyReLU", [x], kw, is_train=False)[0]
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.25 * x))
    # seeded: reproducible
    a = run_forward("LeakyReLU", [x], kw, seed=3)[1]
    b = run_forward("LeakyReLU", [x], kw, seed=3)[1]
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("act", ["leaky", "elu", "selu", "gelu", "prelu"])
def test_req(act, req, rng):
    x = rng.uniform(-2, 2, (3, 4))
    ins = [x, rng.uniform(0.1, 0.5, (4,))] if act == "prelu" else [x]
    check_req("LeakyReLU", ins, dict(act_type=act), req=req)
