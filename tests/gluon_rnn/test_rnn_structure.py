"""gluon.rnn and gluon.contrib.rnn against MXNet 1.9.1 (fixtures written by
``fixtures/make_mxnet_rnn_structure.py``, cases in ``rnn_structure.py``): parameter names,
shapes and initializers, state_info, repr, traced step/unroll/layer graphs, public
signatures and NDArray outputs for fixed weights."""
from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

import plexnet as mx

# the cells' graphs and values are built from ops-basic's operators (zeros, FullyConnected,
# RNN ...): with the core alone there is nothing to compare
pytest.importorskip("plexnet_ops_basic", reason="needs an operator plugin (pip install plexnet-ops-basic)")

from .rnn_structure import (CELLS, DEFERRED_LAYERS, LAYERS, NO_VALUES, cell_structure, cell_values,
                            layer_structure, layer_values, signatures)

HERE = os.path.dirname(os.path.abspath(__file__))
with gzip.open(os.path.join(HERE, "fixtures", "rnn_structure.json.gz"), "rt") as _f:
    REF = json.load(_f)
VALUES = np.load(os.path.join(HERE, "fixtures", "rnn_structure_values.npz"))

pytestmark = pytest.mark.timeout(120)

# differences of the code before its rewrite (removed by the rewrite)
_PENDING: set[str] = set()
# MXNet 1.9.1's CPU (oneDNN) LSTM ignores lstm_state_clip_min/max (its outputs equal an
# unclipped LSTM's); plexnet's RNN operator (plugin ops-basic) clips as documented
_OPERATOR = {"layer_values:lstm_clip"}


def _cases(kind: str, labels: set | list) -> list:
    out = []
    for k in sorted(labels):
        marks = []
        if f"{kind}:{k}" in _PENDING:
            marks.append(pytest.mark.xfail(strict=True, reason="before the rewrite"))
        if f"{kind}:{k}" in _OPERATOR:
            marks.append(pytest.mark.xfail(strict=True, reason="MXNet's CPU LSTM does not clip"))
        out.append(pytest.param(k, marks=marks))
    return out


def _same_graph(got: dict, ref: dict, where: str) -> None:
    if "error" in ref or "error" in got:
        assert got.get("error") == ref.get("error"), where
        return
    for key in ("heads", "merged", "n_out", "n_states"):
        assert got.get(key) == ref.get(key), (where, key)
    assert len(got["nodes"]) == len(ref["nodes"]), (where, [n[1] for n in got["nodes"]],
                                                    [n[1] for n in ref["nodes"]])
    for g, r in zip(got["nodes"], ref["nodes"]):
        assert g[:3] == r[:3], (where, g, r)
        # every attribute plexnet writes is MXNet's value; a defaulted one may be unwritten
        assert all(r[3].get(k) == v for k, v in g[3].items()), (where, g, r)
        if g[0] == "null":
            assert g[3] == r[3], (where, g, r)


def _check(got: dict, ref: dict, where: str) -> None:
    assert set(got) == set(ref), where
    for key in ref:
        if isinstance(ref[key], dict) and ("nodes" in ref[key] or "error" in ref[key]):
            _same_graph(got[key], ref[key], f"{where}:{key}")
            for extra in ("params", "repr"):
                if extra in ref[key]:
                    assert got[key][extra] == ref[key][extra], (where, key, extra)
        else:
            assert got[key] == ref[key], (where, key)


@pytest.mark.parametrize("label", _cases("cell", CELLS))
def test_cell_as_mxnet(label):
    _check(cell_structure(mx, label), REF["cells"][label], label)


@pytest.mark.parametrize("label", _cases("layer", LAYERS))
def test_layer_as_mxnet(label):
    got = layer_structure(mx, label)
    ref = REF["layers"][label]
    for key in ("plain", "with_states"):
        # MXNet packs the weights with _rnn_param_concat (concat that also infers the
        # parts' shapes backwards); plexnet settles the shapes first and uses concat
        for node in ref[key]["nodes"]:
            if node[0] == "_rnn_param_concat":
                node[0] = "Concat"
    _check(got, ref, label)


@pytest.mark.parametrize("label", sorted(DEFERRED_LAYERS))
def test_deferred_layer_as_mxnet(label):
    # the traced graph differs: plexnet ties the first layer's i2h weights to the data
    # shape with extra nodes (see rnn_layer.py); everything else is MXNet's
    got = layer_structure(mx, label, DEFERRED_LAYERS)
    ref = REF["deferred_layers"][label]
    for key in ("plain", "with_states"):
        got.pop(key)
        ref = dict(ref)
        ref.pop(key)
    _check(got, ref, label)


def _values(prefix: str) -> dict[str, np.ndarray]:
    return {k: VALUES[k] for k in VALUES.files if k.startswith(prefix + "/")}


@pytest.mark.parametrize("label", sorted(set(CELLS) - NO_VALUES))
def test_cell_values_as_mxnet(label):
    ref = _values(f"cell/{label}")
    got = cell_values(mx, label)
    errors = {k for k in ref if k.endswith("/error")}
    for k in errors:
        assert str(got.get(k)) == str(ref[k]), k
    assert set(got) == set(ref), (sorted(set(got) ^ set(ref)))
    for k in ref:
        if k not in errors:
            np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("label", _cases("layer_values", LAYERS))
def test_layer_values_as_mxnet(label):
    ref = _values(f"layer/{label}")
    got = layer_values(mx, label)
    assert set(got) == set(ref)
    for k in ref:
        assert got[k].dtype == ref[k].dtype, k
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_public_signatures_as_mxnet():
    got = signatures(mx.gluon.rnn, mx.gluon.rnn.rnn_cell, mx.gluon.rnn.rnn_layer, mx.gluon.contrib.rnn,
                     mx.gluon.contrib.rnn.rnn_cell, mx.gluon.contrib.rnn.conv_rnn_cell)
    ref = REF["signatures"]
    missing = sorted(set(ref) - set(got))
    assert not missing, missing
    diff = {k: (got[k], ref[k]) for k in ref if got[k] != ref[k]}
    assert not diff, diff
