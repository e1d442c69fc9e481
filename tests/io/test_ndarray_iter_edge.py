"""NDArrayIter at the edges, as MXNet 1.9.1 (checked side by side): no examples iterate as
an empty epoch (MXNet: `[]` for every last_batch_handle), with the declared batch shape."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx


@pytest.mark.parametrize("lbh", ["pad", "discard", "roll_over"])
def test_no_examples_iterate_empty(lbh: str) -> None:
    it = mx.io.NDArrayIter(np.zeros((0, 2), "f4"), np.zeros((0,), "f4"), batch_size=5, last_batch_handle=lbh)
    for _ in range(2):
        assert list(it) == []
        it.reset()
    assert it.provide_data[0].shape == (5, 2)


def test_roll_over_with_fewer_examples_than_a_batch_is_refused() -> None:
    # MXNet 1.9.1 accepts it and fails in its second epoch, slicing past the end
    with pytest.raises(ValueError, match="roll_over"):
        mx.io.NDArrayIter(np.zeros((3, 2), "f4"), batch_size=5, last_batch_handle="roll_over")
