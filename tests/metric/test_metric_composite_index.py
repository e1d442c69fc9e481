"""``CompositeEvalMetric.get_metric`` out of range returns (MXNet 1.9.1 does not raise) a
ValueError naming the range."""
from __future__ import annotations

import plexnet as mx


def test_get_metric_out_of_range_returns_the_error() -> None:
    m = mx.metric.CompositeEvalMetric()
    m.add(mx.metric.Accuracy())
    assert isinstance(m.get_metric(0), mx.metric.Accuracy)
    r = m.get_metric(3)
    assert isinstance(r, ValueError) and str(r) == "Metric index 3 is out of range 0 and 1"
