"""gluon.contrib.estimator (MXNet 1.9.1's Estimator, event handlers, BatchProcessor; missing
before, found by porting test_gluon_estimator / _event_handler / _batch_processor)."""
import os
import re
import warnings

import numpy as np
import pytest

import plexnet as mx
from plexnet import gluon
from plexnet.gluon import nn
from plexnet.gluon.contrib.estimator import (BatchProcessor, CheckpointHandler, EarlyStoppingHandler, Estimator,
                                             GradientUpdateHandler, LoggingHandler, MetricHandler, StoppingHandler,
                                             ValidationHandler)


def _data(n=32, batch=8):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (n, 5)).astype(np.float32)
    y = (x[:, :1] * 2 - x[:, 1:2]).astype(np.float32)
    ds = gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y))
    return gluon.data.DataLoader(ds, batch_size=batch)


def _est(**kw):
    net = nn.Sequential()
    net.add(nn.Dense(1))
    net.initialize(mx.init.Zero())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    return Estimator(net, gluon.loss.L2Loss(), trainer=trainer, context=mx.cpu(), **kw)


def test_fit_trains_and_names_metrics():
    est = _est(train_metrics=mx.metric.MAE())
    data = _data()
    est.fit(data, epochs=1)
    first = est.train_metrics[0].get()[1]
    est.fit(data, epochs=5)
    assert est.train_metrics[0].get()[1] < first
    assert [m.name for m in est.train_metrics] == ["training mae"]
    assert [m.name for m in est.val_metrics] == ["validation mae"]
    # without metrics: a suggested one (none for L2Loss) and the loss
    assert [m.name for m in _est().train_metrics] == ["training l2loss"]


def test_input_checks():
    est = _est()
    it = mx.io.NDArrayIter(mx.nd.ones((4, 5)), mx.nd.ones((4, 1)), batch_size=2)
    with pytest.raises(ValueError, match="DataLoader"):
        est.fit(it, epochs=1)
    with pytest.raises(ValueError, match="one and only one"):
        est.fit(_data(), epochs=1, batches=2)
    with pytest.raises(ValueError):
        Estimator(nn.Dense(1), loss="mse")
    with pytest.raises(ValueError):
        _est(train_metrics="acc")
    with pytest.raises(ValueError, match="fit_batch"):
        _est(batch_processor=object())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        Estimator(nn.Dense(1), gluon.loss.L2Loss())
    assert any("No trainer specified" in str(x.message) for x in w)


def test_default_handler_order():
    est = _est()
    est.fit(_data(), epochs=1)
    handlers = est._prepare_default_handlers(val_data=_data(), event_handlers=[
        EarlyStoppingHandler(monitor=est.val_metrics[0])])
    kinds = [type(h) for h in handlers]
    assert kinds[0] is GradientUpdateHandler and kinds[1] is MetricHandler and kinds[-1] is LoggingHandler
    assert ValidationHandler in kinds and StoppingHandler in kinds


def test_batches_and_custom_batch_processor():
    calls = []

    class Counting(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append(train_batch[0].shape[0])
            return super().fit_batch(estimator, train_batch, batch_axis)

    est = _est(batch_processor=Counting())
    est.fit(_data(), batches=6)
    assert calls == [8] * 6


def test_checkpoint_and_resume(tmp_path):
    est = _est()
    ck = CheckpointHandler(model_dir=str(tmp_path), model_prefix="m", monitor=est.train_metrics[0], save_best=True,
                           max_checkpoints=1)
    est.fit(_data(), event_handlers=[ck], epochs=2)
    files = sorted(os.listdir(tmp_path))
    assert files == ["m-best.params", "m-best.states", "m-epoch1batch8.params", "m-epoch1batch8.states"]
    ck2 = CheckpointHandler(model_dir=str(tmp_path), model_prefix="m", max_checkpoints=1,
                            resume_from_checkpoint=True)
    est.fit(_data(), event_handlers=[ck2], epochs=3)
    assert est.max_epoch == 1 and os.path.isfile(tmp_path / "m-epoch2batch12.params")


def test_early_stopping_and_logging(capsys):
    est = _est()
    stop = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=0, mode="max")
    est.fit(_data(), event_handlers=[stop], epochs=5)
    assert stop.stopped_epoch == 1 and stop.current_epoch == 2       # l2 loss falls: "max" stops at once
    est.fit(_data(n=40), event_handlers=[LoggingHandler(log_interval=2, metrics=est.train_metrics)], epochs=1)
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines()
             if re.match(r"\[Epoch 0\]\[Batch \d+\]\[Samples \d+\] time/interval: \d+\.\d+s training l2loss: ", ln)]
    assert len(lines) == 3                       # batches 2, 4 and the last (5 batches of 8)
    assert "Training begin: using optimizer SGD with current learning rate 0.1000" in out
