"""mx.contrib.io, mx.contrib.svrg_optimization and mx.contrib.text against MXNet 1.9.1
(fixture written by ``fixtures/make_mxnet_contrib.py``, cases in ``contrib_cases.py``):
DataLoaderIter batches, pads and dtypes; SVRG training trajectories, full-gradient
snapshots, hand-driven steps and the wrapping optimizer; vocabulary index orders, token
counts, custom/composite embeddings, the embedding registry and download URLs."""
from __future__ import annotations

import json
import os
import warnings
from typing import Any

import pytest

import plexnet as mx

pytest.importorskip("plexnet_ops_basic", reason="needs an operator plugin (pip install plexnet-ops-basic)")

from . import contrib_cases as cc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "mxnet_contrib.json")) as _f:
    REF = json.load(_f)

pytestmark = pytest.mark.timeout(120)


def _same(got: Any, ref: Any, where: str = "", tol: float = 1e-5) -> None:
    """Equal, floats to ``tol`` relative (float32 arithmetic in a different order)."""
    if isinstance(ref, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), (where, got, ref)
        assert abs(got - ref) <= tol / 10 + tol * abs(ref), (where, got, ref)
    elif isinstance(ref, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(ref), (where, sorted(got), sorted(ref))
        for k in ref:
            _same(got[k], ref[k], f"{where}.{k}", tol)
    elif isinstance(ref, list):
        got = list(got) if isinstance(got, tuple) else got
        assert isinstance(got, list) and len(got) == len(ref), (where, got, ref)
        for i, (g, r) in enumerate(zip(got, ref)):
            _same(g, r, f"{where}[{i}]", tol)
    else:
        assert got == ref, (where, got, ref)


def _json(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


@pytest.mark.parametrize("name", sorted(cc.IO_CASES))
def test_dataloader_iter(name: str) -> None:
    _same(_json(cc.io_case(mx, name)), REF["io"][name], name)


@pytest.mark.parametrize("name", sorted(cc.SVRG_FIT_CASES))
def test_svrg_fit_trajectory(name: str) -> None:
    # four epochs of float32 updates (Adam divides by a small root): 1e-4
    _same(_json(cc.svrg_fit_case(mx, name)), REF["svrg_fit"][name], name, tol=1e-4)


def test_svrg_hand_driven_steps() -> None:
    _same(_json(cc.svrg_steps_case(mx)), REF["svrg_steps"], "steps")


def test_svrg_errors_and_optimizer() -> None:
    _same(_json(cc.svrg_misc_case(mx)), REF["svrg_misc"], "misc")


def test_count_tokens_from_str() -> None:
    _same(_json(cc.text_utils_case(mx)), REF["text_utils"], "utils")


@pytest.mark.parametrize("name", sorted(cc.VOCAB_CASES))
def test_vocabulary(name: str) -> None:
    _same(_json(cc.vocab_case(mx, name)), REF["vocab"][name], name)


def test_custom_and_composite_embeddings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(_json(cc.embedding_case(mx)), REF["embedding"], "embedding")


def test_registry_and_pretrained_files() -> None:
    from plexnet.contrib.text import _registry
    saved = {k: dict(v) for k, v in _registry._REGISTRY.items()}
    try:
        _same(_json(cc.registry_case(mx)), REF["registry"], "registry")
    finally:   # the case registers an embedding class: leave the registry as it was
        _registry._REGISTRY.clear()
        _registry._REGISTRY.update(saved)


@pytest.mark.parametrize("name", sorted(REF["signatures"]))
def test_signature(name: str) -> None:
    got, ref = _json(cc.signatures(mx))[name], REF["signatures"][name]
    if name.endswith("SVRGModule.fit"):
        # plexnet's Module.fit options (progress=...) pass through **kwargs
        assert got[-1] == ["kwargs", "VAR_KEYWORD", "<required>"]
        got = got[:-1]
    if name.endswith(":properties"):
        # plexnet's DataIter base also makes provide_data/provide_label properties
        assert set(ref) <= set(got), (name, got, ref)
        return
    _same(got, ref, name)
