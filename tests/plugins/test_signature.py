"""Generated operator functions carry real signatures (help(), inspect, IDEs)."""
from __future__ import annotations

import inspect

import pytest

from plexnet.operator import Field, OperatorProperty, Params
from plexnet.operator.signature import REQUIRED_PARAMETER, operator_signature


class ScaleParam(Params):
    factor = Field(float, doc="multiplier")
    shift = Field(float, default=0.0)


class ScaleProp(OperatorProperty):
    op_name = "Scale"
    param_cls = ScaleParam

    def list_arguments(self) -> list[str]:
        return ["data", "bias"] if self.param.shift else ["data"]


class CatParam(Params):
    num_args = Field(int, low=1)
    dim = Field(int, default=1)


class CatProp(OperatorProperty):
    op_name = "Cat"
    param_cls = CatParam


def test_inputs_then_parameters_then_tail() -> None:
    sig = operator_signature(ScaleProp, "nd")
    assert list(sig.parameters) == ["data", "factor", "shift", "out", "name"]
    assert sig.parameters["factor"].default is REQUIRED_PARAMETER
    assert sig.parameters["factor"].annotation is float
    assert sig.parameters["shift"].default == 0.0
    assert str(sig).startswith("(data=None, factor: float = <required>, shift: float = 0.0")
    # MXNet's convention: parameters may follow the inputs positionally
    assert sig.bind(1, 2.0, 0.5).arguments == {"data": 1, "factor": 2.0, "shift": 0.5}


def test_symbol_tail_order() -> None:
    assert list(operator_signature(ScaleProp, "sym").parameters)[-3:] == ["name", "attr", "out"]
    assert operator_signature(ScaleProp, "sym").return_annotation == "Symbol"


def test_variable_inputs_are_star_data_and_keyword_parameters() -> None:
    sig = operator_signature(CatProp, "nd")
    assert str(sig) == "(*data, dim: int = 1, out=None, name=None, **kwargs) -> 'NDArray'"


def test_generated_functions_have_signatures() -> None:
    pytest.importorskip("plexnet_ops_basic", reason="needs plexnet-ops-basic")
    import plexnet as mx
    nd_sig = inspect.signature(mx.nd.FullyConnected)
    assert list(nd_sig.parameters)[:4] == ["data", "weight", "bias", "num_hidden"]
    assert "num_hidden" in inspect.signature(mx.sym.FullyConnected).parameters
    assert list(inspect.signature(mx.nd.BatchNorm).parameters)[:5] == [
        "data", "gamma", "beta", "moving_mean", "moving_var"]
