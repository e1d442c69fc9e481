"""Booleans in an index as MXNet 1.9.1's legacy (non-numpy) indexing reads them: a list or
numpy array of booleans is the integers 0 / 1, not a mask; a boolean NDArray is refused
(MXNet: "Cannot perform boolean indexing in legacy mode"). Values printed by MXNet 1.9.1."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

nd = mx.nd


@pytest.mark.parametrize("key", [[True, False, True], np.array([True, False, True])])
def test_boolean_list_is_integer_indices(key) -> None:
    x = nd.array(np.arange(6).reshape(3, 2))
    assert x[key].asnumpy().ravel().tolist() == [2, 3, 0, 1, 2, 3]
    x[key] = 9
    assert x.asnumpy().ravel().tolist() == [9, 9, 9, 9, 4, 5]


def test_boolean_list_inside_a_tuple() -> None:
    x = nd.array(np.arange(6).reshape(3, 2))
    assert x[:, [True, False]].asnumpy().ravel().tolist() == [1, 0, 3, 2, 5, 4]


def test_boolean_ndarray_key_is_refused() -> None:
    x = nd.array(np.arange(6).reshape(3, 2))
    mask = nd.array([1, 0, 1], dtype="bool")
    with pytest.raises(ValueError, match="boolean indexing in legacy mode"):
        x[mask]
    with pytest.raises(ValueError, match="boolean indexing in legacy mode"):
        x[mask] = 1
