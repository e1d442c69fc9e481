"""``gluon.nn``: neural network layers (MXNet 1.x ``mxnet.gluon.nn``)."""
from __future__ import annotations

from ..block import Block, HybridBlock
from ..symbol_block import SymbolBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, SiLU, Swish
from .basic_layers import (BatchNorm, BatchNormReLU, Concatenate, Dense, Dropout, Embedding, Flatten, GroupNorm,
                           HybridConcatenate, HybridLambda, HybridSequential, Identity, InstanceNorm, Lambda,
                           LayerNorm, Sequential, SyncBatchNorm)
from .conv_layers import (AvgPool1D, AvgPool2D, AvgPool3D, Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose,
                          Conv3D, Conv3DTranspose, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D,
                          GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, MaxPool1D, MaxPool2D, MaxPool3D,
                          ReflectionPad2D)

from . import activations, basic_layers, conv_layers  # noqa: E402,F401  (MXNet exposes the modules)

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU",
           "SiLU", "Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm", "BatchNormReLU",
           "SyncBatchNorm", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda", "HybridLambda",
           "Concatenate", "HybridConcatenate", "Identity", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose",
           "Conv2DTranspose", "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D",
           "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]
