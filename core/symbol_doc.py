"""MXNet's ``mxnet.symbol_doc``: the base class of the extra operator documents, whose
``get_output_shape`` MXNet's docstring examples use."""
from __future__ import annotations

from typing import Any

__all__ = ["SymbolDoc"]


class SymbolDoc:
    """The base class for attaching doc to operators (MXNet's ``symbol_doc.SymbolDoc``)."""

    @staticmethod
    def get_output_shape(sym: Any, **input_shapes: Any) -> dict[str, Any]:
        """The output shapes of ``sym`` by output name, given its input shapes."""
        _, s_outputs, _ = sym.infer_shape(**input_shapes)
        return dict(zip(sym.list_outputs(), s_outputs))
