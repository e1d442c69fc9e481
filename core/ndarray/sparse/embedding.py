"""``Embedding`` / ``contrib.SparseEmbedding`` over a row_sparse weight (Gluon's
``contrib.nn.SparseEmbedding``: the rows ``row_sparse_data`` returns).

Forward looks the ids up in the weight's compact rows (ids the weight does not store give
zero rows), one engine operation, with no dense copy of the weight. Under
``autograd.record()`` with only the weight in the graph, the call is one ``EmbeddingNode``:
its weight gradient is a row contribution (``autograd.deferrable``: the looked-up rows,
for ``sparse_grad=True`` and SparseEmbedding, as MXNet) or, into a dense gradient buffer,
a scatter-add of the output gradient.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.base import FnProperty
from ...operator.contract import OpReqType
from ...tape import TapeNode
from ...tape.bulk import pusher
from .. import ndarray as _nd
from ..ndarray import NDArray
from . import autograd as _sag
from .base import RowSparseNDArray
from .ops import _place, _register, is_sparse

__all__ = ["EmbeddingNode"]

_NAMES = ("Embedding", "_contrib_SparseEmbedding")


def _ids(data: np.ndarray, input_dim: int) -> np.ndarray:
    return np.clip(data.astype(np.int64), 0, input_dim - 1)


def _lookup(d: np.ndarray, vals: np.ndarray, stored: np.ndarray, input_dim: int, out: np.ndarray) -> None:
    idx = _ids(d, input_dim).reshape(-1)
    pos = np.minimum(np.searchsorted(stored, idx), max(stored.shape[0] - 1, 0))
    o = out.reshape(-1, out.shape[-1])
    if stored.shape[0] == 0:
        o[...] = 0
        return
    found = stored[pos] == idx
    o[...] = 0
    o[found] = vals[pos[found]]


@_register(*_NAMES)
def _embedding(fn: Any, data: Any = None, weight: Any = None, input_dim: Any = None, output_dim: Any = None,
               out: Any = None, **kw: Any) -> Any:
    if not isinstance(weight, RowSparseNDArray) or is_sparse(data) or weight.context.device_type != "cpu" or \
            input_dim is None or output_dim is None:
        return NotImplemented
    n, dim = int(input_dim), int(output_dim)
    if tuple(weight.shape) != (n, dim):
        return NotImplemented  # the dense operator names the shape error
    res = _nd.empty(tuple(data.shape) + (dim,), weight.context, weight.dtype)
    parts = (data, weight.data, weight.indices)
    d, v, i, o = (x._data for x in (*parts, res))
    _nd._push(lambda rc: _lookup(d, v, i, n, o), res, parts, (res,), "Embedding")
    return _place(res, out)


class EmbeddingNode(_sag.SparseTapeNode):
    """A recorded lookup into a row_sparse weight (the only argument in the graph)."""

    __slots__ = ("data", "input_dim")
    bulkable = True

    def __init__(self, data: NDArray, weight: NDArray, out: NDArray, input_dim: int, name: str) -> None:
        self._setup(name, weight, out)
        self.data = data
        self.input_dim = input_dim

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        t = targets[0]
        if t is None:
            return
        buf, req = t
        g = out_grads[0]
        d, gd, bd, n = self.data._data, g._data, buf._data, self.input_dim

        def run(rc: Any) -> None:  # the dense gradient: a scatter-add of dy into the looked-up rows
            if req != OpReqType.add:
                bd.fill(0)
            np.add.at(bd, _ids(d, n).reshape(-1), gd.reshape(-1, gd.shape[-1]))
        pusher().push_sync(run, self.ctx, [g._chunk.var, self.data._chunk.var], [buf._chunk.var],
                           FnProperty.NORMAL, 0, f"{self.name}_backward")


def _record(res: NDArray, args: tuple, kwargs: dict[str, Any], name: str) -> TapeNode | None:
    data: Any = args[0] if args else kwargs.get("data")
    weight: Any = args[1] if len(args) > 1 else kwargs.get("weight")
    if len(args) > 2 or not isinstance(weight, RowSparseNDArray) or weight._ag is None or \
            getattr(data, "_ag", None) is not None or not isinstance(data, NDArray) or is_sparse(data):
        return None
    n = int(kwargs["input_dim"])
    node = EmbeddingNode(data, weight, res, n, name)
    if name != "Embedding" or kwargs.get("sparse_grad", False) in (True, "True", "true", 1, "1"):
        _sag.ROW_HINTS[node] = {0: ("take", data, n)}
    return node


for _n in _NAMES:
    _sag.RECORDERS[_n] = _record
