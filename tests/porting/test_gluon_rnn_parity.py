"""MXNet 1.9.1 behaviours found by running MXNet's own test_gluon_rnn.py."""
import warnings

import pytest

import plexnet as mx
from plexnet import gluon


class _BiLSTM(gluon.nn.HybridBlock):
    def __init__(self, size, steps, **kwargs):
        super().__init__(**kwargs)
        self.steps = steps
        with self.name_scope():
            self.bi = gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(size, prefix="l0_"),
                                                  gluon.rnn.LSTMCell(size, prefix="r0_"))

    def hybrid_forward(self, F, x, valid_len):
        return self.bi.unroll(self.steps, x, valid_length=valid_len, layout="NTC", merge_outputs=True)


def test_tensor_types_include_symbol():
    # MXNet: gluon.tensor_types = (Symbol, NDArray); the rnn cells test merged outputs with it
    assert mx.sym.Symbol in gluon.tensor_types and mx.nd.NDArray in gluon.tensor_types


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("hybridize", [False, True])
def test_bidirectional_unroll_with_valid_length_keeps_ntc_shape(steps, hybridize):
    net = _BiLSTM(4, steps)
    net.initialize()
    if hybridize:
        net.hybridize()
    out, states = net(mx.nd.random.uniform(shape=(5, steps, 3)), mx.nd.array([steps] * 5))
    assert out.shape == (5, steps, 8)        # was (5, 1, steps, 8) hybridized
    assert [s.shape for s in states] == [(5, 4)] * 4


def test_context_default_ctx_class_property():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert mx.Context.default_ctx == mx.cpu(0)
        with mx.cpu(2):
            assert mx.Context.default_ctx == mx.cpu(2)
            mx.Context.default_ctx = mx.cpu(3)       # replaces the with-block's context
            assert mx.current_context() == mx.cpu(3)
        assert mx.current_context() == mx.cpu(0)
    assert len(w) == 3 and all(issubclass(x.category, DeprecationWarning) for x in w)
    assert "Context.default_ctx has been deprecated" in str(w[0].message)


def test_context_default_ctx_setter_outside_with_blocks():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mx.Context.default_ctx = mx.cpu(1)
        assert mx.current_context() == mx.cpu(1)
        with mx.cpu(4):
            assert mx.current_context() == mx.cpu(4)
        assert mx.current_context() == mx.cpu(1)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mx.Context.default_ctx = mx.cpu(0)
    assert mx.current_context() == mx.cpu(0)
