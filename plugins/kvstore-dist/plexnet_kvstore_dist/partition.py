"""Where each key lives: small keys on one server, big arrays sliced across all.

A key with fewer than ``bigarray_bound()`` elements (MXNet's
``MXNET_KVSTORE_BIGARRAY_BOUND``, default 1,000,000) lives whole on one server chosen
by a stable hash of the key; a bigger one is cut into ``num_servers`` contiguous slices
of its flattened elements, slice ``i`` on server ``i``. Server-side keys are
``(key, part)`` tuples.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

__all__ = ["Part", "server_of", "plan"]


@dataclass(frozen=True)
class Part:
    server: int
    skey: tuple      # (key, part index): the key on the server
    lo: int          # flat element range [lo, hi) of the key
    hi: int


def server_of(key: Any, num_servers: int) -> int:
    """The server of a small key: the same in every process (Python's ``hash`` is
    randomised per process, so it is not used)."""
    if isinstance(key, str):
        h = zlib.crc32(key.encode("utf-8"))
    else:
        h = int(key) * 9973
    return h % num_servers


def plan(key: Any, size: int, num_servers: int, bound: int) -> list[Part]:
    """The parts of ``key`` (``size`` elements) over ``num_servers`` servers."""
    if num_servers < 1:
        raise ValueError("need at least one server")
    if size < bound or num_servers == 1 or size < num_servers:
        return [Part(server_of(key, num_servers), (key, 0), 0, size)]
    step, rem = divmod(size, num_servers)
    parts, lo = [], 0
    for i in range(num_servers):
        hi = lo + step + (1 if i < rem else 0)
        parts.append(Part(i, (key, i), lo, hi))
        lo = hi
    return parts
