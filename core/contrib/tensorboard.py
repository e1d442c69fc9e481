"""``mx.contrib.tensorboard``: log metrics to TensorBoard event files (MXNet 1.9.1's).

The writer is ``SummaryWriter`` from ``mxboard`` (what MXNet uses) or, when that is not
installed, from ``tensorboardX`` / ``torch.utils.tensorboard`` (same ``add_scalar``); with none
installed, an error message says how to install one, as MXNet's, and the callback does nothing.
"""
from __future__ import annotations

import importlib
import logging
from typing import Any

__all__ = ["LogMetricsCallback"]

_WRITERS = ("mxboard", "tensorboardX", "torch.utils.tensorboard")


def _summary_writer_class() -> Any:
    for mod in _WRITERS:
        try:
            return importlib.import_module(mod).SummaryWriter
        except (ImportError, AttributeError):
            continue
    return None


class LogMetricsCallback:
    """A batch/epoch-end callback writing each metric of ``param.eval_metric`` as a scalar
    (``prefix-name`` when ``prefix`` is given) at step ``param.epoch`` into event files under
    ``logging_dir``; view them with ``tensorboard --logdir=logging_dir``."""

    def __init__(self, logging_dir: str, prefix: str | None = None) -> None:
        self.prefix = prefix
        self.summary_writer: Any = None
        writer = _summary_writer_class()
        if writer is None:
            logging.error("You can install mxboard via `pip install mxboard` (or tensorboardX via "
                          "`pip install tensorboardX`) to log metrics to TensorBoard.")
        else:
            self.summary_writer = writer(logging_dir)

    def __call__(self, param: Any) -> None:
        """Log ``param.eval_metric``'s name/value pairs (nothing when it is None)."""
        if param.eval_metric is None or self.summary_writer is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = f"{self.prefix}-{name}"
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
