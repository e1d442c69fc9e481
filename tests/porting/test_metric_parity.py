"""MXNet 1.9.1 metric behaviours found by running MXNet's test_metric.py (values and types
recorded with MXNet 1.9.1)."""
import numpy as np
import pytest

import plexnet as mx


def _update(m):
    m.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0.2, 0.8], [0.9, 0.1]])])
    return m


@pytest.mark.parametrize("name,kw,num_inst,num_type,value", [
    ("mcc", {}, 1.0, float, -0.5),                       # MXNet's MCC adds 1. per batch
    ("f1", {}, 1, int, 0.5),                             # F1 adds 1
    ("mcc", {"average": "micro"}, 3, np.integer, -0.5),  # micro: the example count (numpy int)
    ("f1", {"average": "micro"}, 3, np.integer, 0.5),
])
def test_binary_stats_num_inst_types(name, kw, num_inst, num_type, value):
    m = _update(mx.metric.create(name, **kw))
    assert m.num_inst == num_inst and isinstance(m.num_inst, num_type)
    assert isinstance(m.global_num_inst, num_type)
    assert m.get() == (name, pytest.approx(value)) and m.get_global() == (name, pytest.approx(value))
