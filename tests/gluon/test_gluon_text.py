"""What Gluon prints, as MXNet 1.9.1 prints it: ``repr`` of layers (the normalisation
layers' arguments, transposed convolutions' channel mapping), of parameters (the dtype as
given: ``<class 'numpy.float32'>`` by default, ``float32`` where a layer passes the
string), parameter dicts, and ``Block.summary`` (inputs row, per-block rows in the order
the forwards finish, trainable and shared counts). Recorded by
``tests/fixtures/gluon_text/make_mxnet_gluon_text.py``."""
from __future__ import annotations

import json
import os
import runpy

import pytest

import plexnet

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gluon_text")
EXPECTED = json.load(open(os.path.join(HERE, "expected.json")))


@pytest.fixture(scope="module")
def printed() -> dict:
    return runpy.run_path(os.path.join(HERE, "make_mxnet_gluon_text.py"))["build"](plexnet)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_printed_as_mxnet(printed: dict, name: str) -> None:
    assert printed[name] == EXPECTED[name]


def test_summary_refuses_a_hybridized_block() -> None:
    net = plexnet.gluon.nn.HybridSequential()
    net.add(plexnet.gluon.nn.Dense(2, in_units=3))
    net.initialize()
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized to print summary"):
        net.summary(plexnet.nd.ones((1, 3)))
