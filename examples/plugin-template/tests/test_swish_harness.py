"""The plugin's operators through ``plexnet.testing``'s op harness: forward against a
numpy reference, backward against central differences, every ``req``."""
import numpy as np
import pytest

from plexnet.testing import check_forward, check_gradient, check_req

X = np.linspace(-4.5, 4.5, 12).reshape(3, 4)  # float64: tight gradient checks


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_swish(beta: float) -> None:
    check_forward("swish", [X], {"beta": beta}, [X / (1 + np.exp(-beta * X))])
    check_gradient("swish", [X], {"beta": beta})


def test_hardswish() -> None:
    x = X + 0.01  # away from the kinks at -3 and 3, where the derivative jumps
    check_forward("HardSwish", [x], {}, [x * np.clip(x + 3, 0, 6) / 6])
    check_gradient("HardSwish", [x], {})


@pytest.mark.parametrize("op,kwargs", [("swish", {"beta": 1.5}), ("HardSwish", {})])
def test_every_req(op: str, kwargs: dict) -> None:
    check_req(op, [X + 0.01], kwargs)
