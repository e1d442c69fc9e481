"""``gluon.contrib.cnn``: deformable convolutions (ops-contrib's operators)."""
from . import conv_layers
from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution", "conv_layers"]
