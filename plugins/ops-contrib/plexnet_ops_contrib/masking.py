"""``_contrib_boolean_mask`` as an operator, for ``sym.contrib.boolean_mask`` and MXNet's
symbol JSON: the rows of ``data`` whose ``index`` entry is non-zero.

Its output shape depends on the index's values, so shape inference leaves it unknown
(as MXNet's) and the operator declares ``forward_dynamic``: an executor whose graph holds
such an operator runs the graph node by node through the NDArray API (MXNet's dynamic
CachedOp path), and this node through ``nd.contrib.boolean_mask`` (gradient as MXNet's).
``nd.contrib.boolean_mask`` itself is the core's Python function."""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Params

from ._common import FnProp, register as _register

__all__ = ["register"]


class BooleanMaskParam(Params):
    axis = Field(int, default=0, doc="the axis to select along (MXNet 1.9.1: 0 only)")


class BooleanMaskProp(FnProp):
    """Rows of ``data`` where ``index`` (1-D, one entry per row) is non-zero."""

    param_cls = BooleanMaskParam
    arguments = ("data", "index")
    free_dtype_inputs = (1,)

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        shapes = [None if s is None else tuple(int(d) for d in s) for s in in_shape]
        if self.param.axis != 0:
            raise self.error(f"axis={self.param.axis} is not supported (MXNet 1.9.1 supports axis 0 only)", shapes)
        data, index = shapes
        if data is not None and index is not None and (len(index) != 1 or not data or index[0] != data[0]):
            raise self.error("index must be 1-D with one entry per row of data", shapes)
        return shapes, [None], []  # the row count is known only from the index's values

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [ins[0][xp.nonzero(ins[1])[0]]]

    def forward_dynamic(self, inputs: list[Any]) -> list[Any]:
        """Run on NDArrays (recorded by autograd): the executor's dynamic path calls this."""
        from plexnet import ndarray as nd  # the front end, needed only when a graph runs
        return [nd.contrib.boolean_mask(inputs[0], inputs[1], axis=self.param.axis)]

def register(registry: Any) -> None:
    _register(registry, {"boolean_mask": BooleanMaskProp})
