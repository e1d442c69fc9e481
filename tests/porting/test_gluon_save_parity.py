"""Block.save / Block.load (MXNet 1.9.1) with children keyed by the user: load gives them back
their saved keys, as MXNet (found by porting test_gluon_save.py)."""
import numpy as np

import plexnet as mx


class _MyBlock(mx.gluon.nn.Block):
    def add(self, block):
        self._children[block.name + str(len(self._children))] = block

    def forward(self, x, *args):
        out = (x,) + args
        for block in self._children.values():
            out = block(*out)
        return out


def _net():
    inside = _MyBlock()
    inside.add(mx.gluon.nn.Dense(10))
    net = _MyBlock()
    net.add(inside)
    net.add(mx.gluon.nn.Dense(10))
    return net


def test_save_load_with_user_keyed_children(tmp_path):
    net1 = _net()
    net1.initialize()
    net1.hybridize()
    x = mx.nd.random.uniform(shape=(1, 10))
    out1 = net1(x)
    prefix = str(tmp_path / "MyModel")
    net1.save(prefix)
    net2 = _net()                      # new names: myblockN / denseN with other numbers
    assert list(net2._children) != list(net1._children)
    net2.load(prefix)
    assert list(net2._children) == list(net1._children)
    np.testing.assert_allclose(net2(x).asnumpy(), out1.asnumpy(), rtol=1e-6)
