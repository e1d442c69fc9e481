"""Metric values against Apache MXNet 1.9.1.

``EXPECTED`` was computed by running the same updates with ``import mxnet as mx`` in
the MXNet 1.9.1 venv (``/work/mxvenv``); the inputs come from ``numpy.random.RandomState(42)``,
which yields the same numbers under every numpy version.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import plexnet as mx

pytestmark = pytest.mark.timeout(60)


def _data():

    rs = np.random.RandomState(42)
    out = {}
    out["p5a"] = rs.rand(20, 5).astype("float32")
    out["l5a"] = rs.randint(0, 5, size=20).astype("float32")
    out["p5b"] = rs.rand(13, 5).astype("float32")
    out["l5b"] = rs.randint(0, 5, size=13).astype("float32")
    e = np.exp(out["p5a"] * 3); out["sm"] = (e / e.sum(1, keepdims=True)).astype("float32")
    out["p10"] = rs.rand(20, 10).astype("float32")
    out["l10"] = rs.randint(0, 10, size=20).astype("float32")
    out["r1"] = rs.randn(20).astype("float32")
    out["r2"] = rs.randn(20).astype("float32")
    out["r3a"] = rs.randn(20, 3).astype("float32")
    out["r3b"] = rs.randn(20, 3).astype("float32")
    out["pb"] = rs.rand(30, 2).astype("float32")
    out["lb"] = rs.randint(0, 2, size=30).astype("float32")
    out["pb2"] = rs.rand(17, 2).astype("float32")
    out["lb2"] = rs.randint(0, 2, size=17).astype("float32")
    out["cls"] = rs.randint(0, 5, size=20).astype("float32")
    out["pl"] = rs.randint(0, 4, size=(42,)).astype("float32")
    e = np.exp(rs.randn(42, 4)); out["pp"] = (e / e.sum(-1, keepdims=True)).astype("float32")
    return out


D = _data()

# name -> (metric name, value) from MXNet 1.9.1 (``/global``: ``get_global()``)
EXPECTED = {'acc': ['accuracy', 0.09090909090909091],
 'acc/global': ['accuracy', 0.09090909090909091],
 'acc_cls': ['accuracy', 0.2],
 'acc_cls/global': ['accuracy', 0.2],
 'acc_reset_local': [0.07692307692307693, 0.09090909090909091],
 'ce': ['cross-entropy', 1.7629150043834338],
 'ce/global': ['cross-entropy', 1.7629150043834338],
 'composite': [['accuracy', 'cross-entropy'], [0.1, 2.1965442657470704]],
 'composite/global': [['accuracy', 'cross-entropy'], [0.1, 2.1965442657470704]],
 'custom': ['custom(<lambda>)', 32.5],
 'custom/global': ['custom(<lambda>)', 32.5],
 'custom_tuple': ['tup', 0.09090909090909091],
 'custom_tuple/global': ['tup', 0.09090909090909091],
 'f1': ['f1', 0.42315789473684207],
 'f1/global': ['f1', 0.42315789473684207],
 'f1_micro': ['f1', 0.40909090909090917],
 'f1_micro/global': ['f1', 0.40909090909090917],
 'loss': ['loss', -0.045304760336875916],
 'loss/global': ['loss', -0.045304760336875916],
 'mae': ['mae', 1.2489384412765503],
 'mae/global': ['mae', 1.2489384412765503],
 'mcc': ['mcc', -0.11760001607085163],
 'mcc/global': ['mcc', -0.11760001607085163],
 'mcc_micro': ['mcc', -0.10929124924699353],
 'mcc_micro/global': ['mcc', -0.10929124924699353],
 'mse': ['mse', 2.585276484489441],
 'mse/global': ['mse', 2.585276484489441],
 'multi_acc': ['accuracy', 0.09090909090909091],
 'multi_acc/global': ['accuracy', 0.09090909090909091],
 'nll': ['nll-loss', 2.1965442657470704],
 'nll/global': ['nll-loss', 2.1965442657470704],
 'pcc': ['pcc', -0.1273867296879096],
 'pcc/global': ['pcc', -0.1273867296879096],
 'pearson': ['pearsonr', -0.2182228284875379],
 'pearson/global': ['pearsonr', -0.2182228284875379],
 'pearson_micro': ['pearsonr', -0.18200313020116865],
 'pearson_micro/global': ['pearsonr', 0.0],
 'perp': ['perplexity', 8.993879277932805],
 'perp/global': ['perplexity', 8.993879277932805],
 'perp_ign': ['perplexity', 5.593026879922559],
 'perp_ign/global': ['perplexity', 5.593026879922559],
 'rmse': ['rmse', 1.6077943444252014],
 'rmse/global': ['rmse', 1.6077943444252014],
 'top3': ['top_k_accuracy_3', 0.1],
 'top3/global': ['top_k_accuracy_3', 0.1],
 'top_k_acc5': ['top_k_accuracy_5', 0.7],
 'top_k_acc5/global': ['top_k_accuracy_5', 0.7]}


def A(k):
    return mx.nd.array(D[k])


def tup(label, pred):
    return (int((pred.argmax(1) == label).sum()), len(label))


CASES = {
    "acc": (lambda: mx.metric.Accuracy(), [("l5a", "p5a"), ("l5b", "p5b")]),
    "acc_cls": (lambda: mx.metric.create("acc"), [("l5a", "cls")]),
    "top3": (lambda: mx.metric.create("top_k_accuracy", top_k=3), [("l10", "p10")]),
    "top_k_acc5": (lambda: mx.metric.TopKAccuracy(top_k=5), [("l10", "p10"), ("l5a", "p5a")]),
    "ce": (lambda: mx.metric.create("ce"), [("l5a", "sm"), ("l5b", "p5b")]),
    "nll": (lambda: mx.metric.NegativeLogLikelihood(), [("l5a", "sm")]),
    "mse": (lambda: mx.metric.MSE(), [("r1", "r2"), ("r3a", "r3b")]),
    "mae": (lambda: mx.metric.MAE(), [("r1", "r2"), ("r3a", "r3b")]),
    "rmse": (lambda: mx.metric.RMSE(), [("r1", "r2"), ("r3a", "r3b")]),
    "f1": (lambda: mx.metric.F1(), [("lb", "pb"), ("lb2", "pb2")]),
    "f1_micro": (lambda: mx.metric.F1(average="micro"), [("lb", "pb"), ("lb2", "pb2")]),
    "mcc": (lambda: mx.metric.MCC(), [("lb", "pb"), ("lb2", "pb2")]),
    "mcc_micro": (lambda: mx.metric.MCC(average="micro"), [("lb", "pb"), ("lb2", "pb2")]),
    "pcc": (lambda: mx.metric.PCC(), [("l5a", "p5a"), ("l5b", "p5b")]),
    "perp": (lambda: mx.metric.Perplexity(ignore_label=None), [("l5a", "sm")]),
    "perp_ign": (lambda: mx.metric.Perplexity(ignore_label=0), [("l5a", "sm"), ("pl", "pp")]),
    "pearson": (lambda: mx.metric.PearsonCorrelation(), [("r1", "r2"), ("r3a", "r3b")]),
    "pearson_micro": (lambda: mx.metric.PearsonCorrelation(average="micro"), [("r1", "r2"), ("r3a", "r3b")]),
    "loss": (lambda: mx.metric.Loss(), [("r1", "r2"), ("r3a", "r3b")]),
    "composite": (lambda: mx.metric.create(["acc", "ce"]), [("l5a", "sm")]),
    "custom": (lambda: mx.metric.create(lambda l, p: float(np.abs(l - p.argmax(1)).sum())),
               [("l5a", "p5a"), ("l5b", "p5b")]),
    "custom_tuple": (lambda: mx.metric.np(tup), [("l5a", "p5a"), ("l5b", "p5b")]),
    "multi_acc": (lambda: mx.metric.Accuracy(), [(["l5a", "l5b"], ["p5a", "p5b"])]),
}


def _close(a, b, rel):
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y, rel) for x, y in zip(a, b))
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.mark.parametrize("key", sorted(CASES))
def test_metric_matches_mxnet(key):
    make, batches = CASES[key]
    m = make()
    for l, p in batches:
        labels = [A(l)] if isinstance(l, str) else [A(x) for x in l]
        preds = [A(p)] if isinstance(p, str) else [A(x) for x in p]
        m.update(labels, preds)
    # identical to MXNet's figures; Loss sums in float32 with a different summation order
    # than MXNet's reduce kernel (one ulp of the batch sum)
    rel = 1e-6 if key == "loss" else 1e-12
    for suffix, got in (("", m.get()), ("/global", m.get_global())):
        name, value = EXPECTED[key + suffix]
        assert got[0] == name
        assert _close(got[1], value, rel), (key + suffix, got[1], value)


def test_reset_local_keeps_global():
    m = mx.metric.Accuracy()
    m.update([A("l5a")], [A("p5a")])
    m.reset_local()
    m.update([A("l5b")], [A("p5b")])
    assert math.isclose(m.get()[1], EXPECTED["acc_reset_local"][0])
    assert math.isclose(m.get()[1], 1 / 13)
    assert math.isclose(m.get_global()[1], EXPECTED["acc"][1])
    m.reset()
    assert math.isnan(m.get()[1]) and math.isnan(m.get_global()[1])
