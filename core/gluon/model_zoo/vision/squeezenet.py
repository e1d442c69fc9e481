"""SqueezeNet 1.0 (Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x fewer
parameters and <0.5MB model size", arXiv:1602.07360) and 1.1 (DeepScale's repository:
2.4x less computation, no loss of accuracy)."""
from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent  # MXNet builds these with contrib.nn.HybridConcurrent (repr, isinstance)
from ._common import DEFAULT_ROOT, Classifier, load_pretrained, variant, with_pretrained_doc

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]

POOL = "pool"
# version -> (stem channels, stem kernel), then the body: a fire module's squeeze width
# (each expand path has 4x as many channels) or a 3x3/2 max pool
SPEC: dict[str, tuple[tuple[int, int], tuple[int | str, ...]]] = {
    "1.0": ((96, 7), (16, 16, 32, POOL, 32, 48, 48, 64, POOL, 64)),
    "1.1": ((64, 3), (16, 16, POOL, 32, 32, POOL, 48, 48, 64, 64)),
}


def _conv_relu(channels: int, kernel: int, padding: int = 0) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze: int) -> nn.HybridSequential:
    # squeeze with 1x1, then concat(1x1 expand, 3x3 expand)
    out = nn.HybridSequential(prefix="")
    out.add(_conv_relu(squeeze, 1))
    expand = HybridConcurrent(axis=1, prefix="")
    expand.add(_conv_relu(4 * squeeze, 1), _conv_relu(4 * squeeze, 3, 1))
    out.add(expand)
    return out


def _max_pool() -> HybridBlock:
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(Classifier):
    """SqueezeNet from `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and
    <0.5MB model size" <https://arxiv.org/abs/1602.07360>`_ (1.0), or the 1.1 model of the
    `official repository <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_.

    Parameters
    ----------
    version : str
        '1.0' or '1.1'.
    classes : int, default 1000
        Number of classes.
    """

    def __init__(self, version: str, classes: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if version not in SPEC:
            raise AssertionError(f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 expected")
        (stem_channels, stem_kernel), body = SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(stem_channels, stem_kernel, strides=2), nn.Activation("relu"), _max_pool())
            self.features.add(*(_max_pool() if item == POOL else _fire(int(item)) for item in body))
            self.features.add(nn.Dropout(0.5))
            # a 1x1 convolution to the classes, averaged over the 13x13 map of a 224 input
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, 1), nn.Activation("relu"), nn.AvgPool2D(13), nn.Flatten())


@with_pretrained_doc
def get_squeezenet(version: str, pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT,
                   **kwargs: Any) -> HybridBlock:
    """SqueezeNet 1.0 (arXiv:1602.07360) or 1.1.

    Parameters
    ----------
    version : str
        '1.0' or '1.1'.
    """
    return load_pretrained(SqueezeNet(version, **kwargs), f"squeezenet{version}", pretrained, ctx, root)


squeezenet1_0 = variant(get_squeezenet, "1.0", name="squeezenet1_0",
                        doc='SqueezeNet 1.0 from `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters '
                            'and <0.5MB model size"\n    <https://arxiv.org/abs/1602.07360>`_.')
squeezenet1_1 = variant(get_squeezenet, "1.1", name="squeezenet1_1",
                        doc="SqueezeNet 1.1 from the `official SqueezeNet repository\n"
                            "    <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_: 2.4x less "
                            "computation than 1.0, no loss of accuracy.")

# get_model's names
MODELS = {"squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1}
