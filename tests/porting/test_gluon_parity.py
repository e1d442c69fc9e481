"""MXNet 1.9.1 gluon behaviours found by running MXNet's own test_gluon.py."""
import pytest

import plexnet as mx
from plexnet import gluon
from plexnet.gluon import nn


@pytest.mark.parametrize("kw", [{"stype": "invalid"}, {"grad_stype": "invalid"}])
def test_unknown_parameter_stype_is_an_assertion_error(kw):
    with pytest.raises(AssertionError):
        gluon.Parameter("weight", shape=(10, 10), **kw)


def test_summary_refuses_hybridized_blocks(capsys):
    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.Dense(2))
    net.initialize()
    net.summary(mx.nd.ones((3, 5)))
    assert "Total params: 34" in capsys.readouterr().out
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized"):
        net.summary(mx.nd.ones((3, 5)))
