"""contrib.adamw_update / mp_adamw_update against MXNet 1.9.1's recorded steps."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import plexnet as mx

CASES = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_contrib_adamw.json")))


@pytest.mark.parametrize("case", CASES, ids=[f"{'mp' if c['mp'] else 'fp32'}-{i}" for i, c in enumerate(CASES)])
def test_matches_mxnet(case) -> None:
    dt = np.float16 if case["mp"] else np.float32
    w = mx.nd.array(case["weight"], dtype=dt)
    g = mx.nd.array(case["grad"], dtype=dt)
    m, v = mx.nd.array(case["mean"]), mx.nd.array(case["var"])
    if case["mp"]:
        w32 = mx.nd.array(np.asarray(case["weight"], np.float32).astype(dt).astype(np.float32))
        mx.nd.contrib.mp_adamw_update(w, g, m, v, w32, out=w, **case["kw"])
    else:
        mx.nd.contrib.adamw_update(w, g, m, v, out=w, **case["kw"])
    tol = 1e-3 if case["mp"] else 1e-6
    if case["kw"]["rescale_grad"] != 0:  # a skipped step: MXNet leaves the output unwritten
        np.testing.assert_allclose(w.asnumpy().astype(np.float64), case["new_weight"], rtol=tol, atol=tol)
    np.testing.assert_allclose(m.asnumpy(), case["new_mean"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(v.asnumpy(), case["new_var"], rtol=1e-6, atol=1e-7)


def test_skipped_step_keeps_the_weight_and_symbolic_wrapper() -> None:
    w, g, m, v = mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,))
    out = mx.nd.contrib.adamw_update(w, g, m, v, rescale_grad=float("nan"), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(out.asnumpy(), 1.0)
    np.testing.assert_array_equal(m.asnumpy(), 0.0)
    s = mx.sym.contrib.adamw_update(mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("m"), mx.sym.var("v"),
                                    mx.sym.var("r"), lr=0.1, eta=1.0)
    assert '"_adamw_update"' in s.tojson() and s.list_auxiliary_states() == ["m", "v"]


def test_group_adagrad_update_follows_mxnets_formula() -> None:
    """MXNet's CPU build has only the row-sparse version; the dense one follows its documented formula."""
    rng = np.random.default_rng(0)
    w0, g0, h0 = rng.normal(size=(3, 2, 2)), rng.normal(size=(3, 2, 2)), rng.uniform(size=(3, 1))
    w, g, h = mx.nd.array(w0), mx.nd.array(g0), mx.nd.array(h0)
    out = mx.nd.contrib.group_adagrad_update(w, g, h, lr=0.1, rescale_grad=0.5, clip_gradient=0.3, epsilon=1e-5)
    gg = np.clip(0.5 * g0, -0.3, 0.3).reshape(3, -1)
    hh = h0 + (gg * gg).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(h.asnumpy(), hh, rtol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), w0 - 0.1 * (gg / np.sqrt(hh + 1e-5)).reshape(3, 2, 2), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(mx.base.ShapeError, match=r"_contrib_group_adagrad_update: argument 'grad'"):
        mx.nd.contrib.group_adagrad_update(w, mx.nd.ones((2, 2)), h, lr=0.1)
