"""Activation layers (MXNet 1.x ``gluon.nn.activations``)."""
from __future__ import annotations

from typing import Any

from ...initializer import Constant
from ..block import HybridBlock

__all__ = ["Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU", "SiLU"]


class Activation(HybridBlock):
    """``act_type`` of the Activation operator: relu, sigmoid, tanh, softrelu, softsign."""

    def __init__(self, activation: str, **kwargs: Any) -> None:
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self) -> str:
        return self._act_type

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._act_type})"


class LeakyReLU(HybridBlock):
    """``x`` for x > 0, ``alpha * x`` otherwise."""

    def __init__(self, alpha: float, **kwargs: Any) -> None:
        if alpha < 0:
            raise ValueError("Slope coefficient for LeakyReLU must be no less than 0.")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._alpha})"


class PReLU(HybridBlock):
    """Leaky ReLU with a learned slope ``alpha`` (one, or one per channel)."""

    def __init__(self, alpha_initializer: Any = None, in_channels: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,),
                                         init=alpha_initializer if alpha_initializer is not None else Constant(0.25))

    def hybrid_forward(self, F: Any, x: Any, alpha: Any) -> Any:
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """Scaled ELU (Klambauer et al., 2017)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    """Gaussian error linear unit (erf form)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x * F.sigmoid(self._beta * x, name="fwd")


class SiLU(HybridBlock):
    """``x * sigmoid(x)`` (Swish with beta = 1)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x * F.sigmoid(x, name="fwd")
