"""sym.contrib.foreach / while_loop / cond (operators holding subgraphs, run by an inner
executor per step) against MXNet 1.9.1's outputs and gradients through the executor's
backward; MXNet's symbol JSON (``subgraphs`` field) loads and round-trips; the nd
versions record for autograd."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx

FIX = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_contrib_control_flow.json")))


def _run(sym, case, grad_names, rows=None):
    args = {k: mx.nd.array(v, dtype=case["dtypes"][k]) for k, v in case["args"].items()}
    ex = sym.bind(mx.cpu(), args, args_grad={k: mx.nd.zeros(args[k].shape) for k in grad_names},
                  grad_req={k: ("write" if k in grad_names else "null") for k in args})
    outs = ex.forward(is_train=True)
    for i, (got, want) in enumerate(zip(outs, case["outputs"])):
        got, want = got.asnumpy(), np.asarray(want)
        if rows is not None and i == 0:
            got, want = got[:rows], want[:rows]  # MXNet leaves the rows past the last step unwritten
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ex.backward([mx.nd.array(h) for h in case["head_grads"]])
    for k in grad_names:
        np.testing.assert_allclose(ex.grad_dict[k].asnumpy(), case["grads"][k], rtol=1e-5, atol=1e-5)
    return ex


def _rnn_sym():
    x, h0, wx, wh = mx.sym.var("x"), mx.sym.var("h0"), mx.sym.var("wx"), mx.sym.var("wh")

    def body(xt, states):
        h = mx.sym.tanh(mx.sym.FullyConnected(xt, wx, num_hidden=5, no_bias=True)
                        + mx.sym.FullyConnected(states[0], wh, num_hidden=5, no_bias=True))
        return h * 2, [h]

    outs, states = mx.sym.contrib.foreach(body, x, [h0])
    return mx.sym.Group([outs, states[0]])


def test_foreach_rnn_cell_matches_mxnet() -> None:
    sym = _rnn_sym()
    assert sym.list_arguments() == ["x", "h0", "wx", "wh"]
    assert sym.infer_shape(x=(3, 2, 4), h0=(2, 5))[1] == [(3, 2, 5), (2, 5)]
    _run(sym, FIX["rnn_foreach"], ["x", "h0", "wx", "wh"])


def test_foreach_two_data_inputs_and_state_matches_mxnet() -> None:
    a, b, s = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("s")

    def body(data, states):
        at, bt = data
        new = states * at + bt
        return [new, at * bt], new

    outs, st = mx.sym.contrib.foreach(body, [a, b], s)
    _run(mx.sym.Group(outs + [st]), FIX["two_data_foreach"], ["a", "b", "s"])


def _while_sym():
    i, s = mx.sym.var("i"), mx.sym.var("s")
    outs, (fi, fs) = mx.sym.contrib.while_loop(
        cond=lambda i, s: i < 5, func=lambda i, s: ([mx.sym.broadcast_add(s * 2, i)], [i + 1, s + mx.sym.broadcast_mul(i, s)]),
        loop_vars=(i, s), max_iterations=8)
    return mx.sym.Group([outs[0], fi, fs])


def test_while_loop_counter_matches_mxnet() -> None:
    case = FIX["while_counter"]
    ex = _run(_while_sym(), case, ["s"], rows=case["steps"])
    np.testing.assert_array_equal(ex.outputs[0].asnumpy()[case["steps"]:], 0.0)  # plexnet zero-fills the padding


def _cond_sym():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    return mx.sym.contrib.cond(mx.sym.sum(a * b) < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))


@pytest.mark.parametrize("k", [0, 1], ids=["then", "else"])
def test_cond_branches_match_mxnet(k) -> None:
    _run(_cond_sym(), FIX["cond"][k], ["a", "b"])


@pytest.mark.parametrize("key,grads", [("rnn_foreach", ["x", "h0", "wx", "wh"]), ("while_counter", ["s"]),
                                       ("cond", ["a", "b"])])
def test_mxnet_json_loads_and_runs(key, grads) -> None:
    case = FIX[key][0] if key == "cond" else FIX[key]
    sym = mx.sym.load_json(case["json"])
    _run(sym, case, grads, rows=case.get("steps"))
    back = mx.sym.load_json(sym.tojson())  # plexnet's JSON keeps the subgraphs too
    assert json.loads(back.tojson()) == json.loads(sym.tojson())
    assert "subgraphs" in sym.tojson()


def test_json_roundtrip_of_plexnet_symbol_and_copy() -> None:
    sym = _rnn_sym()
    doc = json.loads(sym.tojson())
    node = [n for n in doc["nodes"] if n["op"] == "_foreach"][0]
    assert node["attrs"]["num_args"] == "5" and node["attrs"]["remain_locs"] == "[1, 3]"
    assert [n["name"] for n in node["subgraphs"][0]["nodes"] if n["op"] == "null"] == ["x-0", "wx", "h0-0", "wh"]
    for s in (mx.sym.load_json(sym.tojson()), sym.__copy__()):
        _run(s, FIX["rnn_foreach"], ["x", "h0", "wx", "wh"])


def test_cut_outer_operator_outputs_become_inputs() -> None:
    x, w = mx.sym.var("x"), mx.sym.var("w")
    pre = mx.sym.FullyConnected(w, num_hidden=3, no_bias=True, name="pre")  # made outside the body

    def body(xt, st):
        return xt * pre, st + xt

    outs, st = mx.sym.contrib.foreach(body, x, mx.sym.var("s0"))
    g = mx.sym.Group([outs, st])
    node = [n for n in json.loads(g.tojson())["nodes"] if n["op"] == "_foreach"][0]
    assert "pre_output" in [n["name"] for n in node["subgraphs"][0]["nodes"]]
    xv, wv, sv = np.ones((2, 3, 3), np.float32), np.eye(3, dtype=np.float32), np.zeros((3, 3), np.float32)
    ex = g.bind(mx.cpu(), {"x": mx.nd.array(xv * 2), "w": mx.nd.array(wv), "pre_weight": mx.nd.ones((3, 3)),
                            "s0": mx.nd.array(sv)})
    o = ex.forward()
    np.testing.assert_allclose(o[0].asnumpy(), np.full((2, 3, 3), 2.0))  # pre = eye @ ones = ones
    np.testing.assert_allclose(o[1].asnumpy(), np.full((3, 3), 4.0))


def test_nested_foreach() -> None:
    x = mx.sym.var("x")

    def outer(row, st):
        inner_out, inner_st = mx.sym.contrib.foreach(lambda e, s: (e + s, s + e), row, st)
        return inner_out, inner_st

    outs, st = mx.sym.contrib.foreach(outer, x, mx.sym.var("s"))
    g = mx.sym.Group([outs, st])
    xv = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    ex = g.bind(mx.cpu(), {"x": mx.nd.array(xv), "s": mx.nd.zeros((2,))},
                args_grad={"x": mx.nd.zeros((2, 3, 2)), "s": mx.nd.zeros((2,))})
    o = ex.forward(is_train=True)
    flat = xv.reshape(6, 2)
    cum = np.cumsum(flat, axis=0)
    np.testing.assert_allclose(o[0].asnumpy().reshape(6, 2), cum)  # e + (running sum before e)
    np.testing.assert_allclose(o[1].asnumpy(), cum[-1])
    ex.backward([mx.nd.ones((2, 3, 2)), mx.nd.ones((2,))])
    # element k reaches every later output and the final state: 6 - k + 1
    want = (7.0 - np.arange(6, dtype=np.float32))[:, None].repeat(2, axis=1).reshape(2, 3, 2)
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), want)
    np.testing.assert_allclose(ex.grad_dict["s"].asnumpy(), [7.0, 7.0])


def test_errors_name_the_problem() -> None:
    x = mx.sym.var("x")
    with pytest.raises(AssertionError, match="state arrays have to be used"):
        mx.sym.contrib.foreach(lambda d, s: (d * 2, d), x, mx.sym.var("unused"))
    with pytest.raises(ValueError, match="max_iterations should be specified"):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: (None, [i + 1]), [x])
    with pytest.raises(ValueError, match="then branch gives 2 outputs"):
        mx.sym.contrib.cond(x < 1, lambda: [x, x], lambda: x)


def test_imperative_versions_record_for_autograd() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    s0 = mx.nd.array([0.5, 0.5])
    w = mx.nd.array([2.0, 3.0])
    for a in (x, s0, w):
        a.attach_grad()
    with mx.autograd.record():
        outs, st = mx.nd.contrib.foreach(lambda d, s: (d * s * w, s + d * w), x, s0)
        loss = outs.sum() + st.sum()
        c = mx.nd.contrib.cond(loss > 0, lambda: loss * 2, lambda: loss * 3)
        _, (i, v) = mx.nd.contrib.while_loop(lambda i, v: i < 3, lambda i, v: (None, [i + 1, v * 2]),
                                             [mx.nd.array([0.0]), c], max_iterations=5)
    v.backward()
    assert float(v.asscalar()) == pytest.approx(16 * float(loss.asscalar()))
    # d(16 loss)/dw by hand: loss = sum_t d_t*s_t*w + s_T; s_1 = s0 + d_0 w, s_2 = s_1 + d_1 w
    d0, d1, s = x.asnumpy()[0], x.asnumpy()[1], s0.asnumpy()
    wv = w.asnumpy()
    dl_dw = d0 * s + (d1 * (s + d0 * wv) + d1 * d0 * wv) + d0 + d1
    np.testing.assert_allclose(w.grad.asnumpy(), 16 * dl_dw, rtol=1e-5)


def test_foreach_trains_in_a_module() -> None:
    x, w = mx.sym.var("data"), mx.sym.var("wx_weight")

    def body(xt, st):
        h = mx.sym.tanh(mx.sym.FullyConnected(xt, w, num_hidden=4, no_bias=True) + st[0])
        return h, [h]

    _, s = mx.sym.contrib.foreach(body, mx.sym.transpose(x, axes=(1, 0, 2)), [mx.sym.zeros((2, 4))])
    mod = mx.mod.Module(mx.sym.MakeLoss(mx.sym.sum(s[0])), data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 5, 3))])
    mod.init_params(mx.init.Uniform(0.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    batch = mx.io.DataBatch([mx.nd.ones((2, 5, 3))])
    losses = []
    for _ in range(3):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
        losses.append(float(mod.get_outputs()[0].asnumpy()[0]))
    assert losses[2] < losses[1] < losses[0]


def test_hybridized_block_matches_imperative() -> None:
    from plexnet import gluon

    class Cell(gluon.HybridBlock):
        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(4, 3))

        def hybrid_forward(self, F, x, h0, w):
            def body(xt, st):
                h = F.tanh(F.FullyConnected(xt, w, num_hidden=4, no_bias=True) + st[0])
                return h, [h]
            o, s = F.contrib.foreach(body, x, [h0])
            return o, s[0]

    net = Cell()
    net.initialize(mx.init.Uniform(0.5))
    x, h0 = mx.nd.array(np.linspace(-1, 1, 30).reshape(5, 2, 3)), mx.nd.zeros((2, 4))
    res = []
    for hybrid in (False, True):
        if hybrid:
            net.hybridize()
        with mx.autograd.record():
            o, s = net(x, h0)
            loss = o.sum() + s.sum()
        loss.backward()
        res.append((o.asnumpy(), net.w.grad().asnumpy().copy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)


@settings(max_examples=8, deadline=None)
@given(steps=st.integers(1, 5), width=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_foreach_running_sum_property(steps: int, width: int, seed: int) -> None:
    """A running-sum body gives numpy's cumsum; d sum(outputs) / d x[t] = steps - t."""
    xv = np.random.default_rng(seed).normal(size=(steps, width)).astype(np.float32)
    outs, last = mx.sym.contrib.foreach(lambda d, s: (s + d, s + d), mx.sym.var("x"), mx.sym.var("s"))
    ex = mx.sym.Group([outs, last]).bind(mx.cpu(), {"x": mx.nd.array(xv), "s": mx.nd.zeros((width,))},
                                         args_grad={"x": mx.nd.zeros((steps, width))}, grad_req={"x": "write",
                                                                                                 "s": "null"})
    o = ex.forward(is_train=True)
    np.testing.assert_allclose(o[0].asnumpy(), np.cumsum(xv, axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o[1].asnumpy(), xv.sum(axis=0), rtol=1e-5, atol=1e-5)
    ex.backward([mx.nd.ones((steps, width)), mx.nd.zeros((width,))])
    want = (steps - np.arange(steps, dtype=np.float32))[:, None].repeat(width, axis=1)
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), want)


def test_backward_uses_the_steps_of_the_training_forward() -> None:
    """Dropout inside the body: backward sees the masks the forward drew (kept steps)."""
    x, w = mx.sym.var("x"), mx.sym.var("w")
    outs, _ = mx.sym.contrib.foreach(lambda d, s: (mx.sym.Dropout(d * w, p=0.5), s), x, mx.sym.var("s"))
    wv = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
    ex = outs.bind(mx.cpu(), {"x": mx.nd.ones((6, 4)), "w": mx.nd.array(wv), "s": mx.nd.zeros((4,))},
                   args_grad={"w": mx.nd.zeros((4,))}, grad_req={"x": "null", "w": "write", "s": "null"})
    o = ex.forward(is_train=True)[0].asnumpy()
    assert (o == 0).any() and (o != 0).any()
    ex.backward([mx.nd.ones((6, 4))])
    np.testing.assert_allclose(ex.grad_dict["w"].asnumpy(), (o / wv).sum(axis=0), rtol=1e-6)


def test_hybridized_while_loop_and_cond_match_imperative() -> None:
    from plexnet import gluon

    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, i, s):
            outs, (_, fs) = F.contrib.while_loop(lambda i, s: i < 4, lambda i, s: ([s * 2], [i + 1, s * 1.5]), [i, s],
                                                 max_iterations=6)
            return outs[0], F.contrib.cond(F.sum(fs) > 0, lambda: fs * 2, lambda: fs * 3)

    net, i, s = Net(), mx.nd.array([0.0]), mx.nd.array([1.0, -2.0])
    s.attach_grad()
    res = []
    for hybrid in (False, True):
        if hybrid:
            net.hybridize()
        with mx.autograd.record():
            o, c = net(i, s)
            loss = o[:4].sum() + c.sum()
        loss.backward()
        res.append((o.asnumpy()[:4], c.asnumpy(), s.grad.asnumpy().copy()))
    np.testing.assert_allclose(res[0][1], [1.0 * 1.5 ** 4 * 3, -2.0 * 1.5 ** 4 * 3], rtol=1e-6)  # else branch
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6)
