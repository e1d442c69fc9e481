"""mx.contrib.tensorboard.LogMetricsCallback with a fake SummaryWriter (mxboard is optional)."""
from __future__ import annotations

import logging
import sys
import types
from collections import namedtuple

import pytest

import plexnet as mx
from plexnet.contrib import tensorboard

Param = namedtuple("Param", ["epoch", "nbatch", "eval_metric", "locals"])


class FakeWriter:
    instances: list["FakeWriter"] = []

    def __init__(self, logdir):
        self.logdir = logdir
        self.scalars = []
        FakeWriter.instances.append(self)

    def add_scalar(self, name, value, global_step=None):
        self.scalars.append((name, value, global_step))


@pytest.fixture
def fake_mxboard(monkeypatch):
    mod = types.ModuleType("mxboard")
    mod.SummaryWriter = FakeWriter
    monkeypatch.setitem(sys.modules, "mxboard", mod)
    FakeWriter.instances.clear()
    return mod


def _metric():
    m = mx.metric.create(["acc", "ce"])
    m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    return m


def test_logs_each_metric_with_prefix(fake_mxboard, tmp_path):
    cb = tensorboard.LogMetricsCallback(str(tmp_path), prefix="train")
    w = FakeWriter.instances[-1]
    assert w.logdir == str(tmp_path)
    m = _metric()
    cb(Param(epoch=3, nbatch=0, eval_metric=m, locals=None))
    names = [s[0] for s in w.scalars]
    assert names == ["train-accuracy", "train-cross-entropy"]
    assert w.scalars[0][1] == pytest.approx(1.0) and w.scalars[0][2] == 3
    assert w.scalars[1][1] == pytest.approx(-(0.0 + 0.0 + __import__("math").log(0.9) + __import__("math").log(0.8)) / 2)
    cb(Param(epoch=4, nbatch=0, eval_metric=None, locals=None))  # nothing to log
    assert len(w.scalars) == 2


def test_no_prefix(fake_mxboard, tmp_path):
    cb = tensorboard.LogMetricsCallback(str(tmp_path))
    cb(Param(epoch=0, nbatch=0, eval_metric=_metric(), locals=None))
    assert [s[0] for s in FakeWriter.instances[-1].scalars] == ["accuracy", "cross-entropy"]


def test_missing_writer_logs_how_to_install(monkeypatch, tmp_path, caplog):
    for name in tensorboard._WRITERS:
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    with caplog.at_level(logging.ERROR):
        cb = tensorboard.LogMetricsCallback(str(tmp_path))
    assert "pip install mxboard" in caplog.text
    assert cb.summary_writer is None
    cb(Param(epoch=0, nbatch=0, eval_metric=_metric(), locals=None))  # a no-op, no crash


def test_namespace():
    assert mx.contrib.tensorboard.LogMetricsCallback is tensorboard.LogMetricsCallback
    assert mx.contrib.amp.init is not None
