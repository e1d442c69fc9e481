"""gluon.contrib.estimator beyond the MXNet fixture: the dispatch rules, loop invariants
(hypothesis) and the checkpoint fixes where plexnet differs from MXNet 1.9.1 on purpose."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx
from plexnet.gluon.contrib.estimator import (BatchEnd, BatchProcessor, CheckpointHandler, Estimator, EpochEnd,
                                             GradientUpdateHandler, MetricHandler, TrainBegin, event_handler)
from plexnet.gluon.contrib.estimator.events import Dispatcher, _check_event_handlers

pytest.importorskip("plexnet_ops_basic", reason="needs an operator plugin (pip install plexnet-ops-basic)")
pytestmark = pytest.mark.timeout(120)


def _loader(n: int, batch: int = 4) -> mx.gluon.data.DataLoader:
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    ds = mx.gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(np.zeros(n, np.float32)))
    return mx.gluon.data.DataLoader(ds, batch_size=batch)


def _estimator(**kw) -> Estimator:
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    return Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, context=mx.cpu(), **kw)


class _Counter(TrainBegin, BatchEnd, EpochEnd):
    def __init__(self, answer: bool = False):
        self.batches = self.epochs = 0
        self.answer = answer

    def train_begin(self, estimator, *args, **kwargs):
        self.batches = self.epochs = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.batches += 1
        return self.answer

    def epoch_end(self, estimator, *args, **kwargs):
        self.epochs += 1
        return self.answer


def test_dispatch_calls_every_subscriber_even_after_a_stop():
    first, second = _Counter(answer=True), _Counter()
    events = Dispatcher([first, second])
    assert events.fire("batch_end", None) is True
    assert (first.batches, second.batches) == (1, 1)
    assert events.fire("train_end", None) is False       # nobody subscribes
    assert [len(g) for g in events.groups()] == [2, 0, 0, 2, 2, 0]


def test_handlers_sorted_stably_by_priority_and_tuples_accepted():
    est = _estimator()
    est.fit(_loader(8), epochs=1)
    user = (MetricHandler(est.train_metrics, priority=5), GradientUpdateHandler(priority=5))
    handlers = est._prepare_default_handlers(None, user)   # MXNet 1.9.1 fails on a tuple
    kinds = [type(h).__name__ for h in handlers]
    assert kinds == ["StoppingHandler", "MetricHandler", "GradientUpdateHandler", "LoggingHandler"]
    with pytest.raises(ValueError, match="EventHandler"):
        _check_event_handlers([object()])


class _NoCompute(BatchProcessor):
    """A batch step without a network: the loop's bookkeeping only."""

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        return [train_batch[0]], [train_batch[1]], [train_batch[0]], [train_batch[1]]


class _NoUpdate(GradientUpdateHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return None


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 13), batches=st.integers(1, 9), epochs=st.integers(1, 3), by_epochs=st.booleans())
def test_fit_runs_exactly_the_requested_iterations(n, batches, epochs, by_epochs):
    est = _estimator(batch_processor=_NoCompute())
    est.logger.disabled = True
    counter = _Counter()
    handlers = [counter, _NoUpdate(), MetricHandler([])]
    per_epoch = -(-n // 4)
    if by_epochs:
        est.fit(_loader(n), epochs=epochs, event_handlers=handlers)
        assert (counter.epochs, counter.batches) == (epochs, epochs * per_epoch)
    else:
        est.fit(_loader(n), batches=batches, event_handlers=handlers)
        # an epoch cut short still ends with its epoch_end
        assert (counter.batches, counter.epochs) == (batches, -(-batches // per_epoch))


def test_rotation_keeps_a_newer_checkpoint_sharing_the_old_prefix(tmp_path):
    # MXNet 1.9.1 deletes every file starting with the oldest prefix: removing
    # "m-epoch0batch1" also removed the just-written "m-epoch0batch10"
    est = _estimator()
    ck = CheckpointHandler(str(tmp_path), model_prefix="m", epoch_period=None, batch_period=1, max_checkpoints=9)
    est.fit(_loader(44), batches=11, event_handlers=[ck])
    names = sorted(f[:-7] for f in os.listdir(tmp_path) if f.endswith(".params"))
    assert names == sorted("m-epoch0batch%d" % b for b in range(2, 11))
    assert ck.saved_checkpoints == ["m-epoch0batch%d" % b for b in range(2, 11)]


def test_prefix_with_best_is_rotated_and_prefix_with_epoch_resumes(tmp_path):
    # MXNet 1.9.1 never rotates a prefix containing 'best' and cannot parse one containing 'epoch'
    est = _estimator()
    est.fit(_loader(8), epochs=3, event_handlers=[CheckpointHandler(str(tmp_path), model_prefix="best_epoch",
                                                                    max_checkpoints=1)])
    assert sorted(os.listdir(tmp_path)) == ["best_epoch-epoch2batch6.params", "best_epoch-epoch2batch6.states"]
    ck = CheckpointHandler(str(tmp_path), model_prefix="best_epoch", resume_from_checkpoint=True)
    est.fit(_loader(8), epochs=5, event_handlers=[ck])
    assert (ck.trained_epoch, ck.trained_batch, est.max_epoch) == (2, 6, 2)
    assert "best_epoch-epoch4batch10.params" in os.listdir(tmp_path)


def test_unparsable_checkpoint_name_is_refused(tmp_path):
    (tmp_path / "model-epochXbatch1.params").write_bytes(b"")
    with pytest.raises(ValueError, match="Error parsing checkpoint file"):
        _estimator().fit(_loader(8), epochs=2, event_handlers=[
            CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])


def test_module_names_importable_as_in_mxnet():
    assert set(event_handler.__all__) <= set(dir(event_handler))
    assert event_handler.EventHandler is not None and callable(event_handler._check_event_handlers)
