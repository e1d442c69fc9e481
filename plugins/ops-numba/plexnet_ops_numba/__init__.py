"""plexnet-ops-numba: numba-compiled CPU kernels for the memory-bound parts of the
convolutional-network operators (pooling; convolution's im2col / col2im / layout copies),
registered above ops-basic's numpy implementations and below ops-torch's."""

__version__ = "0.1.0"
