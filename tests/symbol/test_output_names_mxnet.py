"""Output names of multi-output operators and automatic node numbering as MXNet 1.9.1's
(found by ``tools/mxnet_differential.py --symbols``; expected names printed by MXNet 1.9.1).

nnvm names an operator's outputs ``output`` (one output) or ``output0``, ``output1``, ...,
counting hidden outputs too (``sort`` and ``topk`` with values carry hidden indices,
``det`` its LU factors), unless the operator lists names (``make_loss``: ``loss``;
BatchNorm: ``output, mean, var``)."""
from __future__ import annotations

import re

import pytest

import plexnet as mx

s = mx.sym

CASES = [
    (lambda a: s.topk(a, ret_typ="value"), ["output0"]),
    (lambda a: s.topk(a, ret_typ="mask"), ["output"]),
    (lambda a: s.topk(a), ["output"]),
    (lambda a: s.topk(a, ret_typ="both"), ["output0", "output1"]),
    (lambda a: s.sort(a), ["output0"]),
    (lambda a: s.argsort(a), ["output"]),
    (lambda a: s.MakeLoss(a), ["output"]),
    (lambda a: s.make_loss(a), ["loss"]),
    (lambda a: s.linalg.det(a), ["output0"]),
    (lambda a: s.linalg.slogdet(a), ["output0", "output1"]),
    (lambda a: s.linalg.gelqf(a), ["output0", "output1"]),
    (lambda a: s.linalg.syevd(a), ["output0", "output1"]),
    (lambda a: s.moments(a, axes=(0,)), ["output0", "output1"]),
    (lambda a: s.contrib.ctc_loss(a, s.var("l")), ["output0"]),
    (lambda a: s.CTCLoss(a, s.var("l"), use_label_lengths=True), ["output0"]),
    (lambda a: s.preloaded_multi_sgd_update(a, s.var("g"), s.var("lr"), s.var("wd"), num_weights=1), ["output"]),
    (lambda a: s.multi_sgd_update(a, s.var("g"), a, s.var("g"), lrs=(0.1, 0.1), wds=(0, 0), num_weights=2),
     ["output0", "output1"]),
    (lambda a: s.contrib.box_nms(a), ["output0"]),
    (lambda a: s.BatchNorm(a, output_mean_var=True), ["output", "mean", "var"]),
    (lambda a: s.LayerNorm(a, output_mean_var=True), ["output", "mean", "std"]),
    (lambda a: s.RNN(a, state_size=4, num_layers=1, mode="lstm", state_outputs=True),
     ["output", "state_output", "statecell_output"]),
    (lambda a: s.SliceChannel(a, num_outputs=2), ["output0", "output1"]),
    (lambda a: s.SliceChannel(a, num_outputs=1), ["output0"]),   # SliceChannel lists its names
    (lambda a: s.split_v2(a, 1), ["output"]),                      # split_v2 does not: nnvm's default
    (lambda a: s.split_v2(a, 2), ["output0", "output1"]),
    (lambda a: s.contrib.MultiBoxTarget(a, s.var("l"), s.var("c")), ["loc_target", "loc_mask", "cls_target"]),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_output_names_are_mxnets(i: int) -> None:
    make, suffixes = CASES[i]
    with mx.name.NameManager():
        sym = make(s.var("a"))
    prefix = re.match(r"^(.*?\d+)_", sym.list_outputs()[0]).group(1)
    assert sym.list_outputs() == [f"{prefix}_{x}" for x in suffixes]


def test_a_failed_call_uses_up_its_automatic_name() -> None:
    a = s.var("a")
    with mx.name.NameManager():
        with pytest.raises(mx.base.MXNetError):
            s.max(a, foo=1)
        with pytest.raises(mx.base.MXNetError):
            s.Convolution(a, kernel=(3, 3))
        assert s.max(a).name == "max1"
        assert s.Convolution(a, kernel=(3, 3), num_filter=2).name == "convolution1"


def test_mkldnn_subgraph_backends_leave_the_graph_as_is() -> None:
    # MXNet 1.9.1's CPU build partitions for MKLDNN / MKLDNN_QUANTIZE; plexnet has no fusion
    # pass, so the symbol comes back unchanged instead of failing; other names are refused
    out = s.FullyConnected(s.var("d"), num_hidden=2, name="fc")
    assert out.get_backend_symbol("MKLDNN").list_outputs() == ["fc_output"]
    assert out.optimize_for("MKLDNN_QUANTIZE") is out
    with pytest.raises(mx.base.MXNetError, match="not found"):
        out.get_backend_symbol("TensorRT")
