"""``mx.optimizer.contrib``: MXNet 1.9.1's contrib optimizers (``GroupAdaGrad``)."""
from __future__ import annotations

from typing import Any

from .. import ndarray as nd
from .optimizer import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(grad), axis=1, keepdims=True)
        weight -= lr * grad / sqrt(history + eps)

    Weight decay is not supported (a non-zero ``wd`` is an AssertionError at update).
    """

    def __init__(self, eps: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: Any) -> Any:
        assert len(weight.shape) == 2, f"GroupAdaGrad: the weight must be 2-D, got shape {weight.shape}"
        return nd.zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        assert isinstance(weight, nd.NDArray) and isinstance(grad, nd.NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        assert self._get_wd(index) == 0, "Weight decay is not supported for GroupAdaGrad"
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        state[:] += nd.mean(nd.square(grad), axis=1, keepdims=True)
        weight[:] -= lr * grad / nd.sqrt(state + self.float_stable_eps)
