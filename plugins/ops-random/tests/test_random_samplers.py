"""Samplers: MXNet's shapes and dtypes, distributions (chi-square / Kolmogorov-Smirnov at
fixed seeds), seeding (also on the threaded engine), namespaces, errors."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from scipy import stats

import plexnet as mx

SHAPES = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_random_shapes.json")))
ALPHA = 1e-3  # a fixed seed makes each test deterministic; the level only says how unlucky a seed may be


@pytest.mark.parametrize("case", SHAPES, ids=[f"{c['fn']}-{i}" for i, c in enumerate(SHAPES)])
def test_shapes_and_dtypes_as_mxnet(case) -> None:
    params = [mx.nd.array(p) for p in case["params"]] if case["nd"] else case["params"]
    r = getattr(mx.nd.random, case["fn"])(*params, **case["kw"])
    assert r.shape == tuple(case["shape"]) and np.dtype(r.dtype).name == case["dtype"]


def _draw(fn, *args, n=20000, seed=5, **kw):
    mx.random.seed(seed)
    return getattr(mx.nd.random, fn)(*args, shape=n, dtype="float64", **kw).asnumpy()


@pytest.mark.parametrize("fn,args,cdf", [
    ("uniform", (-1.0, 3.0), stats.uniform(-1, 4).cdf),
    ("normal", (2.0, 0.5), stats.norm(2, 0.5).cdf),
    ("gamma", (2.5, 3.0), stats.gamma(2.5, scale=3.0).cdf),
    ("exponential", (2.0,), stats.expon(scale=2.0).cdf),
])
def test_continuous_ks(fn, args, cdf) -> None:
    assert stats.kstest(_draw(fn, *args), cdf).pvalue > ALPHA


def _chisq(x: np.ndarray, pmf: np.ndarray) -> float:
    k = len(pmf)
    obs = np.bincount(np.minimum(x.astype(int), k - 1), minlength=k)
    exp = pmf * len(x)
    return stats.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("fn,args,dist", [
    ("poisson", (3.0,), stats.poisson(3.0)),
    ("negative_binomial", (3, 0.4), stats.nbinom(3, 0.4)),
    ("generalized_negative_binomial", (2.0, 0.5), stats.nbinom(2.0, 1 / (1 + 0.5 * 2.0))),
])
def test_discrete_chisquare(fn, args, dist) -> None:
    k = 12
    pmf = dist.pmf(np.arange(k))
    pmf[-1] = 1 - pmf[:-1].sum()  # tail in the last bin
    assert _chisq(_draw(fn, *args), pmf) > ALPHA


def test_randint_uniform_chisquare() -> None:
    mx.random.seed(2)
    x = mx.nd.random.randint(3, 9, shape=30000).asnumpy()
    assert x.min() >= 3 and x.max() <= 8 and x.dtype == np.int32
    assert _chisq(x - 3, np.full(6, 1 / 6)) > ALPHA


def test_multinomial_frequencies_and_log_prob() -> None:
    mx.random.seed(9)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    s, lp = mx.nd.random.multinomial(mx.nd.array(p), shape=20000, get_prob=True)
    s, lp = s.asnumpy(), lp.asnumpy()
    for r in range(2):
        assert _chisq(s[r], p[r]) > ALPHA
        np.testing.assert_allclose(lp[r], np.log(p[r][s[r]]), rtol=1e-6)


def test_multinomial_get_prob_gradient() -> None:
    """REINFORCE gradient: d log p[draw] / d p accumulates 1/p at each drawn category."""
    from opcheck import run_backward, run_forward
    p = np.array([[0.1, 0.9], [0.5, 0.5]])
    kw = {"shape": (4,), "get_prob": True}
    outs = run_forward("_sample_multinomial", [p], kw, seed=1)
    g = run_backward("_sample_multinomial", [p], kw, out_grads=[np.zeros((2, 4)), np.ones((2, 4))], seed=1)
    want = np.zeros_like(p)
    for r in range(2):
        for c in outs[0][r].astype(int):
            want[r, c] += 1 / p[r, c]
    np.testing.assert_allclose(g[0], want)


def test_sample_ops_broadcast_parameters() -> None:
    mx.random.seed(4)
    mu = mx.nd.array([0.0, 100.0], dtype="float64")
    x = mx.nd.random.normal(mu, mx.nd.array([1.0, 1.0], dtype="float64"), shape=(500,)).asnumpy()
    assert x.shape == (2, 500) and x.dtype == np.float32
    assert abs(x[0].mean()) < 0.3 and abs(x[1].mean() - 100) < 0.3


def test_like_ops_take_shape_and_dtype_of_data() -> None:
    d = mx.nd.zeros((3, 4), dtype="float64")
    for fn in ("uniform_like", "normal_like", "gamma_like", "exponential_like", "poisson_like",
               "negative_binomial_like", "generalized_negative_binomial_like"):
        r = getattr(mx.nd.random, fn)(d)
        assert r.shape == (3, 4) and r.dtype == np.float64, fn
    u = mx.nd.random.uniform_like(d, low=2, high=3).asnumpy()
    assert ((u >= 2) & (u < 3)).all()


def test_shuffle_permutes_first_axis() -> None:
    mx.random.seed(1)
    x = np.arange(20).reshape(10, 2)
    y = mx.nd.random.shuffle(mx.nd.array(x)).asnumpy()
    assert sorted(map(tuple, y)) == sorted(map(tuple, x.astype(np.float32)))
    assert not np.array_equal(y, x)


@pytest.mark.parametrize("engine_kind", ["NaiveEngine", "ThreadedEnginePerDevice"])
def test_seed_reproduces_a_run(engine_kind) -> None:
    from plexnet import engine

    def run():
        mx.random.seed(123)
        a = mx.nd.random.uniform(shape=(50,))
        b = mx.nd.random.normal(mx.nd.zeros((3,)), mx.nd.ones((3,)), shape=4)
        c = mx.nd.random.poisson(2.0, shape=(10,))
        d = mx.nd.random.multinomial(mx.nd.array([0.3, 0.7]), shape=8)
        e = mx.nd.random.shuffle(mx.nd.arange(10))
        return [x.asnumpy() for x in (a, b, c, d, e)]

    old = engine.get()
    try:
        engine.set_engine(engine_kind)
    except Exception as e:  # noqa: BLE001 - an engine kind this build lacks
        pytest.skip(f"engine {engine_kind} unavailable: {e}")
    try:
        r1, r2 = run(), run()
        for x, y in zip(r1, r2):
            np.testing.assert_array_equal(x, y)
        mx.random.seed(124)
        assert not np.array_equal(mx.nd.random.uniform(shape=(50,)).asnumpy(), r1[0])
    finally:
        engine.set_engine(old)


def test_seed_per_context() -> None:
    mx.random.seed(7, ctx=mx.cpu(0))
    a = mx.nd.random.uniform(shape=(5,), ctx=mx.cpu(0)).asnumpy()
    mx.random.seed(7, ctx=mx.cpu(0))
    b = mx.nd.random.uniform(shape=(5,), ctx=mx.cpu(0)).asnumpy()
    np.testing.assert_array_equal(a, b)


NAMES = ['exponential', 'exponential_like', 'gamma', 'gamma_like', 'generalized_negative_binomial',
         'generalized_negative_binomial_like', 'multinomial', 'negative_binomial', 'negative_binomial_like', 'normal',
         'normal_like', 'poisson', 'poisson_like', 'randint', 'randn', 'shuffle', 'uniform', 'uniform_like']


@pytest.mark.parametrize("name", NAMES)
def test_namespaces(name: str) -> None:
    assert callable(getattr(mx.nd.random, name)) and callable(getattr(mx.sym.random, name))
    if "_like" not in name and name != "randn":
        assert callable(getattr(mx.random, name))


def test_symbolic_sampling_runs_in_the_executor() -> None:
    mu = mx.sym.var("mu")
    net = mx.sym.random.normal(mu, mx.sym.ones((2,)), shape=3) + mx.sym.random.uniform(0, 1, shape=(2, 3))
    assert "_sample_normal" in net.tojson() and "_random_uniform" in net.tojson()
    exe = net.simple_bind(mx.cpu(), mu=(2,))
    exe.arg_dict["mu"][:] = mx.nd.array([0.0, 50.0])
    out = exe.forward()[0].asnumpy()
    assert out.shape == (2, 3) and (out[1] > 40).all()


@pytest.mark.parametrize("call,pattern", [
    # MXNet 1.9.1 reports these when drawing: the call returns, the read raises
    (lambda: mx.nd.random.uniform(2, 1).asnumpy(), r"_random_uniform: low \(2.0\) must not exceed high \(1.0\)"),
    (lambda: mx.nd.random.normal(0, -1).asnumpy(), r"_random_normal: scale must be positive"),
    (lambda: mx.nd.random.randint(5, 5), r"_random_randint: low \(5\) must be less than high \(5\)"),
    (lambda: mx.nd.random.uniform(0, 1, dtype="int32"), r"_random_uniform: invalid value 'int32' for argument 'dtype'"),
])
def test_bad_parameters_name_operator_and_argument(call, pattern) -> None:
    with pytest.raises(mx.base.MXNetError, match=pattern):
        call()


def test_bad_scalar_parameters_raise_at_the_wait_point_not_the_call() -> None:
    a = mx.nd.random.normal(0, -1, (2, 2))  # MXNet 1.9.1: no error here (test_exc_handling)
    mx.sym.random.normal(0, -1, (2, 2))
    with pytest.raises(mx.base.MXNetError, match="scale must be positive"):
        a.asnumpy()
    b = mx.nd.random.uniform(0, 1, (2, 2))
    np.testing.assert_array_equal(b.shape, (2, 2))


def test_mixed_parameter_types_rejected() -> None:
    with pytest.raises(ValueError, match="same type"):
        mx.nd.random.uniform(mx.nd.zeros((2,)), 1.0)
    with pytest.raises(mx.base.ShapeError, match=r"_sample_uniform: the distribution parameters must all have "
                                                 r"the same shape.*low=\(2,\), high=\(3,\)"):
        mx.nd.random.uniform(mx.nd.zeros((2,)), mx.nd.ones((3,)))


def test_core_fallback_without_the_plugin_draws_the_same_numbers() -> None:
    """Without plexnet-ops-random, nd.random.uniform/normal/randint still work (initializers,
    ``plexnet demo``) and draw exactly what the plugin's operators draw; other samplers
    name the missing plugin."""
    import subprocess
    import sys
    code = ("import plexnet as mx; mx.random.seed(1); "
            "print(mx.nd.random.uniform(0, 1, shape=4).asnumpy().tolist(), "
            "mx.nd.random.normal(0, 2, shape=3).asnumpy().tolist(), mx.nd.random.randint(0, 9, shape=3).asnumpy().tolist())")
    env = dict(os.environ, PLEXNET_PLUGINS_BLOCK="ops_random")
    without = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    with_ = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert without.returncode == 0, without.stderr
    assert without.stdout == with_.stdout
    miss = subprocess.run([sys.executable, "-c", "import plexnet as mx; mx.nd.random.poisson(1.0, shape=2)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert "install plexnet-ops-random" in miss.stderr
