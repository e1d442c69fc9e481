"""``mx.viz``: print_summary output identical to MXNet 1.9.1's (recorded), plot_network's
graph content, and its clear error without the optional graphviz package."""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import types

import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(60)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_frontend.json")
with open(_FIX) as _f:
    DOC = json.load(_f)["summaries"]


@pytest.fixture(autouse=True)
def _needs_ops():
    ops = registries().operators
    if any(n not in ops for n in ("Convolution", "BatchNorm", "Pooling", "FullyConnected", "SoftmaxOutput")):
        pytest.skip("needs plexnet-ops-basic")


@pytest.mark.parametrize("case", DOC, ids=lambda c: f"{len(c['json'])}-{c['shape']}")
def test_print_summary_matches_mxnet(case):
    s = mx.sym.load_json(case["json"])
    shape = {k: tuple(v) for k, v in case["shape"].items()} if case["shape"] else None
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mx.viz.print_summary(s, shape=shape, line_length=100)
    assert buf.getvalue() == case["printed"]


def _net():
    data = mx.sym.Variable("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    p = mx.sym.Pooling(mx.sym.Activation(c, act_type="relu", name="r"), kernel=(2, 2), stride=(2, 2),
                       pool_type="max", name="pool")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Flatten(p, name="f"), num_hidden=3, name="fc"),
                                name="sm")


def test_network_spec_and_plot_network(monkeypatch):
    nodes, edges = mx.viz.network_spec(_net(), shape={"data": (2, 3, 8, 8)}, dtype={"data": "float32"})
    by_name = {n: (label, attr) for n, label, attr in nodes}
    assert "conv_weight" not in by_name and by_name["data"][1]["shape"] == "oval"
    assert by_name["conv"][0] == "Convolution\n3x3/1, 4" and by_name["pool"][0] == "Pooling\nmax, 2x2/2x2"
    assert by_name["r"][0] == "Activation\nrelu" and by_name["fc"][0] == "FullyConnected\n3"
    assert ("conv", "data", {"dir": "back", "arrowtail": "open", "label": "3x8x8(float32)"}) in edges
    assert any(t == "sm" and h == "sm_label" for t, h, _ in edges)
    _, edges_all = mx.viz.network_spec(_net(), hide_weights=False)  # edges to weights, as MXNet
    assert ("conv", "conv_weight") in {(t, h) for t, h, _ in edges_all}
    # graphviz is optional: a clear error without it, a Digraph with it
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="graphviz"):
        mx.viz.plot_network(_net())
    calls = []

    class Digraph:
        def __init__(self, name, format):
            calls.append(("graph", name, format))

        def node(self, name, label, **attr):
            calls.append(("node", name))

        def edge(self, tail_name, head_name, **attr):
            calls.append(("edge", tail_name, head_name))

    monkeypatch.setitem(sys.modules, "graphviz", types.SimpleNamespace(Digraph=Digraph))
    dot = mx.visualization.plot_network(_net(), title="t", save_format="png")
    assert isinstance(dot, Digraph) and calls[0] == ("graph", "t", "png")
    assert ("edge", "fc", "f") in calls and ("node", "sm") in calls
    with pytest.raises(TypeError):
        mx.viz.print_summary("not a symbol")
