"""Runs tests/sparse/symbolic_sparse_cases.py on plexnet and compares with MXNet 1.9.1's
recorded results (fixtures/mxnet_symbolic_sparse.json, written by
fixtures/gen_symbolic_sparse_fixtures.py): storage types, values, gradient row ids."""
import json
import os
import sys

import numpy as np
import pytest

import plexnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from symbolic_sparse_cases import CASES  # noqa: E402

FIXTURES = json.load(open(os.path.join(HERE, "fixtures", "mxnet_symbolic_sparse.json")))["cases"]


def _numeric(v):
    try:
        a = np.asarray(v)
    except ValueError:  # ragged (row ids per step)
        return False
    return a.dtype.kind in "fiu"


def _same(got, want, path):
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (path, sorted(got), sorted(want))
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list) and want and _numeric(want):
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                                   rtol=1e-5, atol=1e-6, err_msg=path)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6), path
    else:
        assert got == want, (path, got, want)


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_case_matches_mxnet(case):
    _same(case(mx), FIXTURES[case.__name__], case.__name__)
