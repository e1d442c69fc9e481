"""``gluon.contrib.data.sampler`` (MXNet 1.9.1 keeps IntervalSampler here)."""
from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]
