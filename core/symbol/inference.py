"""Shape and type inference of a ``Symbol`` (``infer_shape``, ``infer_type`` and their
partial forms), as a mixin of the class: what MXNet 1.x returns for known, partial and
unknown inputs, over the graph passes of ``symbol/graph.py``."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ..util import is_np_shape
from .graph import IndexedGraph, infer_shapes, infer_types, is_complete

__all__ = ["InferenceMixin"]


class InferenceMixin:
    """``Symbol``'s inference methods (the class provides ``_outputs``)."""

    __slots__ = ()
    _outputs: Any

    # -- inference ----------------------------------------------------------------------------------
    def _indexed(self) -> Any:
        return IndexedGraph(self._outputs)

    def _known(self, g: Any, args: Sequence[Any], kwargs: dict[str, Any], what: str) -> dict[int, Any]:
        arg_names = g.arg_names()
        if args and kwargs:
            raise ValueError(f"infer_{what}: give either positional or keyword arguments, not both")
        known: dict[int, Any] = {}
        if args:
            if len(args) > len(arg_names):
                raise ValueError(f"infer_{what}: {len(args)} positional values for {len(arg_names)} arguments "
                                 f"({', '.join(arg_names)})")
            for nid, v in zip(g.arg_nids, args):
                if v is not None:
                    known[g.row_ptr[nid]] = v
            return known
        by_name = {g.nodes[i].name: g.row_ptr[i] for i in g.var_nids}
        for k, v in kwargs.items():
            if k not in by_name:
                raise ValueError(f"infer_{what}: {k!r} is not an input of the symbol; inputs are "
                                 f"{', '.join(by_name)}")
            if v is not None:
                known[by_name[k]] = v
        return known

    def _infer_shape_impl(self, partial: bool, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple:
        g = self._indexed()
        known = self._known(g, args, kwargs, "shape")
        np_sem = is_np_shape()  # NumPy shape semantics: -1 is the unknown dimension, None the unknown shape
        for e, v in list(known.items()):
            known[e] = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(d) for d in v)
            if np_sem:
                known[e] = tuple(max(d, 0) for d in known[e])
            if not known[e]:  # () is MXNet 1.x's "unknown shape"
                del known[e]
        shapes = infer_shapes(g, known)
        arg = [shapes[g.row_ptr[i]] for i in g.arg_nids]
        out = [shapes[e] for e in g.outputs]
        aux = [shapes[g.row_ptr[i]] for i in g.aux_nids]
        if partial and np_sem:
            return tuple([None if s is None else tuple(d if d > 0 else -1 for d in s) for s in lst]
                         for lst in (arg, out, aux))
        if partial:  # MXNet 1.x: () for an unknown shape, 0 for an unknown dimension
            return tuple([() if s is None else s for s in lst] for lst in (arg, out, aux))
        if not all(is_complete(s) for s in arg + out + aux):
            unknown = [f"{g.nodes[i].name}: {shapes[g.row_ptr[i]] or ()}" for i in g.arg_nids + g.aux_nids
                       if not is_complete(shapes[g.row_ptr[i]])]
            warnings.warn("Cannot decide shape for the following arguments (0s in shape means unknown "
                          "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknown),
                          stacklevel=3)
            return None, None, None
        return arg, out, aux

    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple:
        """``(arg_shapes, out_shapes, aux_shapes)`` from the shapes of any subset of the
        inputs (positional in ``list_arguments()`` order, or by name; 0 marks an unknown
        dimension); ``(None, None, None)`` with a warning when some shape cannot be
        decided. An inconsistency raises ``ShapeError`` naming the operator node and the
        shapes."""
        return self._infer_shape_impl(False, args, kwargs)

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple:
        """Like ``infer_shape`` but returns what can be inferred: ``()`` for an unknown
        shape and 0 for an unknown dimension, as MXNet 1.x; never warns about missing
        inputs (inconsistent ones still raise)."""
        return self._infer_shape_impl(True, args, kwargs)

    def _infer_type_impl(self, partial: bool, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple:
        g = self._indexed()
        known = {e: np.dtype(v) for e, v in self._known(g, args, kwargs, "type").items()}
        types = infer_types(g, known)
        conv = (lambda t: None if t is None else t.type)
        arg = [conv(types[g.row_ptr[i]]) for i in g.arg_nids]
        out = [conv(types[e]) for e in g.outputs]
        aux = [conv(types[g.row_ptr[i]]) for i in g.aux_nids]
        if not partial and any(t is None for t in arg + out + aux):
            unknown = [f"{g.nodes[i].name}: None" for i in g.arg_nids + g.aux_nids if types[g.row_ptr[i]] is None]
            warnings.warn("Cannot decide type for the following arguments. Consider providing them as "
                          "input:\n\t" + "\n\t".join(unknown), stacklevel=3)
            return None, None, None
        return arg, out, aux

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple:
        """``(arg_types, out_types, aux_types)`` (numpy scalar types) from the types of
        any subset of the inputs; ``(None, None, None)`` when some type is undecided."""
        return self._infer_type_impl(False, args, kwargs)

    def infer_type_partial(self, *args: Any, **kwargs: Any) -> tuple:
        return self._infer_type_impl(True, args, kwargs)
