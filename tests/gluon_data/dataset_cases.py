"""Dataset and sampler semantics case by case, run by the MXNet fixture generator and by
the test with plexnet: every result (values, container and element types, dtypes, or the
exception type) must be MXNet 1.9.1's."""
from __future__ import annotations

from typing import Any

import numpy as np


def run_cases(mx: Any, IntervalSampler: Any) -> dict:
    """Results of every case, keyed by name, as JSON-able lists."""
    D = mx.gluon.data
    out: dict = {}

    def conv(x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [type(x).__name__] + [conv(i) for i in x]
        if isinstance(x, mx.nd.NDArray):
            return ["nd", str(x.dtype), list(x.shape), x.asnumpy().tolist()]
        if isinstance(x, np.ndarray):
            return ["np", str(x.dtype), x.tolist()]
        if isinstance(x, np.generic):
            return ["npscalar", str(x.dtype), x.item()]
        return [type(x).__name__, x]

    def rec(key: str, f: Any) -> None:
        try:
            out[key] = conv(f())
        except Exception as e:    # the exception type is part of the behaviour
            out[key] = ["EXC", type(e).__name__]

    def items(d: Any) -> list:
        return [d[j] for j in range(len(d))]

    ds = D.SimpleDataset(list(range(10)))
    for n in (1, 3, 4, 10, 11):
        for i in range(n):
            rec(f"shard{n}_{i}", lambda n=n, i=i: items(ds.shard(n, i)))
    rec("shard_bad", lambda: ds.shard(3, 3))
    rec("shard_bad0", lambda: ds.shard(0, 0))
    rec("shard_neg", lambda: ds.shard(3, -1))
    rec("take", lambda: items(ds.take(3)))
    rec("take_none", lambda: len(ds.take(None)))
    rec("take_big", lambda: len(ds.take(100)))
    rec("filter", lambda: items(ds.filter(lambda x: x % 3 == 0)))

    # lazy transform: runs on read; a filter on it reads every sample, reads run it again
    calls: list = []

    def times10(x: Any) -> Any:
        calls.append(x)
        return x * 10

    t = ds.transform(times10)
    rec("lazy_calls0", lambda: len(calls))
    rec("lazy_val", lambda: t[4])
    filtered = t.filter(lambda v: v > 50)
    rec("lazy_filter", lambda: items(filtered))
    rec("lazy_calls", lambda: len(calls))
    calls.clear()
    eager = ds.transform(times10, lazy=False)
    rec("eager_calls", lambda: len(calls))
    rec("eager_type", lambda: type(eager).__name__)
    pairs = D.SimpleDataset([(i, i * 2) for i in range(5)])
    rec("tuple_unpack", lambda: pairs.transform(lambda a, b: a + b)[3])
    rec("tfirst", lambda: pairs.transform_first(lambda a: a * 100)[3])
    rec("tfirst_single", lambda: ds.transform_first(lambda a: a * 100)[3])
    rec("tfirst_eager", lambda: pairs.transform_first(lambda a: a * 100, lazy=False)[2])

    rec("sample_bad", lambda: ds.sample([1, 2]))
    np.random.seed(3)
    rec("sample_rand", lambda: items(ds.sample(D.RandomSampler(10))))
    np.random.seed(5)
    rec("random_sampler", lambda: list(D.RandomSampler(7)))
    rec("seq", lambda: list(D.SequentialSampler(4, 3)))
    rec("filt_sampler", lambda: list(D.FilterSampler(lambda v: v > 6, ds)))

    # batches: three passes each, rollover carries the short batch into the next pass
    for mode in ("keep", "discard", "rollover", "bogus"):
        bs = D.BatchSampler(D.SequentialSampler(10), 3, mode)
        rec(f"bs_{mode}_len0", lambda bs=bs: len(bs))
        rec(f"bs_{mode}_1", lambda bs=bs: list(bs))
        rec(f"bs_{mode}_len1", lambda bs=bs: len(bs))
        rec(f"bs_{mode}_2", lambda bs=bs: list(bs))
        rec(f"bs_{mode}_3", lambda bs=bs: list(bs))
    rec("bs_bogus_even", lambda: list(D.BatchSampler(D.SequentialSampler(6), 3, "bogus")))

    rec("iv", lambda: list(IntervalSampler(13, 3)))
    rec("iv_eq", lambda: list(IntervalSampler(4, 4)))
    rec("iv_eq_norm", lambda: list(IntervalSampler(4, 4, rollover=False)))
    rec("iv_len", lambda: len(IntervalSampler(13, 3)))

    a = D.ArrayDataset(mx.nd.arange(4), np.arange(8).reshape(4, 2), [7, 8, 9, 10])
    rec("arr", lambda: a[2])
    rec("arr_single", lambda: D.ArrayDataset(mx.nd.arange(4).reshape((2, 2)))[1])
    rec("arr_single1d", lambda: D.ArrayDataset(mx.nd.arange(4))[1])
    rec("arr_bad", lambda: D.ArrayDataset([1, 2], [1]))
    rec("arr_empty", lambda: D.ArrayDataset())
    rec("arr_len", lambda: len(a))
    rec("base_get", lambda: D.Dataset()[0])
    rec("base_len", lambda: len(D.Dataset()))
    rec("sampler_base", lambda: iter(D.Sampler()))
    return out
