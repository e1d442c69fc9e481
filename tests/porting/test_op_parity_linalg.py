"""linalg behaviour that MXNet 1.9.1's test_operator.py (test_laop) relies on; values
checked against MXNet 1.9.1 with the mxvenv (see docs/porting-operators.md)."""
import numpy as np

import plexnet as mx
from plexnet.test_utils import check_numeric_gradient


def test_potrf_potri_upper():
    a = mx.nd.array([[4., 2.], [2., 3.]])
    u = mx.nd.linalg.potrf(a, lower=False)  # MXNet 1.9.1: [[2, 1], [0, 1.4142135]]
    np.testing.assert_allclose(u.asnumpy(), [[2., 1.], [0., np.sqrt(2.)]], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.linalg.potri(u, lower=False).asnumpy(),
                               np.linalg.inv(a.asnumpy()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mx.nd.linalg.potrf(a).asnumpy(), u.asnumpy().T, rtol=1e-6)


def test_potrf_potri_upper_gradients():
    m = np.array([[9., 3., -6., 12.], [3., 26., -7., -11.], [-6., -7., 9., 7.], [12., -11., 7., 65.]])
    x = mx.sym.var("x")
    sym = mx.sym.linalg.potrf(0.5 * (x + mx.sym.transpose(x)), lower=False)
    check_numeric_gradient(sym, [m], numeric_eps=1e-6, rtol=1e-5, atol=1e-6, dtype=np.float64)
    u = np.linalg.cholesky(m).T
    mask = np.triu(np.ones((4, 4)))
    sym = mx.sym.linalg.potri(mx.sym.broadcast_mul(x, mx.sym.var("mask")), lower=False)
    check_numeric_gradient(sym, {"x": u, "mask": mask}, grad_nodes=["x"], numeric_eps=1e-6, rtol=1e-5,
                           atol=1e-6, dtype=np.float64)
