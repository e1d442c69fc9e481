"""MobileNet (Howard et al., arXiv:1704.04861) and MobileNetV2 (Sandler et al.,
"Inverted Residuals and Linear Bottlenecks", arXiv:1801.04381), at any width multiplier."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....context import Context, cpu
from ... import nn
from ...block import HybridBlock
from ._common import RELU6, DEFAULT_ROOT, Classifier, conv_bn, load_pretrained, variant, with_pretrained_doc  # noqa: F401 (MXNet's module has RELU6)

__all__ = ["MobileNet", "MobileNetV2", "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75",
           "mobilenet0_5", "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet",
           "get_mobilenet_v2"]

# MobileNet's separable blocks at width 1: (depthwise channels, pointwise channels, stride)
V1_BLOCKS: tuple[tuple[int, int, int], ...] = (
    (32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2),
    *[(512, 512, 1)] * 5, (512, 1024, 2), (1024, 1024, 1))
# MobileNetV2's bottleneck groups at width 1: (expansion t, channels c, repeats n, first stride s)
V2_GROUPS: tuple[tuple[int, int, int, int], ...] = (
    (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def _v2_units() -> list[tuple[int, int, int, int]]:
    """(in channels, channels, expansion, stride) of each bottleneck, at width 1."""
    units, in_channels = [], 32
    for t, c, n, s in V2_GROUPS:
        for i in range(n):
            units.append((in_channels, c, t, s if i == 0 else 1))
            in_channels = c
    return units


class LinearBottleneck(nn.HybridBlock):
    """MobileNetV2's inverted residual: 1x1 expansion by ``t``, 3x3 depthwise, linear 1x1
    projection; the input is added back when shapes allow.

    Parameters
    ----------
    in_channels : int
        Number of input channels.
    channels : int
        Number of output channels.
    t : int
        Expansion ratio.
    stride : int
        Stride of the depthwise convolution.
    """

    def __init__(self, in_channels: int, channels: int, t: int, stride: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        expanded = in_channels * t
        with self.name_scope():
            self.out = nn.HybridSequential()
            self.out.add(*conv_bn(expanded, 1, act="relu6"),
                         *conv_bn(expanded, 3, stride, 1, groups=expanded, act="relu6"),
                         *conv_bn(channels, 1, act=None))

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


class MobileNet(Classifier):
    """MobileNet from `"MobileNets: Efficient Convolutional Neural Networks for Mobile Vision
    Applications" <https://arxiv.org/abs/1704.04861>`_.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier: every layer has ``int(channels * multiplier)`` channels
        (pretrained weights exist for 0.25, 0.5, 0.75 and 1.0).
    classes : int, default 1000
        Number of classes.
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(*conv_bn(int(32 * multiplier), 3, 2, 1))
            for dw, pw, stride in V1_BLOCKS:
                dw = int(dw * multiplier)
                self.features.add(*conv_bn(dw, 3, stride, 1, groups=dw), *conv_bn(int(pw * multiplier), 1))
            self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)


class MobileNetV2(Classifier):
    """MobileNetV2 from `"Inverted Residuals and Linear Bottlenecks: Mobile Networks for
    Classification, Detection and Segmentation" <https://arxiv.org/abs/1801.04381>`_.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier: every layer has ``int(channels * multiplier)`` channels (the last
        1280 only grows, for multipliers above 1).
    classes : int, default 1000
        Number of classes.
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                self.features.add(*conv_bn(int(32 * multiplier), 3, 2, 1, act="relu6"))
                self.features.add(*(LinearBottleneck(int(i * multiplier), int(c * multiplier), t, s)
                                    for i, c, t, s in _v2_units()))
                last = int(1280 * multiplier) if multiplier > 1.0 else 1280
                self.features.add(*conv_bn(last, 1, act="relu6"), nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"), nn.Flatten())


def _width_tag(multiplier: float) -> str:
    # MXNet's file names: 1.0, 0.75, 0.5, 0.25
    tag = f"{multiplier:.2f}"
    return tag[:-1] if tag in ("1.00", "0.50") else tag


@with_pretrained_doc
def get_mobilenet(multiplier: float, pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT,
                  **kwargs: Any) -> HybridBlock:
    """MobileNet (arXiv:1704.04861) of a given width.

    Parameters
    ----------
    multiplier : float
        Width multiplier (pretrained weights: 0.25, 0.5, 0.75, 1.0).
    """
    net = MobileNet(multiplier, **kwargs)
    return load_pretrained(net, f"mobilenet{_width_tag(multiplier)}", pretrained, ctx, root)


@with_pretrained_doc
def get_mobilenet_v2(multiplier: float, pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT,
                     **kwargs: Any) -> HybridBlock:
    """MobileNetV2 (arXiv:1801.04381) of a given width.

    Parameters
    ----------
    multiplier : float
        Width multiplier (pretrained weights: 0.25, 0.5, 0.75, 1.0).
    """
    net = MobileNetV2(multiplier, **kwargs)
    return load_pretrained(net, f"mobilenetv2_{_width_tag(multiplier)}", pretrained, ctx, root)


def _variant(version: int, multiplier: float, name: str) -> Callable[..., HybridBlock]:
    if version == 1:
        return variant(get_mobilenet, multiplier, name=name,
                       doc=f'MobileNet from `"MobileNets: Efficient Convolutional Neural Networks for Mobile Vision '
                           f'Applications"\n    <https://arxiv.org/abs/1704.04861>`_, width multiplier {multiplier}.')
    return variant(get_mobilenet_v2, multiplier, name=name,
                   doc=f'MobileNetV2 from `"Inverted Residuals and Linear Bottlenecks: Mobile Networks for '
                       f'Classification,\n    Detection and Segmentation" <https://arxiv.org/abs/1801.04381>`_, '
                       f'width multiplier {multiplier}.')


mobilenet1_0 = _variant(1, 1.0, "mobilenet1_0")
mobilenet0_75 = _variant(1, 0.75, "mobilenet0_75")
mobilenet0_5 = _variant(1, 0.5, "mobilenet0_5")
mobilenet0_25 = _variant(1, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _variant(2, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _variant(2, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _variant(2, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _variant(2, 0.25, "mobilenet_v2_0_25")

# get_model's names
MODELS = {"mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75, "mobilenet0.5": mobilenet0_5,
          "mobilenet0.25": mobilenet0_25, "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
          "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25}
