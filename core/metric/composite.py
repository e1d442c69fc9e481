"""``CompositeEvalMetric`` and ``create``: metrics from names, configs, lists and functions."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from .base import EvalMetric, _create, alias, register
from .custom import CustomMetric

__all__ = ["CompositeEvalMetric", "create"]


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a name, an instance, a config dict/JSON, a list (composite) or a
    function ``feval(label, pred)`` (``CustomMetric``)::

        mx.metric.create('acc'); mx.metric.create(['acc', 'ce'])
        mx.metric.create(lambda label, pred: float((label == pred.argmax(1)).mean()))
    """
    if callable(metric) and not isinstance(metric, (EvalMetric, type)):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values."""

    def __init__(self, metrics: Sequence[Any] | None = None, name: str = "composite",
                 output_names: Sequence[str] | None = None, label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric: Any) -> None:
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> "EvalMetric | ValueError":
        """The child metric at ``index``. Out of range, MXNet 1.9.1 *returns* (does not
        raise) a ValueError naming the range; so does this, for scripts that test for it."""
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}")

    def update_dict(self, labels: dict, preds: dict) -> None:  # type: ignore[override]
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset_local()

    def _collect(self, getter: str) -> tuple:
        names: list = []
        values: list = []
        for metric in self.metrics:
            name, value = getattr(metric, getter)()
            if isinstance(name, str):
                name = [name]
            if not isinstance(value, (list, tuple)):
                value = [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get(self) -> tuple:
        return self._collect("get")

    def get_global(self) -> tuple:
        return self._collect("get_global")

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config
