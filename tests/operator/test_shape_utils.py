"""plexnet.operator.shape_utils.unify_groups: the fused multi-tensor updates' inference."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plexnet.base import ShapeError
from plexnet.operator.shape_utils import unify_groups

GROUP = ("weight", "grad", "mom")


def test_fills_each_group_from_its_known_member() -> None:
    shapes = [None, (2, 3), None, (4,), None, None, None, None, None]
    outs = unify_groups("multi_sgd_mom_update", GROUP, 3, shapes)
    assert outs == [(2, 3), (4,), None]
    assert shapes == [(2, 3)] * 3 + [(4,)] * 3 + [None] * 3


def test_a_member_of_another_shape_is_named() -> None:
    with pytest.raises(ShapeError, match=r"multi_sgd_mom_update: mom_1 has shape \(5,\), weight_1's group has \(4,\)"):
        unify_groups("multi_sgd_mom_update", GROUP, 2, [(1,), (1,), (1,), (4,), (4,), (5,)])


@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 2)), min_size=1, max_size=4))
def test_every_group_ends_uniform(groups: list[tuple[int, int]]) -> None:
    """Whichever one member of a group is known, the whole group gets its shape."""
    shapes: list = []
    for dim, at in groups:
        shapes += [(dim,) if j == at else None for j in range(3)]
    outs = unify_groups("op", GROUP, len(groups), shapes)
    assert outs == [(dim,) for dim, _ in groups]
    assert shapes == [(dim,) for dim, _ in groups for _ in range(3)]
