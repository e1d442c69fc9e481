"""The event-handler protocol of the Estimator's training loop.

A handler is an object deriving from one or more of the six event mixins below; the mixin
says which events it receives, the method it overrides says what it does. The loop never
calls an event on a handler that did not opt in, so a handler pays nothing for the events
it ignores. ``epoch_end`` and ``batch_end`` may return True to ask the loop to stop.

Handlers run in ascending ``priority`` (default 0): gradient update (-2000), then metric
update and validation (-1000), then everything else, then logging (+inf), which therefore
reports values that every other handler has already seen. Equal priorities keep the
order in which the handlers were given (user handlers first, then the defaults).
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence


class EventHandler:
    """Base of every event handler (a marker: the mixins carry the events)."""


class TrainBegin(EventHandler):
    """Receives ``train_begin`` once, before the first epoch of ``fit``."""

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class TrainEnd(EventHandler):
    """Receives ``train_end`` once, after the last epoch of ``fit``."""

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochBegin(EventHandler):
    """Receives ``epoch_begin`` before each pass over the data (training or evaluation)."""

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochEnd(EventHandler):
    """Receives ``epoch_end`` after each pass; returning True stops ``fit``."""

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool | None:
        return False


class BatchBegin(EventHandler):
    """Receives ``batch_begin(estimator, batch=...)`` before each batch."""

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class BatchEnd(EventHandler):
    """Receives ``batch_end(estimator, batch=, pred=, label=, loss=)`` after each batch;
    returning True ends the current epoch of ``fit`` early."""

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool | None:
        return False


# event name -> the mixin that subscribes to it, in the order of a training run
EVENTS: tuple[tuple[str, type], ...] = (
    ("train_begin", TrainBegin), ("epoch_begin", EpochBegin), ("batch_begin", BatchBegin),
    ("batch_end", BatchEnd), ("epoch_end", EpochEnd), ("train_end", TrainEnd))


def _check_event_handlers(handlers: EventHandler | Iterable[EventHandler] | None) -> list[EventHandler]:
    """One handler, a list of them or None, as a list. A caller's list is returned itself:
    the Estimator appends its default handlers to it, as MXNet 1.9.1 does, so handlers
    given to a ValidationHandler (one list, reused by every validation) keep their state
    from one validation to the next (a LoggingHandler counts the validation epochs)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    if not isinstance(handlers, list):
        handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         "got: {}".format(handlers))
    return handlers


def sort_by_priority(handlers: list[EventHandler]) -> list[EventHandler]:
    """Stable in-place sort by ``priority`` (0 where a handler has none); returns the list."""
    handlers.sort(key=lambda h: getattr(h, "priority", 0))
    return handlers


class Dispatcher:
    """The handlers of one run, grouped by the events they subscribe to."""

    def __init__(self, handlers: Sequence[EventHandler]):
        self.subscribers: dict[str, list[EventHandler]] = {
            event: [h for h in handlers if isinstance(h, mixin)] for event, mixin in EVENTS}

    def groups(self) -> tuple[list[EventHandler], ...]:
        """The subscriber lists in ``EVENTS`` order."""
        return tuple(self.subscribers[event] for event, _ in EVENTS)

    def fire(self, event: str, estimator: Any, **kwargs: Any) -> bool:
        """Call ``event`` on every subscriber; True if any of them asked to stop. Every
        subscriber runs even after one has asked: the others still count the batch/epoch."""
        stop = False
        for handler in self.subscribers[event]:
            if getattr(handler, event)(estimator, **kwargs):
                stop = True
        return stop
