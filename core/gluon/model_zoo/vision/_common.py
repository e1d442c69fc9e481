"""Pieces shared by the model-zoo families: the classifier shape every network has
(``features`` then ``output``), conv/BatchNorm/activation units, named stages, the
named-variant constructors and pretrained loading.

Parameter names are MXNet 1.9.1's, so MXNet ``.params`` files load. They come from
the order in which layers are *created* inside a name scope (``conv0``, ``conv1``, ...)
and the order in which they are *added* (``collect_params`` order, ``features.3.weight``),
so the helpers below create and add in one pass, in MXNet's order. Bad arguments raise
MXNet's exception types (AssertionError; KeyError for an unknown VGG/DenseNet depth).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ....context import Context
from ... import nn
from ...block import HybridBlock
from ..model_store import data_dir, get_model_file

__all__ = ["Classifier", "RELU6", "conv_bn", "bn_conv", "stage", "load_pretrained", "variant",
           "with_pretrained_doc", "DEFAULT_ROOT", "PRETRAINED_DOC"]

# MXNet's default, fixed at import as MXNet's is
DEFAULT_ROOT = os.path.join(data_dir(), "models")

PRETRAINED_DOC = """
    pretrained : bool, default False
        Load MXNet's pretrained weights from ``root`` (plexnet does not download them).
    ctx : Context, default CPU
        The context the pretrained weights are loaded to.
    root : str, default '$MXNET_HOME/models'
        Directory holding the pretrained weights.
    **kwargs
        Passed on to the network (``classes``, ``prefix``, ``params``, ...).

    Returns
    -------
    HybridBlock
        The network.
"""


class Classifier(HybridBlock):
    """A network made of ``self.features`` followed by ``self.output`` (every model here)."""

    features: HybridBlock
    output: HybridBlock

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)``, MobileNetV2's activation."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.clip(x, 0, 6, name="relu6")


def _activation(act: str | None) -> list[HybridBlock]:
    if act is None:
        return []
    return [RELU6() if act == "relu6" else nn.Activation(act)]


def conv_bn(channels: int, kernel: Any, stride: Any = 1, pad: Any = 0, *, groups: int = 1,
            use_bias: bool = False, in_channels: int = 0, epsilon: float = 1e-5,
            act: str | None = "relu") -> list[HybridBlock]:
    """Conv2D, BatchNorm, then ``act`` ('relu', 'relu6' or None): the post-activation unit."""
    return [nn.Conv2D(channels, kernel, stride, pad, groups=groups, use_bias=use_bias, in_channels=in_channels),
            nn.BatchNorm(epsilon=epsilon), *_activation(act)]


def bn_conv(channels: int, kernel: int, pad: int = 0) -> list[HybridBlock]:
    """BatchNorm, ReLU, then a Conv2D without bias: the pre-activation unit (DenseNet)."""
    return [nn.BatchNorm(), nn.Activation("relu"), nn.Conv2D(channels, kernel, padding=pad, use_bias=False)]


def stage(index: int, build: Callable[[], Iterable[HybridBlock]]) -> nn.HybridSequential:
    """A ``stage<index>_`` sequence whose layers ``build`` creates inside its name scope."""
    seq = nn.HybridSequential(prefix=f"stage{index}_")
    with seq.name_scope():
        seq.add(*build())
    return seq


def load_pretrained(net: HybridBlock, name: str, pretrained: bool, ctx: Context, root: str) -> HybridBlock:
    """Load MXNet's published weights of model ``name`` into ``net`` when ``pretrained``."""
    if pretrained:
        net.load_parameters(get_model_file(name, root=root), ctx=ctx)
    return net


def with_pretrained_doc(fn: Callable[..., HybridBlock]) -> Callable[..., HybridBlock]:
    """Append the shared ``pretrained, ctx, root`` entries to the parameters a ``get_*``
    function documents."""
    fn.__doc__ = (fn.__doc__ or "").rstrip() + PRETRAINED_DOC
    return fn


def variant(build: Callable[..., HybridBlock], *args: Any, name: str, doc: str,
            **fixed: Any) -> Callable[..., HybridBlock]:
    """A public constructor ``name(**kwargs)`` that calls ``build(*args, **kwargs, **fixed)``
    (``fixed`` wins, as MXNet's ``vgg11_bn`` forces ``batch_norm=True``)."""
    def make(**kwargs: Any) -> HybridBlock:
        kwargs.update(fixed)
        return build(*args, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__module__ = build.__module__
    make.__doc__ = doc.rstrip() + "\n\n    Parameters\n    ----------" + PRETRAINED_DOC
    return make

