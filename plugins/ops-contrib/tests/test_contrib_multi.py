"""nd.contrib.multi_(mp_)adamw_update / multi_(mp_)lamb_update against MXNet 1.9.1's
recorded steps (two consecutive steps, states carried), and the ``_contrib_CTCLoss`` aliases."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx
from plexnet.operator.params import ParamError

CASES = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_contrib_multi.json")))


def _ids(c: dict) -> str:
    return f"{c['kind']}-{'mp' if c['mp'] else 'fp32'}-n{len(c['weight'])}-{sorted(c['kw'])[0]}"


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_ids(c)}" for i, c in enumerate(CASES)])
def test_matches_mxnet(case) -> None:
    dt = np.float16 if case["mp"] else np.float32
    w = [mx.nd.array(x, dtype=dt) for x in case["weight"]]
    g = [mx.nd.array(x, dtype=dt) for x in case["grad"]]
    m = [mx.nd.array(x) for x in case["mean"]]
    v = [mx.nd.array(x) for x in case["var"]]
    w32 = [mx.nd.array(x) for x in case["weight"]]
    n = len(w)
    for step, want in enumerate(case["steps"], 1):
        kw = dict(case["kw"])
        if case["kind"] == "adamw":
            if case["mp"]:
                mx.nd.contrib.multi_mp_adamw_update(w, g, m, v, w32, out=w, **kw)
            else:
                mx.nd.contrib.multi_adamw_update(w, g, m, v, out=w, **kw)
        else:
            kw["step_count"] = [step + i for i in range(n)]
            if case["mp"]:
                mx.nd.contrib.multi_mp_lamb_update(w, g, m, v, w32, out=w, **kw)
            else:
                mx.nd.contrib.multi_lamb_update(w, g, m, v, out=w, **kw)
        wtol = 1e-3 if case["mp"] else 2e-6
        for i in range(n):
            np.testing.assert_allclose(w[i].asnumpy().astype(np.float64), want["weight"][i], rtol=wtol, atol=wtol)
            np.testing.assert_allclose(m[i].asnumpy(), want["mean"][i], rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(v[i].asnumpy(), want["var"][i], rtol=1e-6, atol=1e-7)
            if case["mp"]:
                np.testing.assert_allclose(w32[i].asnumpy(), want["weight32"][i], rtol=2e-6, atol=2e-6)


def test_outputs_without_out_and_errors() -> None:
    w, g = [mx.nd.ones((2,)), mx.nd.ones((3,))], [mx.nd.ones((2,)), mx.nd.ones((3,))]
    m, v = [mx.nd.zeros((2,)), mx.nd.zeros((3,))], [mx.nd.zeros((2,)), mx.nd.zeros((3,))]
    outs = mx.nd.contrib.multi_adamw_update(w, g, m, v, 1.0, lrs=[0.1, 0.1], wds=[0, 0], etas=[1, 1])
    assert [o.shape for o in outs] == [(2,), (3,)]
    np.testing.assert_array_equal(w[0].asnumpy(), 1.0)  # weights untouched without out=
    np.testing.assert_allclose(outs[0].asnumpy(), 1 - 0.1 * 0.1 / (np.sqrt(0.001) + 1e-8), rtol=1e-5)
    np.testing.assert_allclose(m[1].asnumpy(), 0.1, rtol=1e-6)
    with pytest.raises(ParamError, match=r"_multi_adamw_update.*'lrs'"):
        mx.nd.contrib.multi_adamw_update(w, g, m, v, 1.0, lrs=[0.1], wds=[0, 0], etas=[1, 1])
    with pytest.raises(mx.base.ShapeError, match=r"_multi_lamb_update: grad_1 has shape \(2,\)"):
        mx.nd.contrib.multi_lamb_update(w, [g[0], g[0]], m, v, step_count=[1, 1], lrs=[0.1, 0.1], wds=[0, 0])


def test_symbolic_adamw_wrappers_are_in_sym_contrib() -> None:
    assert callable(mx.sym.contrib.adamw_update) and callable(mx.sym.contrib.mp_adamw_update)


def test_ctc_loss_contrib_aliases() -> None:
    from plexnet.registry import registries
    if "CTCLoss" not in registries().operators:
        pytest.skip("plexnet-ops-basic is not installed")
    rng = np.random.default_rng(0)
    data = mx.nd.array(rng.normal(size=(5, 2, 4)))
    label = mx.nd.array([[1, 2], [3, 0]])
    want = mx.nd.CTCLoss(data, label).asnumpy()
    for fn in (mx.nd.contrib.CTCLoss, mx.nd.contrib.ctc_loss):
        np.testing.assert_allclose(fn(data, label).asnumpy(), want, rtol=1e-6)
    s = mx.sym.contrib.ctc_loss(mx.sym.var("d"), mx.sym.var("l"))
    ex = s.bind(mx.cpu(), {"d": data, "l": label}, args_grad={"d": mx.nd.zeros((5, 2, 4))})
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), want, rtol=1e-6)
    assert np.abs(ex.grad_dict["d"].asnumpy()).sum() > 0
    back = mx.sym.load_json(s.tojson())
    assert back.list_arguments() == ["d", "l"]


def test_aliases_are_skipped_without_their_target() -> None:
    from plexnet.operator.registry import OpRegistry
    from plexnet_ops_contrib import aliases
    reg = OpRegistry()
    aliases.register(reg)  # no CTCLoss registered: nothing, no error
    assert "_contrib_CTCLoss" not in reg and "_contrib_ctc_loss" not in reg


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 2**16), clip=st.sampled_from([-1.0, 0.3]))
def test_multi_adamw_equals_single_steps(n: int, seed: int, clip: float) -> None:
    """The fused update of n tensors equals n calls of adamw_update."""
    rng = np.random.default_rng(seed)
    shapes = [tuple(rng.integers(1, 4, size=rng.integers(1, 3))) for _ in range(n)]
    arrays = [[rng.normal(size=s).astype(np.float32) for s in shapes] for _ in range(4)]
    arrays[3] = [np.abs(a) for a in arrays[3]]
    lrs, wds, etas = rng.uniform(0.01, 0.1, n).tolist(), rng.uniform(0, 0.1, n).tolist(), rng.uniform(0.5, 1, n).tolist()
    fused = [[mx.nd.array(a) for a in group] for group in arrays]
    mx.nd.contrib.multi_adamw_update(*fused, 0.7, lrs=lrs, wds=wds, etas=etas, clip_gradient=clip, out=fused[0])
    for i in range(n):
        w, g, m, v = (mx.nd.array(group[i]) for group in arrays)
        mx.nd.contrib.adamw_update(w, g, m, v, 0.7, lr=lrs[i], eta=etas[i], wd=wds[i], clip_gradient=clip, out=w)
        for got, want in zip((fused[0][i], fused[2][i], fused[3][i]), (w, m, v)):
            # float32: the fused kernel may round in another order (seen: 2e-6 relative)
            np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_multi_adamw_is_mxnets_fused_kernel() -> None:
    """MXNet 1.9.1's ``multi_adamw_update`` (``MultiMPAdamWKernel``: ``beta * (m - g) + g``,
    float constants), recorded there bit for bit; ``adamw_update`` rounds otherwise."""
    w = [-0.8019314408302307, -1.3243589401245117, -0.24836161732673645, 0.4204452335834503, 1.1360465288162231,
         0.10970640182495117]
    g = [-0.5526472926139832, -0.7847803831100464, 0.7487457990646362, 1.6347830295562744, 0.2727687656879425,
         -1.2333287000656128]
    m = [-0.9582651853561401, 1.600019097328186, 0.20288243889808655, -1.7321348190307617, -0.08369619399309158,
         -1.1632260084152222]
    v = [0.6292880773544312, 0.4880058169364929, 0.7133134007453918, 0.5533784627914429, 0.06308597326278687,
         0.5894312858581543]
    W, G, M, V = (mx.nd.array(np.array(a, dtype=np.float32)) for a in (w, g, m, v))
    mx.nd.contrib.multi_adamw_update([W], [G], [M], [V], mx.nd.array([0.7]), lrs=[0.05], wds=[0.01], etas=[0.9],
                                     out=[W])
    np.testing.assert_array_equal(W.asnumpy(), np.array(
        [-0.7435767650604248, -1.401679515838623, -0.25865158438682556, 0.5039821267127991, 1.1358990669250488,
         0.17513296008110046], dtype=np.float32))
    np.testing.assert_array_equal(M.asnumpy(), np.array(
        [-0.9011239409446716, 1.385082483291626, 0.2350064218044281, -1.444486379623413, -0.056232765316963196,
         -1.1332364082336426], dtype=np.float32))
    np.testing.assert_array_equal(V.asnumpy(), np.array(
        [0.6288084387779236, 0.4878196120262146, 0.7128747701644897, 0.5541346073150635, 0.06305934488773346,
         0.5895872116088867], dtype=np.float32))
