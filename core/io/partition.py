"""Split a data set between workers: ``num_parts`` / ``part_index``.

Every iterator that takes ``num_parts``/``part_index`` (CSVIter, MNISTIter,
ImageRecordIter) cuts its examples with this helper, so that the parts are disjoint,
contiguous, cover every example exactly once, and differ in size by at most one
(part ``k`` of ``n`` examples is ``[k*n//num_parts, (k+1)*n//num_parts)``).

MXNet itself used different rules per iterator (the last MNIST part took the remainder;
indexed RecordIO used ``ceil(n/num_parts)`` steps, which can leave trailing parts empty;
plain RecordIO split by bytes). Only the per-part sizes differ, not the guarantees.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_partition", "partition_range", "partition_indices"]


def check_partition(num_parts: int, part_index: int) -> tuple[int, int]:
    """Validate and return ``(num_parts, part_index)`` as ints."""
    try:
        num_parts, part_index = int(num_parts), int(part_index)
    except (TypeError, ValueError):
        raise TypeError(f"num_parts and part_index must be integers, got {num_parts!r}, "
                        f"{part_index!r}") from None
    if num_parts < 1:
        raise ValueError(f"num_parts must be >= 1, got {num_parts}")
    if not 0 <= part_index < num_parts:
        raise ValueError(f"part_index must be in [0, num_parts={num_parts}), got {part_index}")
    return num_parts, part_index


def partition_range(n: int, num_parts: int = 1, part_index: int = 0) -> tuple[int, int]:
    """``[start, end)`` of part ``part_index`` when ``n`` examples are cut in ``num_parts``."""
    num_parts, part_index = check_partition(num_parts, part_index)
    if n < 0:
        raise ValueError(f"number of examples must be >= 0, got {n}")
    return part_index * n // num_parts, (part_index + 1) * n // num_parts


def partition_indices(n: int, num_parts: int = 1, part_index: int = 0) -> np.ndarray:
    """The example indices (int64) of part ``part_index``."""
    start, end = partition_range(n, num_parts, part_index)
    return np.arange(start, end, dtype=np.int64)
