"""DataDesc / DataBatch / DataIter / ResizeIter, partitioning, and iterator plugins."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plexnet
from plexnet.io import DataBatch, DataDesc, DataIter, NDArrayIter, ResizeIter
from plexnet.io.batching import BatchPlanner
from plexnet.io.partition import partition_indices, partition_range


def test_datadesc_is_mxnet_compatible():
    d = DataDesc("data", (2, 3), np.float16, "NTC")
    name, shape = d  # a (name, shape) namedtuple, as in MXNet
    assert (name, shape) == ("data", (2, 3))
    assert d.dtype is np.float16 and d.layout == "NTC"
    assert d == ("data", (2, 3))
    assert repr(d) == "DataDesc[data,(2, 3),<class 'numpy.float16'>,NTC]"
    assert DataDesc("x", [1]).dtype is np.float32 and DataDesc("x", [1]).layout == "NCHW"
    assert DataDesc.get_batch_axis("NTC") == 0 and DataDesc.get_batch_axis("TNC") == 1
    assert DataDesc.get_batch_axis(None) == 0 and DataDesc.get_batch_axis("TC") == -1
    lst = DataDesc.get_list([("a", (1, 2)), ("b", (3,))], [("a", np.int32), ("b", np.float64)])
    assert [x.dtype for x in lst] == [np.int32, np.float64]
    d2 = pickle.loads(pickle.dumps(d))
    assert d2 == d and d2.layout == "NTC" and d2.dtype is np.float16


def test_databatch():
    b = DataBatch([np.zeros((2, 3))], [np.zeros(2)], pad=1, index=np.arange(2))
    assert "data shapes: [(2, 3)]" in str(b)
    with pytest.raises(TypeError, match="list"):
        DataBatch(np.zeros(3))
    with pytest.raises(TypeError, match="list"):
        DataBatch([np.zeros(3)], label=np.zeros(3))


class Counter(DataIter):
    """The minimal protocol: iter_next + getters."""

    def __init__(self, n):
        super().__init__(batch_size=1)
        self.n, self.i = n, 0

    def reset(self):
        self.i = 0

    def iter_next(self):
        self.i += 1
        return self.i <= self.n

    def getdata(self):
        return [np.array([self.i])]

    def getlabel(self):
        return []

    @property
    def provide_data(self):
        return [DataDesc("data", (1,))]

    @property
    def provide_label(self):
        return []


def test_dataiter_protocol_and_resize_iter():
    it = Counter(3)
    assert [int(b.data[0][0]) for b in it] == [1, 2, 3]
    r = ResizeIter(Counter(3), 5)
    assert [int(b.data[0][0]) for b in r] == [1, 2, 3, 1, 2]
    r.reset()
    assert len(list(r)) == 5
    assert r.provide_data == [DataDesc("data", (1,))]
    with pytest.raises(NotImplementedError):
        DataIter().next()


@given(st.integers(0, 500), st.integers(1, 40))
def test_partition_covers_exactly_once(n, parts):
    got = np.concatenate([partition_indices(n, parts, k) for k in range(parts)])
    np.testing.assert_array_equal(got, np.arange(n))
    sizes = [np.subtract(*partition_range(n, parts, k)[::-1]) for k in range(parts)]
    assert max(sizes) - min(sizes) <= 1


def test_partition_validation():
    with pytest.raises(ValueError, match="num_parts"):
        partition_range(10, 0, 0)
    with pytest.raises(ValueError, match="part_index"):
        partition_range(10, 2, 2)
    with pytest.raises(ValueError, match="part_index"):
        partition_range(10, 2, -1)


@given(st.integers(1, 30), st.integers(1, 12), st.sampled_from(["round", "pad", "discard"]),
       st.booleans(), st.integers(1, 4))
def test_planner_invariants(n, bs, mode, shuffle, epochs):
    p = BatchPlanner(n, bs, last_batch=mode, shuffle=shuffle, seed=3)
    real, consumed = [], []
    for _ in range(epochs):
        while (plan := p.next_plan()) is not None:
            assert len(plan.positions) == bs
            assert 0 <= plan.pad < bs
            assert mode != "discard" or plan.pad == 0
            real.append(plan.positions[:bs - plan.pad])
            consumed.append(plan.positions)
        p.reset()
    if mode == "round":
        # one continuous walk over successive passes: every full stretch of n
        # examples is a permutation, the wrapped (pad) examples are not repeated
        walk = np.concatenate(consumed)
        for k in range(len(walk) // n):
            assert sorted(walk[k * n:(k + 1) * n].tolist()) == list(range(n))
        if not shuffle:
            np.testing.assert_array_equal(walk, np.resize(np.arange(n), len(walk)))
    elif mode == "pad":
        assert sorted(np.concatenate(real).tolist()) == sorted(list(range(n)) * epochs)
    else:
        seen = np.concatenate(real) if real else np.array([], int)
        assert len(seen) == (n // bs) * bs * epochs


def test_planner_state_restore_replays():
    p = BatchPlanner(20, 3, shuffle=True, seed=1)
    p.next_plan()
    st = p.state()
    a = [p.next_plan().positions.tolist() for _ in range(3)]
    p.restore(st)
    assert [p.next_plan().positions.tolist() for _ in range(3)] == a


# -- plugins ------------------------------------------------------------------------------------

def test_third_party_iterator_resolves_as_plexnet_io_attribute():
    from plexnet import hookimpl
    from plexnet.plugins import PlexnetPluginManager, get_manager, set_manager

    class MyIter(NDArrayIter):
        pass

    class Plugin:
        @hookimpl
        def plexnet_register_data_iters(self, register):
            register("MyFancyIter", MyIter)

    old = get_manager()
    m = PlexnetPluginManager(entry_points=False)
    m.add_plugin(Plugin(), "fancy")
    set_manager(m)
    try:
        assert plexnet.io.MyFancyIter is MyIter
        assert "MyFancyIter" in plexnet.io.list_data_iters()
        assert "MyFancyIter" in dir(plexnet.io)
        assert m.registries.data_iters.owner("MyFancyIter") == "fancy"
        assert m.registries.data_iters.owner("NDArrayIter") == "io:builtin"
        with pytest.raises(AttributeError, match="NoSuchIter.*registered data iterators"):
            plexnet.io.NoSuchIter  # noqa: B018
    finally:
        set_manager(old)


def test_builtin_plugin_registers_every_iterator():
    from plexnet.plugins import PlexnetPluginManager
    m = PlexnetPluginManager(entry_points=False).load()
    rec = m.records["io:builtin"]
    assert rec.status == "ok"
    assert set(rec.registered["data_iters"]) >= {"NDArrayIter", "CSVIter", "MNISTIter", "ImageRecordIter",
                                                 "PrefetchingIter"}
