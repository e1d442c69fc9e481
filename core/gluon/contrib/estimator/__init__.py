# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
# Ported from Apache MXNet 1.9.1 (mxnet/gluon/contrib/estimator/__init__.py) for plexnet.

"""``gluon.contrib.estimator``: the Estimator training loop, its event handlers and the
batch processor (MXNet 1.9.1's ``mxnet.gluon.contrib.estimator``)."""
from . import batch_processor, estimator, event_handler
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (BatchBegin, BatchEnd, CheckpointHandler, EarlyStoppingHandler, EpochBegin, EpochEnd,
                            GradientUpdateHandler, LoggingHandler, MetricHandler, StoppingHandler, TrainBegin,
                            TrainEnd, ValidationHandler)

__all__ = ["Estimator", "BatchProcessor", "TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler", "CheckpointHandler",
           "EarlyStoppingHandler", "GradientUpdateHandler", "estimator", "event_handler", "batch_processor"]
