"""MXNet 1.9.1 profiler behaviours found by running MXNet's own test_profiler.py:
``dumps`` layout (domains, keys, units, ordering), custom-operator entries, creation
operator names."""
import json
from collections import OrderedDict

import pytest

import plexnet as mx
from plexnet import profiler

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _aggregating_profiler(tmp_path):
    profiler.set_config(profile_symbolic=True, profile_imperative=True, profile_memory=True, profile_api=True,
                        filename=str(tmp_path / "profile.json"), continuous_dump=False, aggregate_stats=True)
    profiler._prof.recorder.clear()
    profiler.set_state("run")
    yield
    profiler.set_state("stop")
    profiler._prof.recorder.clear()


def _stats(**kw):
    mx.nd.waitall()
    return json.loads(profiler.dumps(format="json", **kw), object_pairs_hook=OrderedDict)


def test_json_layout_and_operator_counts():
    inp = mx.nd.zeros(shape=(100, 100))
    mx.nd.sqrt(inp)
    inp = inp + 1
    inp = inp + 1
    d = _stats(reset=True)
    assert list(d) == ["Time", "Memory", "Unit"] and d["Unit"] == {"Time": "ms", "Memory": "kB"}
    ops = d["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1 and ops["_plus_scalar"]["Count"] == 2 and ops["_zeros"]["Count"] == 1
    assert list(ops["sqrt"]) == ["Count", "Total", "Min", "Max", "Avg"]
    mem = d["Memory"]["Device Storage"]["Memory: cpu/0"]
    assert list(mem) == ["Count", "Min", "Max", "Avg"] and mem["Min"] <= mem["Max"]
    assert "operator" not in _stats()["Time"]            # reset: counted afresh


@pytest.mark.parametrize("name,make", [("_zeros", lambda: mx.nd.zeros((3,))), ("_ones", lambda: mx.nd.ones((3,))),
                                       ("_full", lambda: mx.nd.full((3,), 2.5))])
def test_creation_operators_are_named_as_mxnet(name, make):
    make()
    assert name in _stats()["Time"]["operator"]


@pytest.mark.parametrize("sort_by,key", [("avg", "Avg"), ("min", "Min"), ("max", "Max"), ("count", "Count"),
                                         ("total", "Total")])
@pytest.mark.parametrize("ascending", [False, True])
def test_entries_ordered_by_sort_by(sort_by, key, ascending):
    x = mx.nd.ones((20, 20))
    for _ in range(3):
        x = x + 1
    mx.nd.sqrt(x).wait_to_read()
    d = _stats(sort_by=sort_by, ascending=ascending)
    vals = [v[key] for v in d["Time"]["operator"].values()]
    assert vals == sorted(vals, reverse=not ascending)


def test_user_ranges_grouped_as_mxnet():
    dom = profiler.Domain("MyDom")
    t = profiler.Task(dom, "mytask")
    t.start()
    t.stop()
    f = profiler.Frame(dom, "myframe")
    f.start()
    f.stop()
    e = profiler.Event("myevent")
    e.start()
    e.stop()
    time = _stats()["Time"]
    assert "mytask" in time["MyDom"] and "myframe" in time["MyDom,frame"] and "myevent" in time["event"]


def test_table_format():
    mx.nd.sqrt(mx.nd.ones((4,))).wait_to_read()
    table = profiler.dumps()
    assert table.startswith("\nProfile Statistics:\n\tNote the difference in units for different entries.\n")
    assert ("operator\n=================\nName                          Total Count        Time (ms)    "
            "Min Time (ms)    Max Time (ms)    Avg Time (ms)\n") in table
    row = next(line for line in table.splitlines() if line.startswith("sqrt "))
    assert len(row) == 30 + 11 + 17 * 4 and row[30:41].strip() == "1"


class _Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], 1.0 / (1.0 + mx.nd.exp(-in_data[0])))
        mx.nd.zeros(shape=(10, 10))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0]
        self.assign(in_grad[0], req[0], out_grad[0] * (1.0 - y) * y)


@mx.operator.register("ParitySigmoid")
class _SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(True)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shapes):
        return (in_shapes[0],), (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Sigmoid()


def test_custom_operator_entries():
    x = mx.nd.array([0, 1, 2, 3])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="ParitySigmoid")
    y.backward()
    custom = _stats()["Time"]["Custom Operator"]
    for name in ("ParitySigmoid::pure_python", "_backward_ParitySigmoid::pure_python", "ParitySigmoid::_zeros"):
        assert name in custom
    assert x.grad.shape == (4,)


def test_custom_operator_prefix_is_per_thread():
    from plexnet import engine
    with engine.op_name_prefix("Outer::"):
        pass
    mx.nd.ones((2,)).wait_to_read()
    assert "_ones" in _stats()["Time"]["operator"]


def test_no_statistics_without_aggregate_stats():
    profiler.set_config(aggregate_stats=False)
    mx.nd.ones((2,)).wait_to_read()
    assert profiler.dumps() == "" and profiler.dumps(format="json") == ""     # as MXNet 1.9.1
