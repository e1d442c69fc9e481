"""gluon.contrib.estimator against MXNet 1.9.1 (fixture written by
``fixtures/make_mxnet_estimator.py`` from the cases in ``estimator_cases.py``): the order of
handler calls and what each saw, metric names and values, checkpoint files, resume and
early-stopping epochs, log lines, warnings, error messages and signatures."""
from __future__ import annotations

import json
import math
import os

import pytest

import plexnet as mx

# the cases train a small network: Dense, tanh, softmax cross-entropy are ops-basic's
pytest.importorskip("plexnet_ops_basic", reason="needs an operator plugin (pip install plexnet-ops-basic)")

from .estimator_cases import CASES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "estimator_mxnet.json")) as _f:
    REF = json.load(_f)

pytestmark = pytest.mark.timeout(120)

# parts that differ from MXNet on purpose: {case: {dotted path: reason}}
_DIFFERENT: dict[str, dict[str, str]] = {}


def _same(got, ref, where: str, skip: dict) -> None:
    if where.split(".", 1)[-1] in skip:
        return
    if isinstance(ref, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and isinstance(ref, (int, float)), (where, got, ref)
        if math.isnan(ref):
            assert math.isnan(got), (where, got, ref)
        else:
            assert got == pytest.approx(ref, rel=2e-4, abs=2e-5), (where, got, ref)
        return
    assert type(got) is type(ref), (where, got, ref)
    if isinstance(ref, dict):
        assert sorted(got) == sorted(ref), (where, sorted(got), sorted(ref))
        for k in ref:
            _same(got[k], ref[k], f"{where}.{k}", skip)
    elif isinstance(ref, list):
        assert len(got) == len(ref), (where, got, ref)
        for i, (g, r) in enumerate(zip(got, ref)):
            _same(g, r, f"{where}[{i}]", skip)
    else:
        assert got == ref, (where, got, ref)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case: str) -> None:
    got = json.loads(json.dumps(CASES[case](mx)))
    _same(got, REF[case], case, _DIFFERENT.get(case, {}))
