"""InstanceNorm, GroupNorm, L2Normalization."""
import numpy as np
import pytest

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, make_prop


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 3)])
def test_instance_norm(shape, rng):
    x = rng.standard_normal(shape) * 2 + 1
    C = shape[1]
    g, b = rng.uniform(0.5, 2, C), rng.uniform(-1, 1, C)
    ax = tuple(range(2, len(shape)))
    bs = (1, C) + (1,) * (len(shape) - 2)
    mean, var = x.mean(axis=ax, keepdims=True), x.var(axis=ax, keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-3) * g.reshape(bs) + b.reshape(bs)
    check_forward("InstanceNorm", [x, g, b], {}, [y, mean.reshape(shape[:2]), var.reshape(shape[:2])],
                  rtol=1e-7, atol=1e-10)
    check_gradient("InstanceNorm", [x, g, b], {})


@pytest.mark.parametrize("shape,G", [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((3, 4), 1)])
def test_group_norm(shape, G, rng):
    x = rng.standard_normal(shape) * 2 + 1
    g, b = rng.uniform(0.5, 2, G), rng.uniform(-1, 1, G)
    xr = x.reshape(shape[0], G, -1)
    mean, std = xr.mean(-1, keepdims=True), np.sqrt(xr.var(-1, keepdims=True) + 1e-5)
    y = ((xr - mean) / std * g.reshape(1, G, 1) + b.reshape(1, G, 1)).reshape(shape)
    kw = dict(num_groups=G, output_mean_var=True)
    check_forward("GroupNorm", [x, g, b], kw, [y, mean[..., 0], std[..., 0]], rtol=1e-7, atol=1e-10)
    check_gradient("GroupNorm", [x, g, b], dict(num_groups=G))
    assert infer_shapes("GroupNorm", dict(num_groups=G), data=shape)[0][1] == (G,)


@pytest.mark.parametrize("mode,axes", [("instance", (1, 2, 3)), ("channel", (1,)), ("spatial", (2, 3))])
def test_l2_normalization(mode, axes, rng):
    x = rng.standard_normal((2, 3, 2, 2))
    y = x / np.sqrt((x ** 2).sum(axis=axes, keepdims=True) + 1e-10)
    check_forward("L2Normalization", [x], dict(mode=mode), y, rtol=1e-10)
    check_gradient("L2Normalization", [x], dict(mode=mode))
    assert make_prop("L2Normalization", dict(mode=mode)).num_visible_outputs() == 1


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("op,kw,nparam", [("InstanceNorm", {}, 3), ("GroupNorm", dict(num_groups=2), 2),
                                          ("L2Normalization", {}, 0)])
def test_req(op, kw, nparam, req, rng):
    x = rng.standard_normal((2, 4, 3))
    ins = [x] + ([rng.uniform(0.5, 2, nparam), rng.uniform(-1, 1, nparam)] if nparam else [])
    if op == "InstanceNorm":
        ins = [x, rng.uniform(0.5, 2, 4), rng.uniform(-1, 1, 4)]
    check_req(op, ins, kw, req=req)
