"""``gluon.contrib.estimator``: a training loop for Gluon networks driven by event
handlers (MXNet 1.9.1's ``mxnet.gluon.contrib.estimator``).

``events`` defines the handler protocol, ``event_handler`` and ``checkpoint`` the built-in
handlers, ``batch_processor`` the per-batch step and ``estimator`` the loop itself.
"""
from . import batch_processor, estimator, event_handler
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (BatchBegin, BatchEnd, CheckpointHandler, EarlyStoppingHandler, EpochBegin, EpochEnd,
                            GradientUpdateHandler, LoggingHandler, MetricHandler, StoppingHandler, TrainBegin,
                            TrainEnd, ValidationHandler)

__all__ = ["Estimator", "BatchProcessor", "TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler", "CheckpointHandler",
           "EarlyStoppingHandler", "GradientUpdateHandler", "estimator", "event_handler", "batch_processor"]
