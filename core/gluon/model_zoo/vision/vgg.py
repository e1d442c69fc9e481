"""VGG (Simonyan and Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
Recognition", arXiv:1409.1556), with or without BatchNorm."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....context import Context, cpu
from ....initializer import Xavier
from ... import nn
from ...block import HybridBlock
from ._common import DEFAULT_ROOT, Classifier, load_pretrained, variant, with_pretrained_doc

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn", "get_vgg"]

FILTERS = (64, 128, 256, 512, 512)
# depth -> 3x3 convolutions in each of the five stages (each stage ends with a 2x2 max pool)
SPEC: dict[int, tuple[int, ...]] = {11: (1, 1, 2, 2, 2), 13: (2, 2, 2, 2, 2), 16: (2, 2, 3, 3, 3),
                                    19: (2, 2, 4, 4, 4)}


def fc_head(**dense_kwargs: Any) -> list[HybridBlock]:
    """The two 4096-unit ReLU layers with dropout 0.5 of VGG and AlexNet."""
    return [layer for _ in range(2)
            for layer in (nn.Dense(4096, activation="relu", **dense_kwargs), nn.Dropout(0.5))]


class VGG(Classifier):
    """VGG from `"Very Deep Convolutional Networks for Large-Scale Image Recognition"
    <https://arxiv.org/abs/1409.1556>`_.

    Parameters
    ----------
    layers : list of int
        Number of convolutions in each stage.
    filters : list of int
        Channels of each stage (as long as ``layers``).
    classes : int, default 1000
        Number of classes.
    batch_norm : bool, default False
        BatchNorm after every convolution.
    """

    def __init__(self, layers: list[int], filters: list[int], classes: int = 1000, batch_norm: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise AssertionError(f"VGG: layers ({len(layers)}) and filters ({len(filters)}) must have one entry "
                             "per stage")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            for count, channels in zip(layers, filters):
                for _ in range(count):
                    # MXNet's initializers are part of the network (they set initialize()'s result)
                    self.features.add(nn.Conv2D(channels, 3, padding=1, bias_initializer="zeros",
                                                weight_initializer=Xavier(rnd_type="gaussian", factor_type="out",
                                                                          magnitude=2)))
                    if batch_norm:
                        self.features.add(nn.BatchNorm())
                    self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(strides=2))
            self.features.add(*fc_head(weight_initializer="normal", bias_initializer="zeros"))
            self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")


@with_pretrained_doc
def get_vgg(num_layers: int, pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT,
            **kwargs: Any) -> HybridBlock:
    """VGG of a given depth (arXiv:1409.1556); ``batch_norm=True`` adds BatchNorm.

    Parameters
    ----------
    num_layers : int
        11, 13, 16 or 19.
    """
    if num_layers not in SPEC:
        raise KeyError(f"get_vgg: invalid number of layers {num_layers}; options are {sorted(SPEC)}")
    net = VGG(list(SPEC[num_layers]), list(FILTERS), **kwargs)
    name = f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}"
    return load_pretrained(net, name, pretrained, ctx, root)


def _variant(depth: int, batch_norm: bool) -> Callable[..., HybridBlock]:
    with_bn = " with BatchNorm" if batch_norm else ""
    doc = (f'VGG-{depth}{with_bn} from `"Very Deep Convolutional Networks for Large-Scale Image Recognition"\n'
           '    <https://arxiv.org/abs/1409.1556>`_.')
    if batch_norm:
        return variant(get_vgg, depth, name=f"vgg{depth}_bn", doc=doc, batch_norm=True)
    return variant(get_vgg, depth, name=f"vgg{depth}", doc=doc)


vgg11 = _variant(11, False)
vgg13 = _variant(13, False)
vgg16 = _variant(16, False)
vgg19 = _variant(19, False)
vgg11_bn = _variant(11, True)
vgg13_bn = _variant(13, True)
vgg16_bn = _variant(16, True)
vgg19_bn = _variant(19, True)

# get_model's names
MODELS = {f.__name__: f for f in (vgg11, vgg13, vgg16, vgg19, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn)}
