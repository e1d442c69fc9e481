"""Learning-rate schedules (``mx.lr_scheduler``), with MXNet 1.x names and semantics.

A scheduler is called with the optimizer's ``num_update`` and returns the learning
rate. Every scheduler takes an optional warm-up: for ``num_update < warmup_steps`` the
rate rises linearly from ``warmup_begin_lr`` to ``base_lr`` (``warmup_mode='linear'``)
or stays at ``warmup_begin_lr`` (``'constant'``).

Schedulers are plain data: ``get_config()`` gives a JSON-able dict (class name and every
attribute, counters included) and ``from_config`` rebuilds one from it, so that
optimizer states can be saved and sent to kvstore servers without pickling code.
"""
from __future__ import annotations

import logging
from math import cos, pi
from typing import Any

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler", "from_config"]

_log = logging.getLogger()  # the root logger, as MXNet's logging.info: 'INFO:root:Update[31]: Change ...'
_CLASSES: dict[str, type] = {}


class LRScheduler:
    """Base class: ``scheduler(num_update) -> lr``.

    Parameters: ``base_lr`` (the rate after warm-up), ``warmup_steps`` (int >= 0),
    ``warmup_begin_lr`` (rate at update 0 of the warm-up), ``warmup_mode``
    (``'linear'`` or ``'constant'``).
    """

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        _CLASSES[cls.__name__] = cls

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise TypeError(f"warmup_steps must be an int, got {type(warmup_steps).__name__}")
        if warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        assert num_update < self.warmup_steps
        if self.warmup_mode == "linear":
            increase = (self.warmup_final_lr - self.warmup_begin_lr) * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update: int) -> float:
        raise NotImplementedError("must override this")

    # -- plain-data form -----------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """``{'type': class name, 'attrs': {...}}`` holding only JSON-able values."""
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self).items()
                 if isinstance(v, (int, float, str, bool, list, tuple, type(None)))}
        return {"type": type(self).__name__, "attrs": attrs}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_lr={self.base_lr})"


def from_config(cfg: dict[str, Any] | None) -> LRScheduler | None:
    """Rebuild a scheduler from ``get_config()`` output (only known scheduler classes)."""
    if cfg is None:
        return None
    cls = _CLASSES.get(cfg.get("type", ""))
    if cls is None:
        raise ValueError(f"unknown learning-rate scheduler type {cfg.get('type')!r}; known: {sorted(_CLASSES)}")
    obj = cls.__new__(cls)  # type: ignore[call-overload]  # restored without running __init__
    obj.__dict__.update(cfg.get("attrs", {}))
    return obj


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, not below ``stop_factor_lr``:
    ``lr = base_lr * factor ** floor((num_update - 1) / step)``."""

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a while loop, not an if: resuming training jumps several steps at once
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _log.info("Update[%d]: now learning rate arrived at %0.5e, will not change in the future",
                          num_update, self.base_lr)
            else:
                _log.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` each time ``num_update`` passes one of the
    increasing ``step`` boundaries."""

    def __init__(self, step: list[int], factor: float = 1, base_lr: float = 0.01, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, (list, tuple)) or len(step) < 1:
            raise ValueError("step must be a non-empty list of update counts")
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = list(step)
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                _log.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class _DecayToFinalLR:
    """Mixin of PolyScheduler and CosineScheduler (an ``LRScheduler``): after the warm-up
    the rate falls from ``base_lr`` to ``final_lr`` at ``max_update`` along
    ``decayed_lr(num_update)``, and stays there."""

    warmup_steps: int
    base_lr: float

    def _decay_to(self, max_update: int, final_lr: float) -> None:
        if not isinstance(max_update, int):
            raise TypeError("max_update must be an int")
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def decayed_lr(self, num_update: int) -> float:
        raise NotImplementedError

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)  # type: ignore[attr-defined]
        if num_update <= self.max_update:
            self.base_lr = self.decayed_lr(num_update)
        return self.base_lr


class PolyScheduler(_DecayToFinalLR, LRScheduler):
    """Polynomial decay to ``final_lr`` at ``max_update``:
    ``final_lr + (base_lr - final_lr) * (1 - (n - warmup_steps) / (max_update - warmup_steps)) ** pwr``."""

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr
        self._decay_to(max_update, final_lr)

    def decayed_lr(self, num_update: int) -> float:
        return self.final_lr + (self.base_lr_orig - self.final_lr) * \
            pow(1 - float(num_update - self.warmup_steps) / float(self.max_steps), self.power)


class CosineScheduler(_DecayToFinalLR, LRScheduler):
    """Cosine decay to ``final_lr`` at ``max_update``:
    ``final_lr + (base_lr - final_lr) * (1 + cos(pi * (n - warmup_steps) / (max_update - warmup_steps))) / 2``."""

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self._decay_to(max_update, final_lr)

    def decayed_lr(self, num_update: int) -> float:
        return self.final_lr + (self.base_lr_orig - self.final_lr) * \
            (1 + cos(pi * (num_update - self.warmup_steps) / self.max_steps)) / 2
