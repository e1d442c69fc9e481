"""The indexed graph and shape/type inference, re-exported: they sit with the symbols
(``plexnet.symbol.graph``), since ``Symbol.infer_shape`` and the executor both use them."""
from __future__ import annotations

from ..symbol.graph import (IndexedGraph, InferTypeError, infer_shapes, infer_types, is_complete, merge_shapes,
                            parse_dtype_attr, parse_shape_attr)

__all__ = ["IndexedGraph", "infer_shapes", "infer_types", "parse_shape_attr", "parse_dtype_attr",
           "InferTypeError", "is_complete", "merge_shapes"]
