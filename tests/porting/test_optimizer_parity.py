"""MXNet 1.9.1 optimizer behaviours found by running MXNet's own test_optimizer.py."""
import numpy as np
import pytest

import plexnet as mx

# where the float32 master copy sits in create_state_multi_precision's tuple (MXNet 1.9.1)
STATE_FIRST = ["SGD", "NAG", "LARS"]
MASTER_FIRST = ["Signum", "Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam", "FTML"]


def _is_master(x):
    return x is not None and not isinstance(x, tuple) and x.dtype == np.float32 and \
        np.allclose(x.asnumpy(), [1.5, 2.5])


@pytest.mark.parametrize("name", STATE_FIRST + MASTER_FIRST)
def test_multi_precision_state_order(name):
    kw = {"momentum": 0.9} if name in ("SGD", "NAG", "LARS", "Signum") else {}
    o = getattr(mx.optimizer, name)(multi_precision=True, **kw)
    w = mx.nd.array([1.5, 2.5], dtype="float16")
    s = o.create_state_multi_precision(0, w)
    assert isinstance(s, tuple) and len(s) == 2
    assert _is_master(s[1] if name in STATE_FIRST else s[0])


def test_sgd_multi_precision_update_uses_the_master():
    o = mx.optimizer.SGD(learning_rate=0.5, multi_precision=True)
    w = mx.nd.array([1.5, 2.5], dtype="float16")
    s = o.create_state_multi_precision(0, w)
    assert s[0] is None  # no momentum
    o.update_multi_precision(0, w, mx.nd.array([1, 1], dtype="float16"), s)
    assert s[1].asnumpy().tolist() == [1.0, 2.0] and w.asnumpy().tolist() == [1.0, 2.0]
