"""MXNet 1.9.1 behaviours found by running newer (v1.9.x maintenance) copies of MXNet's
test_ndarray / test_io / test_image / test_gluon_data (docs/porting.md, session 5).
None of these tests needs MXNet; values recorded from MXNet 1.9.1 are written in."""
import numpy as np
import pytest

import plexnet as mx


def test_py_slice_alias_in_ndarray_module():
    # test_ndarray imports `from mxnet.ndarray.ndarray import py_slice` (builtins.slice)
    from plexnet.ndarray.ndarray import py_slice
    assert py_slice is slice
