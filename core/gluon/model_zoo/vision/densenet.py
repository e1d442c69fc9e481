"""DenseNet-BC (Huang et al., "Densely Connected Convolutional Networks",
arXiv:1608.06993)."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ....context import Context, cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent  # MXNet builds these with contrib.nn.HybridConcurrent (repr, isinstance)
from ._common import DEFAULT_ROOT, Classifier, bn_conv, load_pretrained, stage, variant, with_pretrained_doc

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]

# depth -> (channels of the stem, growth rate k, layers in each dense block)
SPEC: dict[int, tuple[int, int, tuple[int, ...]]] = {
    121: (64, 32, (6, 12, 24, 16)),
    161: (96, 48, (6, 12, 36, 24)),
    169: (64, 32, (6, 12, 32, 32)),
    201: (64, 32, (6, 12, 48, 32)),
}


def _dense_layer(growth_rate: int, bn_size: int, dropout: float) -> HybridConcurrent:
    # concat(x, new features): each layer's input is every earlier layer's output
    new = nn.HybridSequential(prefix="")
    new.add(*bn_conv(bn_size * growth_rate, 1), *bn_conv(growth_rate, 3, pad=1))
    if dropout:
        new.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(nn.Identity(), new)
    return out


def _dense_layers(count: int, growth_rate: int, bn_size: int, dropout: float) -> list[HybridConcurrent]:
    return [_dense_layer(growth_rate, bn_size, dropout) for _ in range(count)]


class DenseNet(Classifier):
    """DenseNet-BC from `"Densely Connected Convolutional Networks"
    <https://arxiv.org/pdf/1608.06993.pdf>`_.

    Parameters
    ----------
    num_init_features : int
        Channels of the first convolution.
    growth_rate : int
        Channels each dense layer adds (``k`` in the paper).
    block_config : list of int
        Number of layers in each dense block.
    bn_size : int, default 4
        The bottleneck 1x1 convolution has ``bn_size * growth_rate`` channels.
    dropout : float, default 0
        Dropout rate after each dense layer.
    classes : int, default 1000
        Number of classes.
    """

    def __init__(self, num_init_features: int, growth_rate: int, block_config: list[int], bn_size: int = 4,
                 dropout: float = 0, classes: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, 7, 2, 3, use_bias=False), nn.BatchNorm(),
                              nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
            channels = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(stage(i + 1, partial(_dense_layers, num_layers, growth_rate, bn_size, dropout)))
                channels += num_layers * growth_rate
                if i < len(block_config) - 1:    # transition: halve the channels and the resolution
                    channels //= 2
                    transition = nn.HybridSequential(prefix="")
                    transition.add(*bn_conv(channels, 1), nn.AvgPool2D(2, 2))
                    self.features.add(transition)
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(7), nn.Flatten())
            self.output = nn.Dense(classes)


@with_pretrained_doc
def get_densenet(num_layers: int, pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT,
                 **kwargs: Any) -> HybridBlock:
    """DenseNet-BC of a given depth (arXiv:1608.06993).

    Parameters
    ----------
    num_layers : int
        121, 161, 169 or 201.
    """
    if num_layers not in SPEC:
        raise KeyError(f"get_densenet: invalid number of layers {num_layers}; options are {sorted(SPEC)}")
    stem, growth_rate, blocks = SPEC[num_layers]
    net = DenseNet(stem, growth_rate, list(blocks), **kwargs)
    return load_pretrained(net, f"densenet{num_layers}", pretrained, ctx, root)


def _variant(depth: int) -> Callable[..., HybridBlock]:
    return variant(get_densenet, depth, name=f"densenet{depth}",
                   doc=f'DenseNet-BC {depth}-layer model from `"Densely Connected Convolutional Networks"\n'
                       '    <https://arxiv.org/pdf/1608.06993.pdf>`_.')


densenet121 = _variant(121)
densenet161 = _variant(161)
densenet169 = _variant(169)
densenet201 = _variant(201)

# get_model's names
MODELS = {f.__name__: f for f in (densenet121, densenet161, densenet169, densenet201)}
