"""The fast paths of the imperative Gluon step (docs/performance.md, session 6) keep the
general paths' results: optimizer rules a subclass overrides, update counts, context
checks of nd calls, the tape bulk's variable lists and the engine's dependency lists."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon, nd
from plexnet.base import PlexnetError
from plexnet.engine.base import split_vars
from plexnet.engine.threaded_base import _norm
from plexnet.engine.var import ThreadedVar
from plexnet.tape.bulk import segment_vars


def test_sgd_honours_overridden_lr_and_wd_rules() -> None:
    class HalfLR(mx.optimizer.SGD):
        def _get_lrs(self, indices):
            return [0.5 * self.lr for _ in indices]

        def _get_wds(self, indices):
            return [0.0 for _ in indices]

    opt = HalfLR(learning_rate=0.2, wd=0.1)
    w, g = nd.ones((3,)), nd.ones((3,))
    mx.optimizer.get_updater(opt)(0, g, w)
    np.testing.assert_allclose(w.asnumpy(), 1.0 - 0.1 * 1.0, rtol=1e-6)  # lr 0.1, no weight decay


def test_update_counts_for_int_and_list_indices_agree() -> None:
    a, b = mx.optimizer.SGD(begin_num_update=3), mx.optimizer.SGD(begin_num_update=3)
    for idx in (0, 1, 0, 2, 0):
        a._update_count(idx)
        b._update_count([idx])
    assert a._index_update_count == b._index_update_count == {0: 6, 1: 4, 2: 4}
    assert a.num_update == b.num_update == 6


def test_trainer_step_matches_plain_sgd() -> None:
    net = gluon.nn.Dense(4, in_units=3)
    net.initialize(mx.init.Uniform(0.1))
    w0, b0 = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "wd": 0.01})
    x = nd.array(np.arange(6, dtype="f4").reshape(2, 3))
    with autograd.record():
        y = net(x).sum()
    y.backward()
    gw, gb = net.weight.grad().asnumpy(), net.bias.grad().asnumpy()
    tr.step(2)
    # MXNet: weight decay on weights only (bias wd_mult 0), rescale 1/batch
    np.testing.assert_allclose(net.weight.data().asnumpy(), (1 - 0.5 * 0.01) * w0 - 0.5 * (gw / 2), rtol=1e-5)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b0 - 0.5 * (gb / 2), rtol=1e-5)
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        tr.step(2)


def test_nd_call_with_inputs_on_two_contexts_raises() -> None:
    a = nd.ones((2, 3), ctx=mx.cpu(0))
    w = nd.ones((4, 3), ctx=mx.cpu(1))
    with pytest.raises(PlexnetError, match="different contexts"):
        nd.FullyConnected(a, w, no_bias=True, num_hidden=4)


def test_segment_vars_lists_each_external_read_once() -> None:
    a, b, c, d = (ThreadedVar() for _ in range(4))
    items = [("f", None, (a, b), (c,)), ("g", None, (a, c), (d,)), ("h", None, (b, d, a), ())]
    reads, writes = segment_vars(items)
    assert reads == [a, b]          # c and d are written inside the segment first; a, b once
    assert writes == [c, d]


@pytest.mark.parametrize("c_idx, m_idx", [((0, 1, 2), (3,)), ((0, 0, 1), (2,)), ((0, 1, 2), (1,)),
                                           ((0, 1), (2,)), ((0,), (0,)), ((), (0, 1))])
def test_engine_norm_agrees_with_split_vars(c_idx, m_idx) -> None:
    vs = [ThreadedVar() for _ in range(4)]
    c = tuple(vs[i] for i in c_idx)
    m = tuple(vs[i] for i in m_idx)
    assert _norm(c, m) == split_vars(c, m)
