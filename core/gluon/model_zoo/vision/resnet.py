"""ResNet V1 (He et al., "Deep Residual Learning for Image Recognition", arXiv:1512.03385)
and V2 (pre-activation, "Identity Mappings in Deep Residual Networks", arXiv:1603.05027).

One table gives every depth; the four residual units differ only in their list of
convolutions, so two base classes (post- and pre-activation) build them all.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....context import Context, cpu
from ... import nn
from ...block import HybridBlock
from ._common import DEFAULT_ROOT, Classifier, load_pretrained, stage, variant, with_pretrained_doc

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2",
           "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2", "get_resnet"]

# depth -> (residual unit, units per stage, channels of the stem then of each stage)
SPEC: dict[int, tuple[str, tuple[int, ...], tuple[int, ...]]] = {
    18: ("basic", (2, 2, 2, 2), (64, 64, 128, 256, 512)),
    34: ("basic", (3, 4, 6, 3), (64, 64, 128, 256, 512)),
    50: ("bottleneck", (3, 4, 6, 3), (64, 256, 512, 1024, 2048)),
    101: ("bottleneck", (3, 4, 23, 3), (64, 256, 512, 1024, 2048)),
    152: ("bottleneck", (3, 8, 36, 3), (64, 256, 512, 1024, 2048)),
}

# a convolution of a residual unit: (channels, kernel, stride, in_channels, use_bias);
# padding is kernel // 2
ConvSpec = tuple[int, int, int, int, bool]


def _conv(channels: int, kernel: int, stride: int, in_channels: int = 0, use_bias: bool = False) -> nn.Conv2D:
    return nn.Conv2D(channels, kernel, stride, kernel // 2, use_bias=use_bias, in_channels=in_channels)


def _basic_convs(channels: int, stride: int, in_channels: int) -> list[ConvSpec]:
    return [(channels, 3, stride, in_channels, False), (channels, 3, 1, channels, False)]


class _Residual(HybridBlock):
    """A residual unit. Its layers are created without a name scope of its own, as in
    MXNet: inside a network they are named after the enclosing stage."""

    @staticmethod
    def _convs(channels: int, stride: int, in_channels: int) -> list[ConvSpec]:
        raise TypeError("_Residual is abstract: use BasicBlockV1/V2 or BottleneckV1/V2")


class _ResidualV1(_Residual):
    # V1: relu(body(x) + shortcut(x)), body = conv-BN-relu ... conv-BN
    _shortcut_first = False    # operand order of the sum in MXNet's graph

    def __init__(self, channels: int, stride: int, downsample: bool = False, in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        convs = self._convs(channels, stride, in_channels)
        self.body = nn.HybridSequential(prefix="")
        for i, spec in enumerate(convs):
            self.body.add(_conv(*spec), nn.BatchNorm())
            if i < len(convs) - 1:
                self.body.add(nn.Activation("relu"))
        self.downsample: nn.HybridSequential | None = None
        if downsample:
            self.downsample = nn.HybridSequential(prefix="")
            self.downsample.add(_conv(channels, 1, stride, in_channels), nn.BatchNorm())

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        body = self.body(x)
        shortcut = x if self.downsample is None else self.downsample(x)
        return F.Activation(shortcut + body if self._shortcut_first else body + shortcut, act_type="relu")


class _ResidualV2(_Residual):
    # V2: x + convN(relu(bnN(... conv1(relu(bn1(x)))))), the shortcut taken after relu(bn1(x))
    def __init__(self, channels: int, stride: int, downsample: bool = False, in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        convs = self._convs(channels, stride, in_channels)
        for i, spec in enumerate(convs, 1):
            setattr(self, f"bn{i}", nn.BatchNorm())
            setattr(self, f"conv{i}", _conv(*spec))
        self._units = [(getattr(self, f"bn{i}"), getattr(self, f"conv{i}")) for i in range(1, len(convs) + 1)]
        self.downsample = _conv(channels, 1, stride, in_channels) if downsample else None

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        shortcut = x
        for i, (bn, conv) in enumerate(self._units):
            x = F.Activation(bn(x), act_type="relu")
            if i == 0 and self.downsample is not None:
                shortcut = self.downsample(x)
            x = conv(x)
        return x + shortcut


_UNIT_DOC = """{title} from `"{paper}" <{url}>`_, used by ResNet {version} {depths}.

    Parameters
    ----------
    channels : int
        Number of output channels.
    stride : int
        Stride of the unit.
    downsample : bool, default False
        Whether the shortcut is a strided 1x1 convolution (else the identity).
    in_channels : int, default 0
        Number of input channels; 0 infers it from the first input.
    """
_V1_PAPER = ("Deep Residual Learning for Image Recognition", "http://arxiv.org/abs/1512.03385")
_V2_PAPER = ("Identity Mappings in Deep Residual Networks", "https://arxiv.org/abs/1603.05027")


class BasicBlockV1(_ResidualV1):
    __doc__ = _UNIT_DOC.format(title="Basic block V1", paper=_V1_PAPER[0], url=_V1_PAPER[1], version="V1",
                               depths="18 and 34")
    _shortcut_first = True
    _convs = staticmethod(_basic_convs)


class BottleneckV1(_ResidualV1):
    __doc__ = _UNIT_DOC.format(title="Bottleneck V1", paper=_V1_PAPER[0], url=_V1_PAPER[1], version="V1",
                               depths="50, 101 and 152")

    @staticmethod
    def _convs(channels: int, stride: int, in_channels: int) -> list[ConvSpec]:
        # V1 strides in the first 1x1, whose convolutions keep their bias (MXNet's weights have it)
        mid = channels // 4
        return [(mid, 1, stride, 0, True), (mid, 3, 1, mid, False), (channels, 1, 1, 0, True)]


class BasicBlockV2(_ResidualV2):
    __doc__ = _UNIT_DOC.format(title="Basic block V2", paper=_V2_PAPER[0], url=_V2_PAPER[1], version="V2",
                               depths="18 and 34")
    _convs = staticmethod(_basic_convs)


class BottleneckV2(_ResidualV2):
    __doc__ = _UNIT_DOC.format(title="Bottleneck V2", paper=_V2_PAPER[0], url=_V2_PAPER[1], version="V2",
                               depths="50, 101 and 152")

    @staticmethod
    def _convs(channels: int, stride: int, in_channels: int) -> list[ConvSpec]:
        mid = channels // 4
        return [(mid, 1, 1, 0, False), (mid, 3, stride, mid, False), (channels, 1, 1, 0, False)]


class _ResNet(Classifier):
    _preact = False

    def __init__(self, block: Callable[..., HybridBlock], layers: list[int], channels: list[int], classes: int = 1000,
                 thumbnail: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise AssertionError(f"{type(self).__name__}: channels ({len(channels)}) must be one longer than "
                             f"layers ({len(layers)}): the stem's then each stage's")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if self._preact:    # V2 normalises the raw input
                self.features.add(nn.BatchNorm(scale=False, center=False))
            if thumbnail:       # small inputs (CIFAR): one 3x3 convolution, no pooling
                self.features.add(_conv(channels[0], 3, 1))
            else:
                self.features.add(_conv(channels[0], 7, 2), nn.BatchNorm(), nn.Activation("relu"),
                                  nn.MaxPool2D(3, 2, 1))
            for i, units in enumerate(layers):
                self.features.add(self._make_layer(block, units, channels[i + 1], 1 if i == 0 else 2, i + 1,
                                                   in_channels=channels[i]))
            if self._preact:
                self.features.add(nn.BatchNorm(), nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            if self._preact:
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def _make_layer(self, block: Callable[..., HybridBlock], layers: int, channels: int, stride: int, stage_index: int,
                    in_channels: int = 0) -> nn.HybridSequential:
        """Stage ``stage_index``: ``layers`` units, the first one strided and projecting
        its shortcut when the channels change."""
        return stage(stage_index, lambda: [
            block(channels, stride, channels != in_channels, in_channels=in_channels, prefix=""),
            *(block(channels, 1, False, in_channels=channels, prefix="") for _ in range(layers - 1))])


_NET_DOC = """ResNet {version} from `"{paper}" <{url}>`_.

    Parameters
    ----------
    block : type of HybridBlock
        The residual unit: {blocks}.
    layers : list of int
        Number of units in each stage.
    channels : list of int
        Channels of the stem, then of each stage (one longer than ``layers``).
    classes : int, default 1000
        Number of classes.
    thumbnail : bool, default False
        A 3x3 stem without pooling, for small images.
    """


class ResNetV1(_ResNet):
    __doc__ = _NET_DOC.format(version="V1", paper=_V1_PAPER[0], url=_V1_PAPER[1],
                              blocks="BasicBlockV1 or BottleneckV1")


class ResNetV2(_ResNet):
    __doc__ = _NET_DOC.format(version="V2", paper=_V2_PAPER[0], url=_V2_PAPER[1],
                              blocks="BasicBlockV2 or BottleneckV2")
    _preact = True


# version -> (network, unit of each kind)
_FAMILY: dict[int, tuple[type[_ResNet], dict[str, type[_Residual]]]] = {
    1: (ResNetV1, {"basic": BasicBlockV1, "bottleneck": BottleneckV1}),
    2: (ResNetV2, {"basic": BasicBlockV2, "bottleneck": BottleneckV2}),
}


@with_pretrained_doc
def get_resnet(version: int, num_layers: int, pretrained: bool = False, ctx: Context = cpu(),
               root: str = DEFAULT_ROOT, **kwargs: Any) -> HybridBlock:
    """ResNet V1 (arXiv:1512.03385) or V2 (arXiv:1603.05027) of a given depth.

    Parameters
    ----------
    version : int
        1 or 2.
    num_layers : int
        18, 34, 50, 101 or 152.
    """
    if num_layers not in SPEC:
        raise AssertionError(f"get_resnet: invalid number of layers {num_layers}; options are {sorted(SPEC)}")
    if version not in _FAMILY:
        raise AssertionError(f"get_resnet: invalid resnet version {version}; options are 1 and 2")
    unit, layers, channels = SPEC[num_layers]
    net_class, units = _FAMILY[version]
    net = net_class(units[unit], list(layers), list(channels), **kwargs)
    return load_pretrained(net, f"resnet{num_layers}_v{version}", pretrained, ctx, root)


def _variant(version: int, depth: int) -> Callable[..., HybridBlock]:
    paper = _V1_PAPER if version == 1 else _V2_PAPER
    return variant(get_resnet, version, depth, name=f"resnet{depth}_v{version}",
                   doc=f'ResNet-{depth} V{version} from `"{paper[0]}" <{paper[1]}>`_.\n')


resnet18_v1 = _variant(1, 18)
resnet34_v1 = _variant(1, 34)
resnet50_v1 = _variant(1, 50)
resnet101_v1 = _variant(1, 101)
resnet152_v1 = _variant(1, 152)
resnet18_v2 = _variant(2, 18)
resnet34_v2 = _variant(2, 34)
resnet50_v2 = _variant(2, 50)
resnet101_v2 = _variant(2, 101)
resnet152_v2 = _variant(2, 152)

# get_model's names
MODELS = {f.__name__: f for f in (resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1,
                                  resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2)}
