"""``gluon.contrib.data``: the interval sampler (``gluon.data.IntervalSampler``) and the
WikiText language-model datasets (``text``, read from local files)."""
from . import sampler, text
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler", "text"]
