"""float32 optimizer arithmetic bit for bit against MXNet 1.9.1.

``tests/fixtures/make_mxnet_optimizer_bits_fixtures.py`` defines the cases (optimizers
through ``update_multi_precision``, the fused update operators, LAMB's two phases) and
recorded MXNet's weights and states after each of a few steps; this test replays each
case with plexnet through the same code and wants every element equal: MXNet's kernels
compute in the weight's dtype with their hyper-parameters as ``float`` (parsed the way
dmlc-core parses them), and so do plexnet's (``plexnet.optimizer.kernels``).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import plexnet as mx
from plexnet.optimizer import kernels

_FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
sys.path.insert(0, _FIXTURES)
import make_mxnet_optimizer_bits_fixtures as gen  # noqa: E402

FIXTURE = os.path.join(_FIXTURES, "optimizer_bits", "mxnet_optimizer_bits.npz")
CASES = gen.all_cases()


@pytest.fixture(scope="module")
def ref() -> dict:
    with np.load(FIXTURE) as d:
        return {k: d[k] for k in d.files}


@pytest.mark.parametrize("seed,key,kind,case", [(i, *c) for i, c in enumerate(CASES)], ids=[c[0] for c in CASES])
def test_bits_match_mxnet(ref, seed, key, kind, case):
    inp = gen.make_inputs(seed, gen.case_dtype(kind, case))
    got = gen.run_case(mx, kind, case, inp)
    want = {k.split("/", 1)[1]: v for k, v in ref.items() if k.startswith(key + "/")}
    assert want, f"no recorded arrays for {key}"
    assert sorted(got) == sorted(want), key
    for name, w in want.items():
        g = got[name]
        assert g.dtype == w.dtype, f"{key}/{name}: dtype {g.dtype} != {w.dtype}"
        np.testing.assert_array_equal(g, w, err_msg=f"{key}/{name}")


@pytest.mark.parametrize("value,expected", [
    (0.05, np.float32(0.05)), (1e-8, np.float32(1e-8)), (0.999, np.float32(0.999)),
    # dmlc-core's ParseFloat<float> rounds these one ulp away from float32(value)
    (1.6535419711693278, np.nextafter(np.float32(1.6535419711693278), np.float32(2))),
    (9.682615757193976e-05, np.nextafter(np.float32(9.682615757193976e-05), np.float32(0))),
])
def test_mx_param_parses_like_dmlc(value, expected):
    assert kernels.mx_param(value) == expected
    assert kernels.mx_param(-value) == -expected


def test_l2_norm_matches_both_paths():
    """The exact sequential emulation and the float64 fallback agree within an ulp."""
    x = np.random.RandomState(0).randn(1000).astype(np.float32)
    exact = kernels.l2_norm(np, x)
    assert exact.dtype == np.float32
    big = np.concatenate([x] * 5)   # above NORM_EXACT_MAX: the float64 path
    assert abs(float(kernels.l2_norm(np, big)) - float(exact) * np.sqrt(5)) <= 4e-7 * float(exact) * np.sqrt(5)
