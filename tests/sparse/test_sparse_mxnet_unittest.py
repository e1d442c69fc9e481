"""Checks from MXNet 1.9.1's tests/python/unittest/test_sparse_ndarray.py that the first
port missed (run side by side with MXNet 1.9.1: same results)."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet import test_utils as tu


@pytest.mark.parametrize("src, dst", [("row_sparse", "row_sparse"), ("row_sparse", "default"),
                                      ("default", "row_sparse"), ("default", "csr"), ("csr", "default")])
def test_copyto_between_storage_types(src, dst):
    np.random.seed(3)
    f = tu.rand_ndarray((4, 5), src, density=0.5)
    to = tu.rand_ndarray((4, 5), dst, density=0.5)
    r = f.copyto(to)
    assert r is to and r.stype == dst
    np.testing.assert_array_equal(to.asnumpy(), f.asnumpy())


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_power_and_mod_fall_back_to_dense(stype):
    np.random.seed(4)
    a = np.random.uniform(0.5, 1, (3, 4)).astype("f4")
    b = np.random.uniform(0.5, 1, (3, 4)).astype("f4")
    x, y = mx.nd.array(a).tostype(stype), mx.nd.array(b).tostype(stype)
    for got, want in ((x ** y, a ** b), (2 ** x, 2 ** a), (x ** 2, a ** 2), (x % 0.3, a % np.float32(0.3)),
                      (1.0 % x, np.float32(1.0) % a)):
        assert got.stype == "default"
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
