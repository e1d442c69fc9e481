"""MXNet's deprecated Python operators, ``PythonOp``, ``NumpyOp`` and ``NDArrayOp``, on
the ``Custom`` operator (MXNet ran them through its ``_Native``/``_NDArray`` operators).

A subclass defines ``list_arguments``, ``list_outputs``, ``infer_shape(in_shape) ->
(in_shapes, out_shapes)``, ``forward(in_data, out_data)`` and ``backward(out_grad,
in_data, out_data, in_grad)``; ``op.get_symbol(*inputs, name=...)`` (or ``op(...)``)
gives the symbol. ``NumpyOp`` hands numpy arrays to ``forward``/``backward`` (written in
place), ``NDArrayOp`` NDArrays. Each instance registers one ``Custom`` ``op_type``.
"""
from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from .custom import CustomOp, CustomOpProp, register

__all__ = ["PythonOp", "NumpyOp", "NDArrayOp"]

_ids = itertools.count()


class PythonOp:
    """Base class of the deprecated Python operators (use ``CustomOp`` in new code)."""

    _ref_holder: list["PythonOp"] = []
    #: whether forward/backward see numpy arrays (NumpyOp) or NDArrays (NDArrayOp)
    _numpy = True

    def __init__(self, need_top_grad: bool = True) -> None:
        self.info_: Any = None
        self.need_top_grad_ = need_top_grad
        kind = next(c.__name__ for c in type(self).__mro__ if c.__module__ == __name__)
        warnings.warn(f"{kind} has been deprecated. Please use CustomOp", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args: Any, **kwargs: Any) -> Any:
        """The operator applied to input symbols (``name=`` names the node)."""
        op_type = f"_python_op_{type(self).__name__}_{next(_ids)}"
        register(op_type)(_prop_class(self))
        PythonOp._ref_holder.append(self)
        # the symbol layer sits above the operator contracts: resolved at call time
        import importlib
        sym = importlib.import_module("plexnet.symbol")
        return sym.op_function("Custom")(*args, op_type=op_type, **kwargs)

    def forward(self, in_data: list[Any], out_data: list[Any]) -> None:
        out_data[0][:] = in_data[0]

    def backward(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any], in_grad: list[Any]) -> None:
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any]]:
        return in_shape, [in_shape[0]]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_arguments(self) -> list[str]:
        return ["data"]

    def need_top_grad(self) -> bool:
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """A Python operator computing on numpy arrays."""


class NDArrayOp(PythonOp):
    """A Python operator computing on NDArrays."""

    _numpy = False


def _prop_class(op: PythonOp) -> type:
    class _Op(CustomOp):
        def forward(self, is_train: bool, req: list[Any], in_data: list[Any], out_data: list[Any],
                    aux: list[Any]) -> None:
            if op._numpy:
                outs = [np.zeros(o.shape, dtype=o.dtype) for o in out_data]
                op.forward(in_data=[x.asnumpy() for x in in_data], out_data=outs)
                for o, r, v in zip(out_data, req, outs):
                    self.assign(o, r, v)
            else:
                op.forward(in_data=list(in_data), out_data=list(out_data))

        def backward(self, req: list[Any], out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                     in_grad: list[Any], aux: list[Any]) -> None:
            if op._numpy:
                grads = [np.zeros(g.shape, dtype=g.dtype) for g in in_grad]
                op.backward(out_grad=[None if g is None else g.asnumpy() for g in out_grad],
                            in_data=[x.asnumpy() for x in in_data], out_data=[o.asnumpy() for o in out_data],
                            in_grad=grads)
                for g, r, v in zip(in_grad, req, grads):
                    self.assign(g, r, v)
            else:
                op.backward(out_grad=list(out_grad), in_data=list(in_data), out_data=list(out_data),
                            in_grad=list(in_grad))

    class _Prop(CustomOpProp):
        def __init__(self) -> None:
            super().__init__(need_top_grad=op.need_top_grad())

        def list_arguments(self) -> list[str]:
            return list(op.list_arguments())

        def list_outputs(self) -> list[str]:
            return list(op.list_outputs())

        def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
            ins, outs = op.infer_shape([list(s) for s in in_shape])
            return list(ins), list(outs), []

        def create_operator(self, ctx: Any, in_shapes: list[Any], in_dtypes: list[Any]) -> CustomOp:
            return _Op()

    return _Prop
