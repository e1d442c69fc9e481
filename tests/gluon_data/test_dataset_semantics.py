"""gluon.data Dataset views and samplers against MXNet 1.9.1, case by case
(fixture: fixtures/make_mxnet_dataset_fixtures.py)."""
from __future__ import annotations

import json
import os

import pytest

import plexnet as mx
from plexnet.gluon.contrib.data import IntervalSampler

from .dataset_cases import run_cases

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "dataset_semantics.json")) as _f:
    REF = json.load(_f)
GOT = run_cases(mx, IntervalSampler)


@pytest.mark.parametrize("case", sorted(REF))
def test_as_mxnet(case):
    assert GOT[case] == REF[case]
