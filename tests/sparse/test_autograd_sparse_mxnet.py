"""Sparse storage under autograd, replayed against MXNet 1.9.1's recorded gradients
(fixtures/mxnet_autograd_sparse.json, written by fixtures/gen_autograd_sparse_fixtures.py from
autograd_sparse_cases.py): the result's storage type, the gradient's storage type, stored rows
or entries and values."""
import json
import os
import sys
import warnings

import numpy as np
import pytest

import plexnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from autograd_sparse_cases import CASES, MXNET_REFUSES  # noqa: E402

FIXTURES = json.load(open(os.path.join(HERE, "fixtures", "mxnet_autograd_sparse.json")))["cases"]


def _run(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sqrt's gradient at 0 (inf, as MXNet's)
        return CASES[name](mx)


#: MXNet 1.9.1 stores a row once per duplicate id (indices [0, 0, 2]); plexnet's row_sparse
#: gradients are canonical (sorted, unique), the values agree (docs/sparse.md "Autograd")
CANONICAL = {"rsp_retain_duplicate_ids"}


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in MXNET_REFUSES))
def test_gradient_matches_mxnet(name):
    want = FIXTURES[name]
    assert "error" not in want, want
    y, g = _run(name)
    if want["y_stype"] is not None:
        assert y.stype == want["y_stype"]
    assert g.stype == want["stype"]
    assert list(g.shape) == want["shape"]
    if g.stype == "row_sparse":
        rows = sorted(set(want["indices"])) if name in CANONICAL else want["indices"]
        assert g.indices.asnumpy().tolist() == rows
    elif g.stype == "csr":
        assert g.indptr.asnumpy().tolist() == want["indptr"]
        assert g.indices.asnumpy().tolist() == want["indices"]
    np.testing.assert_allclose(g.asnumpy(), np.array(want["value"], dtype=np.float64), rtol=1e-6)


#: what plexnet gives where MXNet 1.9.1 raises (docs/sparse.md "Autograd")
PLEXNET_ONLY = {
    # a recorded astype (MXNet's backward Cast fails on the dtypes): the gradient cast back
    "csr_astype": ([0, 1, 2, 0, 1, 2, 0, 1, 2], np.ones((3, 3))),
    # grad_req='add' with a row_sparse gradient: the sum of both backward passes (rows: the union)
    "spdot_rsp_add": ([1, 3], [[0, 0], [8, 8], [0, 0], [0, 0], [0, 0]]),
    "dense_into_rsp_add": ([0, 1, 2], [[6, 6], [6, 6], [6, 6]]),
    "embedding_sparse_grad_add": ([1, 4], [[0, 0], [6, 6], [0, 0], [0, 0], [2, 4], [0, 0]]),
    # Embedding(sparse_grad=True) into a dense gradient array: the dense gradient
    "embedding_sparse_grad_dense_buffer": (None, [[0, 0], [3, 3], [0, 0], [0, 0], [1, 2], [0, 0]]),
}


@pytest.mark.parametrize("name", sorted(MXNET_REFUSES))
def test_where_mxnet_refuses_plexnet_computes(name):
    assert "error" in FIXTURES[name]
    rows, value = PLEXNET_ONLY[name]
    _y, g = _run(name)
    if rows is None:
        assert g.stype == "default"
    elif name == "csr_astype":
        assert g.stype == "csr" and g.indices.asnumpy().tolist() == rows
    else:
        assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == rows
    np.testing.assert_allclose(g.asnumpy(), value)
