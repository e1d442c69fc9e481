"""Metric API behaviour: create(), registry, update_dict, numpy inputs, errors."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import plexnet as mx

pytestmark = pytest.mark.timeout(60)

PRED = [[0.3, 0.7], [0, 1.0], [0.4, 0.6]]
LABEL = [0, 1, 1]


def test_docstring_example():
    acc = mx.metric.Accuracy()
    acc.update(preds=[mx.nd.array(PRED)], labels=[mx.nd.array(LABEL)])
    assert acc.get() == ("accuracy", pytest.approx(2 / 3))
    assert acc.get_name_value() == [("accuracy", pytest.approx(2 / 3))]


def test_accepts_single_arrays_and_numpy():
    acc = mx.metric.Accuracy()
    acc.update(mx.nd.array(LABEL), mx.nd.array(PRED))
    acc.update(np.array(LABEL), np.array(PRED, dtype=np.float32))
    assert acc.get()[1] == pytest.approx(2 / 3)
    assert acc.num_inst == 6


@pytest.mark.parametrize("name,cls", [("acc", "Accuracy"), ("accuracy", "Accuracy"), ("ACC", "Accuracy"),
                                      ("ce", "CrossEntropy"), ("cross-entropy", None), ("mse", "MSE"),
                                      ("rmse", "RMSE"), ("mae", "MAE"), ("f1", "F1"),
                                      ("top_k_accuracy", "TopKAccuracy"), ("top_k_acc", "TopKAccuracy"),
                                      ("nll_loss", "NegativeLogLikelihood"), ("pearsonr", "PearsonCorrelation"),
                                      ("loss", "Loss"), ("composite", "CompositeEvalMetric"), ("mcc", "MCC")])
def test_create_by_name(name, cls):
    if cls is None:
        with pytest.raises(ValueError, match="not registered"):
            mx.metric.create(name)
        return
    kw = {"top_k": 3} if cls == "TopKAccuracy" else {}
    m = mx.metric.create(name, **kw)
    assert type(m).__name__ == cls


def test_create_other_forms():
    acc = mx.metric.Accuracy()
    assert mx.metric.create(acc) is acc
    comp = mx.metric.create([acc, "ce", lambda l, p: 0.0])
    assert isinstance(comp, mx.metric.CompositeEvalMetric)
    assert [type(m).__name__ for m in comp.metrics] == ["Accuracy", "CrossEntropy", "CustomMetric"]
    cfg = mx.metric.TopKAccuracy(top_k=4).get_config()
    m = mx.metric.create(cfg)
    assert isinstance(m, mx.metric.TopKAccuracy) and m.top_k == 4
    assert isinstance(mx.metric.create(json.dumps(["mse", {}])), mx.metric.MSE)
    assert isinstance(mx.metric.create('{"metric": "mae"}'), mx.metric.MAE)
    with pytest.raises(ValueError):
        mx.metric.create(acc, axis=0)


def test_register_custom_class():
    @mx.metric.register
    @mx.metric.alias("my_metric_x")
    class MyMetricX(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("mymx")

        def update(self, labels, preds):
            self._add(1.0, 1)

    assert isinstance(mx.metric.create("mymetricx"), MyMetricX)
    assert isinstance(mx.metric.create("my_metric_x"), MyMetricX)
    with pytest.raises(TypeError):
        mx.metric.register(object)


def test_update_dict_and_output_names():
    m = mx.metric.Accuracy(output_names=["b_output"], label_names=["lab"])
    preds = {"a_output": mx.nd.array([[1, 0], [1, 0], [1, 0.0]]), "b_output": mx.nd.array(PRED)}
    m.update_dict({"lab": mx.nd.array(LABEL), "other": mx.nd.array([5, 5, 5])}, preds)
    assert m.get()[1] == pytest.approx(2 / 3)
    comp = mx.metric.CompositeEvalMetric(["acc", "mse"], output_names=["b_output"], label_names=["lab"])
    comp.update_dict({"lab": mx.nd.array(LABEL)}, preds)
    names, values = comp.get()
    assert names == ["accuracy", "mse"]
    assert values[0] == pytest.approx(2 / 3)
    comp.reset()
    assert all(math.isnan(v) for v in comp.get()[1])


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="does not match"):
        mx.metric.Accuracy().update([mx.nd.array([1, 2])], [mx.nd.array(PRED), mx.nd.array(PRED)])
    with pytest.raises(ValueError):
        mx.metric.Accuracy().update([mx.nd.array([1, 0])], [mx.nd.array(PRED)])
    with pytest.raises(AssertionError, match="top_k"):  # MXNet 1.9.1 asserts
        mx.metric.TopKAccuracy(top_k=1)


def test_custom_metric_naming_and_config():
    def my_feval(label, pred):
        return 1.0
    m = mx.metric.CustomMetric(my_feval)
    assert m.name == "my_feval"
    assert mx.metric.create(lambda l, p: 1.0).name == "custom(<lambda>)"
    assert mx.metric.np(my_feval, name="zz").name == "zz"
    with pytest.raises(NotImplementedError):
        m.get_config()
    extra = mx.metric.CustomMetric(lambda l, p: 2.0, allow_extra_outputs=True)
    extra.update([mx.nd.array([1])], [mx.nd.array([1]), mx.nd.array([2])])
    assert extra.get()[1] == 2.0


def test_str_and_nan_before_update():
    m = mx.metric.MSE()
    assert math.isnan(m.get()[1])
    assert str(m).startswith("EvalMetric: {'mse'")
