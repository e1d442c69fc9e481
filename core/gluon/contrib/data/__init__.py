"""``gluon.contrib.data``: the interval sampler (``gluon.data.IntervalSampler``)."""
from . import sampler
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler"]
