"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture for Computer
Vision", arXiv:1512.00567).

Every mixed block is a table of parallel branches concatenated on channels; a branch is
an optional pool followed by conv-BN-ReLU units, and may end by splitting into two
parallel convolutions (the E blocks).
"""
from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent  # MXNet builds these with contrib.nn.HybridConcurrent (repr, isinstance)
from ._common import DEFAULT_ROOT, Classifier, conv_bn, load_pretrained, with_pretrained_doc

__all__ = ["Inception3", "inception_v3"]

# a convolution: (channels, kernel, stride, padding); kernels and paddings may be (h, w)
Conv = tuple[int, Any, int, Any]
# a branch: (pool before the convolutions: None, "avg" (3x3/1, same size) or "max" (3x3/2),
#            convolutions, the two parallel convolutions it ends with or None)
Branch = tuple[str | None, tuple[Conv, ...], tuple[Conv, Conv] | None]


def _c(channels: int, kernel: Any = 1, stride: int = 1, pad: Any = 0) -> Conv:
    return (channels, kernel, stride, pad)


def _1x7(channels: int) -> Conv:
    return _c(channels, (1, 7), 1, (0, 3))


def _7x1(channels: int) -> Conv:
    return _c(channels, (7, 1), 1, (3, 0))


_SPLIT_3x3: tuple[Conv, Conv] = (_c(384, (1, 3), 1, (0, 1)), _c(384, (3, 1), 1, (1, 0)))


def _block_a(pool_features: int) -> list[Branch]:
    return [(None, (_c(64),), None),
            (None, (_c(48), _c(64, 5, 1, 2)), None),
            (None, (_c(64), _c(96, 3, 1, 1), _c(96, 3, 1, 1)), None),
            ("avg", (_c(pool_features),), None)]


def _block_c(c7: int) -> list[Branch]:
    return [(None, (_c(192),), None),
            (None, (_c(c7), _1x7(c7), _7x1(192)), None),
            (None, (_c(c7), _7x1(c7), _1x7(c7), _7x1(c7), _1x7(192)), None),
            ("avg", (_c(192),), None)]


_BLOCK_B: list[Branch] = [(None, (_c(384, 3, 2),), None),
                          (None, (_c(64), _c(96, 3, 1, 1), _c(96, 3, 2)), None),
                          ("max", (), None)]
_BLOCK_D: list[Branch] = [(None, (_c(192), _c(320, 3, 2)), None),
                          (None, (_c(192), _1x7(192), _7x1(192), _c(192, 3, 2)), None),
                          ("max", (), None)]
_BLOCK_E: list[Branch] = [(None, (_c(320),), None),
                          (None, (_c(384),), _SPLIT_3x3),
                          (None, (_c(448), _c(384, 3, 1, 1)), _SPLIT_3x3),
                          ("avg", (_c(192),), None)]

# the stem: convolutions and 3x3/2 max pools; then the mixed blocks by name prefix
STEM: tuple[Conv | str, ...] = (_c(32, 3, 2), _c(32, 3), _c(64, 3, 1, 1), "max", _c(80), _c(192, 3), "max")
MIXED: tuple[tuple[str, list[Branch]], ...] = (
    ("A1_", _block_a(32)), ("A2_", _block_a(64)), ("A3_", _block_a(64)), ("B_", _BLOCK_B),
    ("C1_", _block_c(128)), ("C2_", _block_c(160)), ("C3_", _block_c(160)), ("C4_", _block_c(192)),
    ("D_", _BLOCK_D), ("E1_", _BLOCK_E), ("E2_", _BLOCK_E))


def _basic_conv(conv: Conv) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(*conv_bn(*conv, epsilon=0.001))
    return out


def _branch(pool: str | None, convs: tuple[Conv, ...]) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    out.add(*(_basic_conv(c) for c in convs))
    return out


def _mixed(prefix: str, branches: list[Branch]) -> HybridConcurrent:
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for pool, convs, split in branches:
            if split is None:
                out.add(_branch(pool, convs))
                continue
            head = _branch(pool, convs)
            parallel = HybridConcurrent(axis=1, prefix="")
            parallel.add(*(_branch(None, (c,)) for c in split))
            branch = nn.HybridSequential(prefix="")
            branch.add(head, parallel)
            out.add(branch)
    return out


class Inception3(Classifier):
    """Inception V3 from `"Rethinking the Inception Architecture for Computer Vision"
    <http://arxiv.org/abs/1512.00567>`_ (299x299 inputs).

    Parameters
    ----------
    classes : int, default 1000
        Number of classes.
    """

    def __init__(self, classes: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(*(nn.MaxPool2D(pool_size=3, strides=2) if isinstance(s, str) else _basic_conv(s)
                                for s in STEM))
            self.features.add(*(_mixed(prefix, branches) for prefix, branches in MIXED))
            self.features.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)


@with_pretrained_doc
def inception_v3(pretrained: bool = False, ctx: Context = cpu(), root: str = DEFAULT_ROOT,
                 **kwargs: Any) -> HybridBlock:
    """Inception V3 from `"Rethinking the Inception Architecture for Computer Vision"
    <http://arxiv.org/abs/1512.00567>`_.

    Parameters
    ----------
    """
    return load_pretrained(Inception3(**kwargs), "inceptionv3", pretrained, ctx, root)


# get_model's names
MODELS = {"inceptionv3": inception_v3}
