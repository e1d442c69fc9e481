"""BatchNorm, LayerNorm, LRN."""
import numpy as np
import pytest

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, make_prop, run_backward, run_forward

# -- BatchNorm ------------------------------------------------------------------------------


def bn_ref(x, gamma, beta, mm, mv, axis=1, eps=1e-3, momentum=0.9, fix_gamma=True, train=True, global_stats=False):
    ax = axis % x.ndim
    red = tuple(i for i in range(x.ndim) if i != ax)
    bs = tuple(x.shape[i] if i == ax else 1 for i in range(x.ndim))
    if train and not global_stats:
        mean, var = x.mean(axis=red), x.var(axis=red)
        mm2, mv2 = mm * momentum + mean * (1 - momentum), mv * momentum + var * (1 - momentum)
    else:
        mean, var, mm2, mv2 = mm, mv, mm, mv
    g = np.ones_like(gamma) if fix_gamma else gamma
    y = (x - mean.reshape(bs)) / np.sqrt(var.reshape(bs) + eps) * g.reshape(bs) + beta.reshape(bs)
    return y, mean, 1 / np.sqrt(var + eps), mm2, mv2


BN_CASES = [((4, 3), {}), ((4, 3, 2, 2), dict(fix_gamma=False)), ((3, 2, 5), dict(fix_gamma=False, eps=1e-5)),
            ((2, 3, 4), dict(axis=-1, fix_gamma=False, momentum=0.5)), ((2, 3, 2, 2), dict(axis=2, fix_gamma=False))]


def _bn_args(shape, kw, rng):
    c = shape[kw.get("axis", 1)]
    return ([rng.standard_normal(shape) * 2 + 1, rng.uniform(0.5, 2, c), rng.uniform(-1, 1, c)],
            [rng.uniform(-1, 1, c), rng.uniform(0.5, 2, c)])


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("shape,kw", BN_CASES)
def test_batchnorm_forward(shape, kw, train, rng):
    ins, aux = _bn_args(shape, kw, rng)
    kw = dict(kw, output_mean_var=True)
    ref_kw = {k: v for k, v in kw.items() if k != "output_mean_var"}
    y, mean, invstd, mm2, mv2 = bn_ref(*ins, *aux, train=train, **ref_kw)
    # the forward never moves the moving statistics (MXNet's CPU operator: its backward does)
    check_forward("BatchNorm", ins, kw, [y] + ([mean, invstd] if train else []), aux=[a.copy() for a in aux],
                  expected_aux=aux, is_train=train, rtol=1e-6, atol=1e-9)
    if train:   # the backward does, once per call
        moved = [a.copy() for a in aux]
        run_backward("BatchNorm", ins, kw, aux=moved, out_grads=[np.ones_like(y)] + [np.zeros_like(mean)] * 2)
        np.testing.assert_allclose(moved[0], mm2, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(moved[1], mv2, rtol=1e-6, atol=1e-9)
        run_backward("BatchNorm", ins, kw, aux=moved, out_grads=[np.ones_like(y)] + [np.zeros_like(mean)] * 2)
        m = kw.get("momentum", 0.9)
        np.testing.assert_allclose(moved[0], mm2 * m + (mm2 - aux[0] * m), rtol=1e-6, atol=1e-9)


def test_batchnorm_use_global_stats(rng):
    ins, aux = _bn_args((4, 3), {}, rng)
    y, *_ = bn_ref(*ins, *aux, fix_gamma=False, global_stats=True)
    check_forward("BatchNorm", ins, dict(use_global_stats=True, fix_gamma=False), y, aux=[a.copy() for a in aux],
                  expected_aux=aux, is_train=True)
    check_gradient("BatchNorm", ins, dict(use_global_stats=True, fix_gamma=False), aux=aux)


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("shape,kw", BN_CASES)
def test_batchnorm_gradient(shape, kw, train, rng):
    ins, aux = _bn_args(shape, kw, rng)
    check_gradient("BatchNorm", ins, kw, aux=aux, is_train=train, rtol=1e-5, atol=1e-7)


def test_batchnorm_fix_gamma_leaves_gamma_alone(rng):
    ins, aux = _bn_args((4, 3), {}, rng)
    g = run_backward("BatchNorm", ins, dict(fix_gamma=True), aux=aux)
    np.testing.assert_array_equal(g[1], 0)
    # the gamma array itself is not overwritten (MXNet writes 1 into it)
    out = run_forward("BatchNorm", ins, dict(fix_gamma=True), aux=aux)
    np.testing.assert_array_equal(out.inputs[1], ins[1])


def test_batchnorm_output_mean_var_visible():
    p = make_prop("BatchNorm", dict(output_mean_var=True))
    assert p.list_outputs() == ["output", "mean", "var"] and p.num_visible_outputs() == 3
    p = make_prop("BatchNorm", {})
    assert p.num_visible_outputs() == 1 and p.list_auxiliary_states() == ["moving_mean", "moving_var"]
    ins, outs, aux = infer_shapes("BatchNorm", {}, data=(2, 5, 3))
    assert ins == [(2, 5, 3), (5,), (5,)] and outs == [(2, 5, 3), (5,), (5,)] and aux == [(5,), (5,)]
    assert infer_shapes("BatchNorm", dict(axis=-1), data=(2, 5, 3))[2] == [(3,), (3,)]
    assert p.param.eps == 1e-3 and p.param.momentum == 0.9 and p.param.fix_gamma


@pytest.mark.parametrize("req", REQS)
def test_batchnorm_req(req, rng):
    ins, aux = _bn_args((4, 3, 2), {}, rng)
    check_req("BatchNorm", ins, dict(fix_gamma=False), aux=aux, req=req)


def test_batchnorm_moving_stats_converge(rng):
    x = rng.standard_normal((64, 2)) * np.array([2.0, 0.5]) + np.array([3.0, -1.0])
    aux = [np.zeros(2), np.ones(2)]
    run_forward("BatchNorm", [x, np.ones(2), np.zeros(2)], {}, aux=aux)
    np.testing.assert_array_equal(aux[0], 0)        # forward alone: unchanged (MXNet, CPU)
    for _ in range(60):
        run_backward("BatchNorm", [x, np.ones(2), np.zeros(2)], {}, aux=aux)
    np.testing.assert_allclose(aux[0], x.mean(0), rtol=1e-2)
    np.testing.assert_allclose(aux[1], x.var(0), rtol=1e-2)

# -- LayerNorm ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 3, 4), -1), ((2, 3, 4), 1), ((4, 2, 3), 0)])
def test_layernorm(shape, axis, rng):
    x = rng.standard_normal(shape) * 3 + 1
    c = shape[axis]
    gamma, beta = rng.uniform(0.5, 2, c), rng.uniform(-1, 1, c)
    bs = tuple(shape[i] if i == axis % len(shape) else 1 for i in range(len(shape)))
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + 1e-5)
    y = (x - mean) / std * gamma.reshape(bs) + beta.reshape(bs)
    kw = dict(axis=axis, output_mean_var=True)
    check_forward("LayerNorm", [x, gamma, beta], kw, [y, mean, std], rtol=1e-7, atol=1e-10)
    check_gradient("LayerNorm", [x, gamma, beta], dict(axis=axis))


@pytest.mark.parametrize("req", REQS)
def test_layernorm_req(req, rng):
    check_req("LayerNorm", [rng.standard_normal((3, 4)), rng.uniform(0.5, 2, 4), rng.uniform(-1, 1, 4)], {}, req=req)


def test_layernorm_shapes():
    ins, outs, _ = infer_shapes("LayerNorm", dict(output_mean_var=True), data=(2, 3, 4))
    assert ins[1:] == [(4,), (4,)] and outs == [(2, 3, 4), (2, 3, 1), (2, 3, 1)]
    assert make_prop("LayerNorm", dict(output_mean_var=True)).list_outputs() == ["output", "mean", "std"]

# -- LRN -------------------------------------------------------------------------------------


def lrn_ref(x, nsize, alpha=1e-4, beta=0.75, knorm=2.0):
    h = nsize // 2
    C = x.shape[1]
    s = np.zeros_like(x)
    for c in range(C):
        s[:, c] = (x[:, max(0, c - h):min(C, c + h + 1)] ** 2).sum(axis=1)
    return x / (knorm + alpha / nsize * s) ** beta


@pytest.mark.parametrize("shape,kw", [((2, 6, 2, 2), dict(nsize=3, alpha=0.1)),
                                      ((2, 4, 3), dict(nsize=5, alpha=0.5, beta=0.6, knorm=1.0)),
                                      ((1, 2, 3, 3), dict(nsize=5, alpha=0.3))])
def test_lrn(shape, kw, rng):
    x = rng.standard_normal(shape)
    check_forward("LRN", [x.astype("f4")], kw, lrn_ref(x, **kw), rtol=1e-5, atol=1e-6)
    check_gradient("LRN", [x], kw)


@pytest.mark.parametrize("req", REQS)
def test_lrn_req(req, rng):
    check_req("LRN", [rng.standard_normal((2, 5, 3))], dict(nsize=3, alpha=0.2), req=req)


def test_lrn_contract():
    p = make_prop("LRN", dict(nsize=5))
    assert p.list_outputs() == ["output", "tmp_norm"] and p.num_visible_outputs() == 1
    assert (p.param.alpha, p.param.beta, p.param.knorm) == (1e-4, 0.75, 2.0)
