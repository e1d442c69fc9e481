"""AlexNet, in the single-tower form of Krizhevsky's "One weird trick for parallelizing
convolutional neural networks" (arXiv:1404.5997)."""
from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...block import HybridBlock
from ._common import DEFAULT_ROOT, Classifier, load_pretrained, with_pretrained_doc
from .vgg import fc_head

__all__ = ["AlexNet", "alexnet"]

# the convolutions: (channels, kernel, stride, padding, followed by a 3x3/2 max pool)
CONVS = ((64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False), (256, 3, 1, 1, False),
         (256, 3, 1, 1, True))


class AlexNet(Classifier):
    """AlexNet from `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_.

    Parameters
    ----------
    classes : int, default 1000
        Number of classes.
    """

    def __init__(self, classes: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            for channels, kernel, stride, pad, pool in CONVS:
                self.features.add(nn.Conv2D(channels, kernel, stride, pad, activation="relu"))
                if pool:
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(nn.Flatten(), *fc_head())
            self.output = nn.Dense(classes)


@with_pretrained_doc
def alexnet(pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT, **kwargs: Any) -> HybridBlock:
    """AlexNet from `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_.

    Parameters
    ----------
    """
    return load_pretrained(AlexNet(**kwargs), "alexnet", pretrained, ctx, root)


# get_model's names
MODELS = {"alexnet": alexnet}
