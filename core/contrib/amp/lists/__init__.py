"""AMP operator lists (which operators run in low precision, which in float32)."""
from . import symbol_bf16, symbol_fp16

__all__ = ["symbol_fp16", "symbol_bf16"]
