"""Cases that pin gluon.contrib.estimator's behaviour, run against either library.

Every function takes the library module (``mxnet`` or ``plexnet``) and returns plain JSON
data: the order of handler calls and what each call saw, metric names and values, the
checkpoint files on disk, early-stopping epochs, log lines (times masked, numbers split
out so they can be compared with a tolerance), warnings and error messages, signatures.
``fixtures/make_mxnet_estimator.py`` records MXNet 1.9.1's answers; ``test_estimator_behaviour``
compares plexnet's with them.
"""
from __future__ import annotations

import inspect
import io
import logging
import os
import re
import shutil
import tempfile
import warnings

import numpy as np

_TIME = re.compile(r"\d+\.\d+s\b|total \d+s")
_NUM = re.compile(r"-?\d+\.\d+|\binf\b|\bnan\b")
_TMP = re.compile(re.escape(tempfile.gettempdir()) + r"/tmp\w+")


def _line(text: str) -> list:
    """A log line as [template, numbers]: times masked, other decimals pulled out."""
    text = _TMP.sub("<dir>", text)
    text = _TIME.sub(lambda m: "total <t>s" if m.group().startswith("total") else "<t>s", text)
    nums = [float(n) for n in _NUM.findall(text)]
    return [_NUM.sub("#", text), nums]


def _data(mx, n: int = 10, batch: int = 4, seed: int = 0, classes: int = 3):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    y = rng.randint(0, classes, (n,)).astype(np.float32)
    ds = mx.gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y))
    return mx.gluon.data.DataLoader(ds, batch_size=batch, shuffle=False)


def _net(mx, hybrid: bool = False):
    nn = mx.gluon.nn
    net = nn.HybridSequential() if hybrid else nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(5, activation="tanh", in_units=4), nn.Dense(3, in_units=5))
    net.initialize(mx.init.Zero(), ctx=mx.cpu())
    rng = np.random.RandomState(7)
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-0.8, 0.8, p.shape).astype(np.float32)))
    if hybrid:
        net.hybridize()
    return net


def _estimator(mx, net=None, loss=None, lr: float = 0.5, **kw):
    net = net if net is not None else _net(mx)
    loss = loss if loss is not None else mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = mx.gluon.contrib.estimator.Estimator(net, loss, trainer=trainer, context=mx.cpu(), **kw)
    return est


class _Log:
    """Collects an estimator's log records (the estimator also prints them to stdout)."""

    def __init__(self, est):
        self.buf = io.StringIO()
        self.handler = logging.StreamHandler(self.buf)
        est.logger.addHandler(self.handler)
        self.est = est

    def lines(self) -> list:
        self.est.logger.removeHandler(self.handler)
        return [_line(s) for s in self.buf.getvalue().splitlines()]


def _metrics(ms) -> list:
    return [[m.name, float(m.get()[1])] for m in ms]


def _params(net) -> list:
    return [float(np.abs(p.data().asnumpy()).sum()) for p in net.collect_params().values()]


def _recorder(mx, tag: str, priority, est_metrics, trace: list, stop_at=None):
    """A handler on every event that writes what it sees to ``trace``."""
    eh = mx.gluon.contrib.estimator.event_handler

    class Recorder(eh.TrainBegin, eh.TrainEnd, eh.EpochBegin, eh.EpochEnd, eh.BatchBegin, eh.BatchEnd):
        def __init__(self):
            if priority is not None:
                self.priority = priority
            self.batches = 0

        def _note(self, event, est, kwargs):
            entry = [tag, event, sorted(kwargs)]
            if "pred" in kwargs:
                entry.append([len(kwargs["pred"]), len(kwargs["label"]), len(kwargs["loss"]),
                              list(kwargs["batch"][0].shape),
                              [list(p.shape) for p in kwargs["pred"]]])
            entry.append(_metrics(est_metrics()))
            trace.append(entry)

        def train_begin(self, estimator, *args, **kwargs):
            self._note("train_begin", estimator, kwargs)
            trace[-1].append([estimator.max_epoch, estimator.max_batch])

        def train_end(self, estimator, *args, **kwargs):
            self._note("train_end", estimator, kwargs)

        def epoch_begin(self, estimator, *args, **kwargs):
            self._note("epoch_begin", estimator, kwargs)

        def epoch_end(self, estimator, *args, **kwargs):
            self._note("epoch_end", estimator, kwargs)

        def batch_begin(self, estimator, *args, **kwargs):
            self._note("batch_begin", estimator, kwargs)

        def batch_end(self, estimator, *args, **kwargs):
            self._note("batch_end", estimator, kwargs)
            self.batches += 1
            return stop_at is not None and self.batches >= stop_at

    return Recorder()


def _warnings_of(fn) -> tuple:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn()
    return out, [[w.category.__name__, str(w.message)] for w in got]


def _error_of(fn) -> list:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is recorded
        return [type(e).__name__, str(e)]
    return ["no error", ""]


# ------------------------------------------------------------------ the cases

def fit_trace(mx) -> dict:
    """fit with validation: the order of every handler call, what each saw, final values."""
    est = _estimator(mx, train_metrics=mx.metric.Accuracy())
    trace: list = []
    both = lambda: est.train_metrics + est.val_metrics  # noqa: E731
    handlers = [_recorder(mx, "late", None, both, trace),
                _recorder(mx, "mid", -1500, both, trace),
                _recorder(mx, "early", -3000, both, trace)]
    val_trace: list = []
    val_handler = mx.gluon.contrib.estimator.ValidationHandler(
        _data(mx, n=6, seed=1), est.evaluate, epoch_period=2, batch_period=3,
        event_handlers=[_recorder(mx, "val", 5, lambda: est.val_metrics, val_trace)])
    log = _Log(est)
    est.fit(_data(mx), val_data=_data(mx, n=6, seed=1), epochs=3, event_handlers=handlers + [val_handler])
    return {"trace": trace, "val_trace": val_trace, "log": log.lines(),
            "train": _metrics(est.train_metrics), "val": _metrics(est.val_metrics),
            "params": _params(est.net), "max": [est.max_epoch, est.max_batch, est.batch_axis]}


def fit_batches(mx) -> dict:
    """fit by batches crossing epochs, a handler that stops early, and default logging."""
    out = {}
    for label, batches, stop_at, val in (("b5", 5, None, False), ("b7_val", 7, None, True),
                                         ("stop4", 9, 4, False)):
        est = _estimator(mx)
        trace: list = []
        rec = _recorder(mx, "r", None, lambda est=est: est.train_metrics, trace, stop_at=stop_at)
        log = _Log(est)
        est.fit(_data(mx), val_data=_data(mx, n=6, seed=1) if val else None, batches=batches,
                event_handlers=[rec])
        out[label] = {"trace": [t[:2] for t in trace], "log": log.lines(),
                      "train": _metrics(est.train_metrics), "val": _metrics(est.val_metrics)}
    return out


def evaluate_trace(mx) -> dict:
    est = _estimator(mx, val_loss=mx.gluon.loss.SoftmaxCrossEntropyLoss(sparse_label=True))
    trace: list = []
    log = _Log(est)
    est.evaluate(_data(mx, n=7, batch=3), event_handlers=[_recorder(mx, "r", None, lambda: est.val_metrics,
                                                                    trace)])
    log2 = _Log(est)
    est.evaluate(_data(mx, n=7, batch=3))
    return {"trace": trace, "log": log.lines(), "log_default": log2.lines(), "val": _metrics(est.val_metrics)}


def logging_intervals(mx) -> dict:
    out = {}
    for interval in ("epoch", 1, 2):
        est = _estimator(mx)
        log = _Log(est)
        lh = mx.gluon.contrib.estimator.LoggingHandler(log_interval=interval,
                                                       metrics=est.train_metrics + est.val_metrics)
        est.fit(_data(mx), val_data=_data(mx, n=6, seed=1), epochs=2, event_handlers=[lh])
        out[str(interval)] = {"log": log.lines(), "state": [lh.batch_index, lh.current_epoch,
                                                            lh.processed_samples, lh.priority]}
    return out


def default_handlers(mx) -> dict:
    eh = mx.gluon.contrib.estimator.event_handler
    est = _estimator(mx)
    est.fit(_data(mx), epochs=1)
    val = _data(mx, n=6, seed=1)

    def kinds(hs):
        return [[type(h).__name__, float(getattr(h, "priority", 0))] for h in hs]

    out = {
        "none": kinds(est._prepare_default_handlers(None, None)),
        "val": kinds(est._prepare_default_handlers(val, [])),
        "user": kinds(est._prepare_default_handlers(val, [
            eh.EarlyStoppingHandler(monitor=est.val_metrics[0], mode="min"),
            eh.LoggingHandler(log_interval=3, metrics=est.train_metrics),
            eh.GradientUpdateHandler(priority=10)])),
        "eval": kinds(est._prepare_default_validation_handlers(None)),
        "eval_user": kinds(est._prepare_default_validation_handlers(eh.MetricHandler(est.val_metrics))),
        "unknown_metric": _error_of(lambda: est._prepare_default_handlers(
            None, [eh.EarlyStoppingHandler(monitor=mx.metric.Accuracy(), mode="max")])),
        "unknown_metric_all_user": _error_of(lambda: est._prepare_default_handlers(None, [
            eh.MetricHandler(est.train_metrics), eh.LoggingHandler(),
            eh.GradientUpdateHandler(), eh.EarlyStoppingHandler(monitor=mx.metric.Accuracy(), mode="max")])),
        "unknown_logging_metric": _error_of(lambda: est._prepare_default_handlers(
            None, [eh.LoggingHandler(metrics=[mx.metric.Accuracy()])])),
        "unknown_eval_metric": _error_of(lambda: est._prepare_default_validation_handlers(
            [eh.LoggingHandler(metrics=est.train_metrics)])),
        "bad_handler": _error_of(lambda: est._prepare_default_handlers(None, [3])),
    }
    cats = est._categorize_handlers(est._prepare_default_handlers(val, None))
    out["categories"] = [[type(h).__name__ for h in c] for c in cats]
    return out


def metric_names(mx) -> dict:
    gl = mx.gluon.loss
    cases = {
        "ce": dict(loss=gl.SoftmaxCrossEntropyLoss()),
        "l2": dict(loss=gl.L2Loss()),
        "l1_named": dict(loss=gl.L1Loss(prefix="myloss12_")),
        "acc": dict(train_metrics=mx.metric.Accuracy()),
        "list": dict(train_metrics=[mx.metric.Accuracy(), mx.metric.TopKAccuracy(2)]),
        "composite": dict(train_metrics=mx.metric.CompositeEvalMetric([mx.metric.Accuracy(),
                                                                       mx.metric.CrossEntropy()])),
        "val_given": dict(train_metrics=mx.metric.Accuracy(), val_metrics=[mx.metric.CrossEntropy(),
                                                                           mx.metric.Accuracy(name="vacc")]),
        "val_training_name": dict(val_metrics=mx.metric.Accuracy(name="training-ish")),
    }
    out = {}
    for key, kw in cases.items():
        est = _estimator(mx, **kw)
        out[key] = {"train": [[type(m).__name__, m.name] for m in est.train_metrics],
                    "val": [[type(m).__name__, m.name] for m in est.val_metrics],
                    "distinct": all(t is not v for t in est.train_metrics for v in est.val_metrics)}
    return out


def construction_messages(mx) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return _construction_messages(mx, tmp)


def _construction_messages(mx, tmp: str) -> dict:
    E = mx.gluon.contrib.estimator.Estimator
    gl = mx.gluon
    out = {}
    _, out["no_trainer"] = _warnings_of(lambda: E(_net(mx), gl.loss.L2Loss(), context=mx.cpu()))
    _, out["init_twice"] = _warnings_of(lambda: E(_net(mx), gl.loss.L2Loss(), initializer=mx.init.One(),
                                                  trainer=gl.Trainer(_net(mx).collect_params(), "sgd"),
                                                  context=mx.cpu()))

    def fresh():
        net = gl.nn.Dense(2, in_units=3)
        est = E(net, gl.loss.L2Loss(), initializer=mx.init.One(), context=mx.cpu())
        return float(net.weight.data().asnumpy().sum()), [c.device_type for c in est.context]
    out["fresh_init"], _ = _warnings_of(fresh)
    est = _estimator(mx)
    out["errors"] = {
        "loss": _error_of(lambda: E(_net(mx), "l2")),
        "metrics": _error_of(lambda: E(_net(mx), gl.loss.L2Loss(), train_metrics=["acc"])),
        "val_metrics": _error_of(lambda: E(_net(mx), gl.loss.L2Loss(), val_metrics=3)),
        "context": _error_of(lambda: E(_net(mx), gl.loss.L2Loss(), context="cpu")),
        "trainer": _error_of(lambda: E(_net(mx), gl.loss.L2Loss(), trainer="sgd")),
        "processor": _error_of(lambda: E(_net(mx), gl.loss.L2Loss(), batch_processor=object())),
        "val_loss": _error_of(lambda: E(_net(mx), gl.loss.L2Loss(), val_loss=3)),
        "fit_iter": _error_of(lambda: est.fit(mx.io.NDArrayIter(mx.nd.ones((4, 4)), batch_size=2), epochs=1)),
        "fit_both": _error_of(lambda: est.fit(_data(mx), epochs=1, batches=1)),
        "fit_neither": _error_of(lambda: est.fit(_data(mx))),
        "evaluate_list": _error_of(lambda: est.evaluate([mx.nd.ones((2, 4))])),
        "logging_interval": _error_of(lambda: mx.gluon.contrib.estimator.LoggingHandler(log_interval="batch")),
        "checkpoint_best": _error_of(lambda: mx.gluon.contrib.estimator.CheckpointHandler(
            tmp, save_best=True)),
        "early_monitor": _error_of(lambda: mx.gluon.contrib.estimator.EarlyStoppingHandler(monitor="acc")),
        "early_composite": _error_of(lambda: mx.gluon.contrib.estimator.EarlyStoppingHandler(
            monitor=mx.metric.CompositeEvalMetric([mx.metric.Accuracy()]))),
        "metric_handler": _error_of(lambda: mx.gluon.contrib.estimator.MetricHandler(metrics=[1])),
    }
    eh = mx.gluon.contrib.estimator
    _, out["early_modes"] = _warnings_of(lambda: [
        eh.EarlyStoppingHandler(monitor=mx.metric.Loss("l"), mode=m) for m in ("auto", "min", "max", "bogus")])
    _, out["checkpoint_modes"] = _warnings_of(lambda: [
        eh.CheckpointHandler(tmp, monitor=mx.metric.Loss("l"), save_best=True, mode=m)
        for m in ("auto", "min", "max", "bogus")])
    return out


def _files(d: str) -> list:
    return sorted(os.listdir(d))


def checkpoints(mx) -> dict:
    eh = mx.gluon.contrib.estimator
    out = {}
    root = tempfile.mkdtemp()
    try:
        # by epoch, best by validation accuracy, two kept
        d = os.path.join(root, "a", "new")
        est = _estimator(mx, train_metrics=mx.metric.Accuracy())
        ck = eh.CheckpointHandler(d, model_prefix="net", monitor=est.val_metrics[0], verbose=1, save_best=True,
                                  mode="min", max_checkpoints=2)
        log = _Log(est)
        est.fit(_data(mx), val_data=_data(mx, n=6, seed=1), epochs=4, event_handlers=[ck])
        out["epochs"] = {"files": _files(d), "log": log.lines(), "state": [
            ck.current_epoch, ck.current_batch, ck.saved_checkpoints, float(ck.best)]}

        # by batch, hybridized net: the symbol file is written after the first batch
        d = os.path.join(root, "b")
        est = _estimator(mx, net=_net(mx, hybrid=True))
        ck = eh.CheckpointHandler(d, model_prefix="h", epoch_period=None, batch_period=2, max_checkpoints=3,
                                  verbose=1)
        log = _Log(est)
        est.fit(_data(mx), batches=7, event_handlers=[ck])
        out["batches"] = {"files": _files(d), "log": log.lines(),
                          "state": [ck.current_epoch, ck.current_batch, ck.saved_checkpoints]}

        # non-hybrid net: no symbol file, a log line says why
        d = os.path.join(root, "c")
        est = _estimator(mx)
        ck = eh.CheckpointHandler(d, epoch_period=2, monitor=est.train_metrics[0], save_best=True, verbose=1)
        log = _Log(est)
        est.fit(_data(mx), epochs=3, event_handlers=[ck])
        out["period2"] = {"files": _files(d), "log": log.lines(),
                          "state": [ck.current_epoch, ck.current_batch, ck.saved_checkpoints]}

        # resume by epoch
        d = os.path.join(root, "r")
        est = _estimator(mx)
        est.fit(_data(mx), epochs=2, event_handlers=[eh.CheckpointHandler(d, model_prefix="m", max_checkpoints=3)])
        trained = _params(est.net)
        est2 = _estimator(mx)
        ck = eh.CheckpointHandler(d, model_prefix="m", max_checkpoints=3, resume_from_checkpoint=True)
        trace: list = []
        log = _Log(est2)
        est2.fit(_data(mx), epochs=5, event_handlers=[ck, _recorder(mx, "r", None, lambda: [], trace)])
        out["resume_epochs"] = {"files": _files(d), "log": log.lines(), "max_epoch": est2.max_epoch,
                                "trained": trained, "params": _params(est2.net),
                                "state": [ck.trained_epoch, ck.trained_batch, ck.saved_checkpoints],
                                "train": _metrics(est2.train_metrics),
                                "loaded_equal": _params(est2.net) != _params(_estimator(mx).net)}
        out["resume_done"] = _error_of(lambda: _estimator(mx).fit(_data(mx), epochs=3, event_handlers=[
            eh.CheckpointHandler(d, model_prefix="m", resume_from_checkpoint=True)]))
        out["resume_wrong_period"] = _error_of(lambda: _estimator(mx).fit(_data(mx), batches=3, event_handlers=[
            eh.CheckpointHandler(d, model_prefix="m", resume_from_checkpoint=True)]))

        # resume by batch
        d = os.path.join(root, "rb")
        est = _estimator(mx)
        est.fit(_data(mx), batches=5, event_handlers=[eh.CheckpointHandler(
            d, model_prefix="m", epoch_period=None, batch_period=2)])
        first = _files(d)
        est2 = _estimator(mx)
        ck = eh.CheckpointHandler(d, model_prefix="m", epoch_period=None, batch_period=2,
                                  resume_from_checkpoint=True, max_checkpoints=2)
        log = _Log(est2)
        est2.fit(_data(mx), batches=10, event_handlers=[ck])
        out["resume_batches"] = {"first": first, "files": _files(d), "log": log.lines(),
                                 "max_batch": est2.max_batch, "params": _params(est2.net),
                                 "state": [ck.trained_epoch, ck.trained_batch, ck.saved_checkpoints]}
        out["resume_batches_done"] = _error_of(lambda: _estimator(mx).fit(_data(mx), batches=3, event_handlers=[
            eh.CheckpointHandler(d, model_prefix="m", epoch_period=None, batch_period=2,
                                 resume_from_checkpoint=True)]))

        # resume with nothing there
        d = os.path.join(root, "empty")
        est = _estimator(mx)
        log = _Log(est)
        est.fit(_data(mx), epochs=1, event_handlers=[eh.CheckpointHandler(d, resume_from_checkpoint=True)])
        out["resume_empty"] = {"files": _files(d), "log": log.lines()}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def early_stopping(mx) -> dict:
    eh = mx.gluon.contrib.estimator
    out = {}
    configs = {
        "loss_min": dict(metric="loss", mode="min"),
        "loss_min_p2": dict(metric="loss", mode="min", patience=2),
        "acc_max": dict(metric="acc", mode="max"),
        "acc_auto_p1": dict(metric="acc", mode="auto", patience=1),
        "loss_auto": dict(metric="loss", mode="auto"),
        "loss_delta": dict(metric="loss", mode="min", min_delta=0.05, patience=1),
        "baseline": dict(metric="loss", mode="min", baseline=0.5, patience=1),
        "val_acc": dict(metric="val", mode="max", patience=1),
        "unused": dict(metric="fresh_val", mode="min"),
    }
    for key, cfg in configs.items():
        est = _estimator(mx, train_metrics=[mx.metric.Accuracy(), mx.metric.Loss("myloss")], lr=2.0)
        metric = {"loss": est.train_metrics[1], "acc": est.train_metrics[0], "val": est.val_metrics[0],
                  "fresh_val": est.val_metrics[1]}[cfg.pop("metric")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            es = eh.EarlyStoppingHandler(monitor=metric, **cfg)
        trace: list = []
        log = _Log(est)
        val = _data(mx, n=6, seed=1) if key == "val_acc" else None
        handlers = [es, _recorder(mx, "r", None, lambda metric=metric: [metric], trace)]
        _, warned = _warnings_of(
            lambda est=est, val=val, hs=handlers: est.fit(_data(mx), val_data=val, epochs=6, event_handlers=hs))
        out[key] = {"state": [es.current_epoch, es.stopped_epoch, es.wait, float(es.best), es.stop_training,
                              float(es.min_delta)],
                    "epochs": [t[3] for t in trace if t[1] == "epoch_end"],
                    "log": log.lines(), "warned": sorted({w[0] + ":" + w[1] for w in warned})}
    return out


def batch_processor(mx) -> dict:
    """A custom processor, two devices, evaluate_batch/fit_batch return values."""
    est_mod = mx.gluon.contrib.estimator
    seen = []

    class Doubling(est_mod.BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            seen.append(["fit", list(train_batch[0].shape), batch_axis])
            return super().fit_batch(estimator, train_batch, batch_axis)

        def evaluate_batch(self, estimator, val_batch, batch_axis=0):
            seen.append(["eval", list(val_batch[0].shape), batch_axis])
            return super().evaluate_batch(estimator, val_batch, batch_axis)

    net = _net(mx)
    net.collect_params().reset_ctx([mx.cpu(0), mx.cpu(1)])
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    est = est_mod.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                            context=[mx.cpu(0), mx.cpu(1)], batch_processor=Doubling())
    trace: list = []
    est.fit(_data(mx), val_data=_data(mx, n=6, seed=1), epochs=2,
            event_handlers=[_recorder(mx, "r", None, lambda: est.train_metrics, trace)])
    data, label, pred, loss = est_mod.BatchProcessor().fit_batch(est, next(iter(_data(mx))))
    shapes = [[list(a.shape) for a in part] for part in (data, label, pred, loss)]
    data, label, pred, loss = est_mod.BatchProcessor().evaluate_batch(est, next(iter(_data(mx))))
    shapes += [[list(a.shape) for a in part] for part in (data, label, pred, loss)]
    return {"seen": seen, "batch_ends": [t[3] for t in trace if t[1] == "batch_end"],
            "train": _metrics(est.train_metrics), "val": _metrics(est.val_metrics), "shapes": shapes,
            "params": _params(net)}


def _sig(fn) -> str:
    """A signature without annotations (plexnet's code is typed, MXNet's is not)."""
    sig = inspect.signature(fn)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def signatures(mx) -> dict:
    est_mod = mx.gluon.contrib.estimator
    out = {}
    names = ["Estimator", "BatchProcessor", "TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin",
             "BatchEnd", "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
             "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler"]
    for name in names:
        cls = getattr(est_mod, name)
        out[name] = {"bases": [b.__name__ for b in cls.__mro__[1:] if b.__name__ not in ("object", "EventHandler")],
                     "init": _sig(cls.__init__).replace("'", '"')}
        for meth in ("fit", "evaluate", "fit_batch", "evaluate_batch", "train_begin", "train_end",
                     "epoch_begin", "epoch_end", "batch_begin", "batch_end"):
            if meth in cls.__dict__:
                out[name][meth] = _sig(cls.__dict__[meth])
    out["event_handler_all"] = sorted(est_mod.event_handler.__all__)
    return out


CASES = {f.__name__: f for f in (fit_trace, fit_batches, evaluate_trace, logging_intervals, default_handlers,
                                  metric_names, construction_messages, checkpoints, early_stopping,
                                  batch_processor, signatures)}


def run_all(mx) -> dict:
    return {name: fn(mx) for name, fn in CASES.items()}
