"""plexnet-ops-torch: PyTorch (ATen, oneDNN) implementations of the convolutional-network
operators for ``cpu`` contexts, registered above ops-basic's numpy ones."""

__version__ = "0.1.0"
