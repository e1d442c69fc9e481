"""Plain-data encoding: Python values <-> JSON without pickle.

Optimizer configurations, updater states and kvstore commands travel and persist as
JSON (plus numpy ``.npz`` for arrays), never as pickled objects, so loading a file or a
message can not run code. ``to_plain`` accepts ``None``, bools, numbers, strings, numpy
scalars, lists, tuples and dicts (any plain keys); anything else raises ``NotPlain``.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = ["NotPlain", "to_plain", "from_plain", "dumps", "loads"]


class NotPlain(TypeError):
    """A value that has no plain-data form."""


def to_plain(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list):
        return [to_plain(x) for x in v]
    if isinstance(v, tuple):
        return {"__tuple__": [to_plain(x) for x in v]}
    if isinstance(v, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in v):
            return {k: to_plain(x) for k, x in v.items()}
        return {"__dict__": [[to_plain(k), to_plain(x)] for k, x in v.items()]}
    raise NotPlain(f"{type(v).__name__} has no plain-data form")


def from_plain(v: Any) -> Any:
    if isinstance(v, list):
        return [from_plain(x) for x in v]
    if isinstance(v, dict):
        if "__tuple__" in v and len(v) == 1:
            return tuple(from_plain(x) for x in v["__tuple__"])
        if "__dict__" in v and len(v) == 1:
            return {_hashable(from_plain(k)): from_plain(x) for k, x in v["__dict__"]}
        return {k: from_plain(x) for k, x in v.items()}
    return v


def _hashable(k: Any) -> Any:
    return tuple(_hashable(x) for x in k) if isinstance(k, (list, tuple)) else k


def dumps(v: Any) -> str:
    return json.dumps(to_plain(v))


def loads(s: str | bytes) -> Any:
    return from_plain(json.loads(s))
