"""Shape arithmetic shared by NDArray views, the reshape operators and the fused
multi-tensor updates."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..base import ShapeError

__all__ = ["infer_reshape", "broadcast_shape", "unify_groups"]


def infer_reshape(src: Sequence[int], target: Sequence[int], reverse: bool = False,
                  op: str = "reshape") -> tuple[int, ...]:
    """Apply MXNet's reshape codes: 0 copy dim, -1 infer, -2 copy the rest, -3 merge two
    dims, -4 split a dim into the next two (one may be -1). ``reverse`` applies the codes
    from the right."""
    src = tuple(int(d) for d in src)
    tgt = [int(d) for d in target]
    if reverse:
        src_r, tgt_r = src[::-1], tgt[::-1]
        # -4 takes two following values; reversing must keep them after the -4
        fixed: list[int] = []
        i = 0
        while i < len(tgt_r):
            if i + 2 < len(tgt_r) and tgt_r[i + 2] == -4:
                fixed += [-4, tgt_r[i + 1], tgt_r[i]]
                i += 3
            else:
                fixed.append(tgt_r[i])
                i += 1
        return infer_reshape(src_r, fixed, False, op)[::-1]
    out: list[int] = []
    i = j = 0
    infer_at = -1
    while j < len(tgt):
        t = tgt[j]
        if t > 0:
            out.append(t); i += 1
        elif t == 0:
            if i >= len(src):
                raise ShapeError(f"{op}: code 0 at position {j} has no source dim in {src}")
            out.append(src[i]); i += 1
        elif t == -1:
            if infer_at >= 0:
                raise ShapeError(f"{op}: more than one -1 in target shape {tuple(target)}")
            infer_at = len(out); out.append(-1); i += 1
        elif t == -2:
            out.extend(src[i:]); i = len(src)
        elif t == -3:
            if i + 1 >= len(src):
                raise ShapeError(f"{op}: code -3 needs two source dims at {i} in {src}")
            out.append(src[i] * src[i + 1]); i += 2
        elif t == -4:
            if j + 2 >= len(tgt) or i >= len(src):
                raise ShapeError(f"{op}: code -4 needs two following values and a source dim")
            d, a, b = src[i], tgt[j + 1], tgt[j + 2]
            if a == -1:
                a = d // b
            if b == -1:
                b = d // a
            if a * b != d:
                raise ShapeError(f"{op}: cannot split dim {d} into ({tgt[j+1]}, {tgt[j+2]})")
            out += [a, b]; i += 1; j += 2
        else:
            raise ShapeError(f"{op}: invalid code {t} in target shape {tuple(target)}")
        j += 1
    total = int(np.prod(src, dtype=np.int64))
    if infer_at >= 0:
        known = int(np.prod([d for k, d in enumerate(out) if k != infer_at], dtype=np.int64))
        if known == 0 or total % known:
            raise ShapeError(f"{op}: cannot reshape {src} to {tuple(target)}")
        out[infer_at] = total // known
    if int(np.prod(out, dtype=np.int64)) != total:
        raise ShapeError(f"{op}: cannot reshape array of shape {src} (size {total}) into {tuple(target)} "
                         f"-> {tuple(out)}")
    return tuple(out)


def broadcast_shape(a: Sequence[int], b: Sequence[int], op: str = "broadcast") -> tuple[int, ...]:
    """numpy broadcasting of two shapes, with an error naming both."""
    a, b = tuple(a), tuple(b)
    if a == b:
        return a
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"{op}: shapes {a} and {b} cannot be broadcast together")
    return tuple(out)


def unify_groups(op: str, group: Sequence[str], n: int,
                 shapes: list[tuple[int, ...] | None]) -> list[tuple[int, ...] | None]:
    """Shape inference of a fused multi-tensor update whose inputs come in ``n`` groups of
    ``len(group)`` arrays named ``{name}_{i}`` (weight, grad, states...), every array of a
    group of one shape. Fills the unknown shapes of each group in ``shapes`` (in place) from
    its known ones and returns the ``n`` group shapes (None where the whole group is
    unknown); a group member of another shape raises, naming it."""
    k = len(group)
    outs: list[tuple[int, ...] | None] = []
    for i in range(n):
        grp = shapes[i * k:(i + 1) * k]
        known = next((s for s in grp if s is not None), None)
        for name, s in zip(group, grp):
            if s is not None and s != known:
                raise ShapeError(f"{op}: {name}_{i} has shape {s}, weight_{i}'s group has {known} "
                                 f"(shapes {dict(zip(group, grp))})")
        shapes[i * k:(i + 1) * k] = [known] * k
        outs.append(known)
    return outs
