"""``gluon.data``: datasets, samplers, batchify functions and the DataLoader
(MXNet 1.9.1 ``mxnet.gluon.data``). See ``docs/gluon-data.md``."""
from . import batchify
from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, IntervalSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler", "SequentialSampler",
           "RandomSampler", "FilterSampler", "BatchSampler", "IntervalSampler", "DataLoader", "default_batchify_fn",
           "default_mp_batchify_fn", "batchify", "vision"]


def __getattr__(name: str):
    if name == "vision":  # imported on first use: it pulls in the image operators
        import importlib
        mod = importlib.import_module(f"{__name__}.vision")
        globals()["vision"] = mod
        return mod
    raise AttributeError(f"module 'plexnet.gluon.data' has no attribute {name!r}")
