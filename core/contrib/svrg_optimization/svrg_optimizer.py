"""The optimizer an ``SVRGModule`` installs (MXNet 1.9.1's ``_SVRGOptimizer``).

Besides its parameters, an SVRGModule keeps a ``<name>_full`` key per parameter in the
KVStore to sum the full gradients of all devices and workers. One optimizer object
serves both kinds of key: updates of a ``_full`` key only store the gradient
(``_AssignmentOptimizer``), every other update goes to the optimizer the user asked for.
Both classes are private helpers of ``SVRGModule``.
"""
from __future__ import annotations

from typing import Any

from ...optimizer import Optimizer, create, register

__all__ = ["_AssignmentOptimizer", "_SVRGOptimizer"]

# keyword arguments of the Optimizer base class: the wrapper keeps these for itself, the
# wrapped optimizer receives every argument
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate", "lr_scheduler",
                "sym", "begin_num_update", "multi_precision", "param_dict")


@register
class _AssignmentOptimizer(Optimizer):
    """Writes the gradient into the weight: a KVStore with this optimizer holds, for each
    ``_full`` key, the sum of the full gradients pushed by all devices and workers."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """``weight[:] = grad`` (no learning rate, no rescaling, no state)."""
        weight[:] = grad


@register
class _SVRGOptimizer(Optimizer):
    """Routes each update by key: names containing ``'full'`` to an
    ``_AssignmentOptimizer``, all others to ``default_optimizer``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer given to ``SVRGModule.init_optimizer``; a name is created with all
        of ``kwargs``, an instance is used as it is (its own ``rescale_grad`` stays).
    **kwargs
        Optimizer arguments; those of the ``Optimizer`` base class also configure this
        wrapper. ``param_idx2name`` must name every index, ``_full`` keys included.
    """

    def __init__(self, default_optimizer: str | Optimizer, **kwargs: Any) -> None:
        super().__init__(**self._check_params(**kwargs))
        self.default_opt = create(default_optimizer, **kwargs) if isinstance(default_optimizer, str) \
            else default_optimizer
        self.aux_opt = create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs: Any) -> dict[str, Any]:
        """The subset of ``kwargs`` that the ``Optimizer`` base class accepts."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def _check_index(self, index: int | str) -> str:
        """The parameter name of ``index``: a KVStore updates by name, an updater by number."""
        return str(index) if index in self.idx2name.values() else self.idx2name[index]

    def _target(self, index: int | str) -> Optimizer:
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def create_state(self, index: int | str, weight: Any) -> Any:
        """The state of the optimizer that updates ``index`` (None for a ``_full`` key)."""
        return self._target(index).create_state(index, weight)

    def update(self, index: int | str, weight: Any, grad: Any, state: Any) -> None:
        """Store the full gradient (``_full`` keys) or take an optimizer step."""
        self._target(index).update(index, weight, grad, state)
