import numpy as np
import pytest

from opcheck import REQS, check_gradient, check_req, infer_shapes, make_prop, run_backward, run_forward


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_training_statistics(p, rng):
    x = rng.uniform(1, 2, (200, 100)).astype("f4")
    y, mask = run_forward("Dropout", [x], dict(p=p), is_train=True, seed=1)
    kept = mask != 0
    assert abs(kept.mean() - (1 - p)) < 0.02
    np.testing.assert_allclose(mask[kept], 1 / (1 - p), rtol=1e-6)
    np.testing.assert_allclose(y, x * mask, rtol=1e-6)


def test_inference_is_identity(rng):
    x = rng.standard_normal((4, 5))
    y, mask = run_forward("Dropout", [x], dict(p=0.5), is_train=False)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(mask, 1)
    g = run_backward("Dropout", [x], dict(p=0.5), is_train=False, out_grads=[np.full((4, 5), 3.0)])
    np.testing.assert_array_equal(g[0], 3.0)


def test_mode_always(rng):
    x = rng.standard_normal((50, 50))
    y = run_forward("Dropout", [x], dict(p=0.5, mode="always"), is_train=False)[0]
    assert (y == 0).mean() > 0.3


def test_seeded_reproducible_and_varies(rng):
    x = rng.standard_normal((10, 10))
    a = run_forward("Dropout", [x], {}, seed=5)[1]
    b = run_forward("Dropout", [x], {}, seed=5)[1]
    c = run_forward("Dropout", [x], {}, seed=6)[1]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_axes(rng):
    x = rng.standard_normal((4, 6, 5))
    kw = dict(p=0.5, axes=(1,))
    assert infer_shapes("Dropout", kw, data=(4, 6, 5))[1] == [(4, 6, 5), (4, 1, 5)]
    y, mask = run_forward("Dropout", [x], kw)
    np.testing.assert_allclose(y, x * mask)
    assert np.all((y == 0) == (y[:, :1] == 0))  # shared along axis 1


@pytest.mark.parametrize("kw", [dict(p=0.5), dict(p=0.3, axes=(0,)), dict(p=0.0), dict(p=1.0)])
def test_gradient(kw, rng):
    check_gradient("Dropout", [rng.standard_normal((3, 4))], kw)


@pytest.mark.parametrize("req", REQS)
def test_req(req, rng):
    check_req("Dropout", [rng.standard_normal((6, 5))], dict(p=0.4), req=req)


def test_contract():
    p = make_prop("Dropout", {})
    assert p.list_outputs() == ["output", "mask"] and p.num_visible_outputs() == 1
    assert [r.type.name for r in p.forward_resource([(2, 3)])] == ["kRandom"]
    assert p.declare_backward_dependency([0], [1], [2, 3]) == [0, 3]
