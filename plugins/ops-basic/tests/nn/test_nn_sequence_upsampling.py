"""SequenceMask/Last/Reverse and UpSampling: numerical gradients, req, errors (values
against MXNet: test_mxnet_fixtures.py)."""
from __future__ import annotations

import numpy as np
import pytest

from opcheck import check_forward, check_gradient, check_req, make_prop
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError

LEN = np.array([2.0, 0.0, 3.0])


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape)


@pytest.mark.parametrize("op", ["SequenceMask", "SequenceLast", "SequenceReverse"])
@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_gradient(op: str, axis: int) -> None:
    if op == "SequenceReverse" and axis == 1:
        pytest.skip("SequenceReverse supports axis=0 only (as MXNet)")
    data = rand(3, 3, 2) if axis == 0 else rand(3, 3, 2, seed=1)
    kw = {"use_sequence_length": True, "axis": axis}
    check_gradient(op, [data, LEN], kw, wrt=["data"])
    check_req(op, [data, LEN], kw, req=("null", "write", "add"))
    check_gradient(op, [data], {"axis": axis})


def test_sequence_values() -> None:
    x = np.arange(6.0).reshape(3, 2, 1)
    check_forward("SequenceMask", [x, np.array([1.0, 2.0])], {"use_sequence_length": True, "value": -1},
                  np.array([[[0], [1]], [[-1], [3]], [[-1], [-1]]]))
    check_forward("SequenceLast", [x, np.array([1.0, 2.0])], {"use_sequence_length": True}, np.array([[0], [3]]))
    check_forward("SequenceReverse", [x, np.array([1.0, 3.0])], {"use_sequence_length": True},
                  np.array([[[0], [5]], [[2], [3]], [[4], [1]]]))
    check_forward("SequenceLast", [x], {}, x[-1])


def test_sequence_errors() -> None:
    with pytest.raises(ShapeError, match=r"SequenceMask.*sequence_length.*\(2,\).*\(3, 2, 1\)"):
        make_prop("SequenceMask", {"use_sequence_length": True}).infer_shape([(3, 2, 1), (3,)])
    with pytest.raises(ShapeError, match=r"SequenceReverse.*axis"):
        make_prop("SequenceReverse", {"axis": 1}).infer_shape([(3, 2, 1)])
    with pytest.raises(ParamError, match="SequenceLast.*axis"):
        make_prop("SequenceLast", {"axis": 2})


def test_upsampling_nearest() -> None:
    x = rand(1, 2, 2, 3)
    check_forward("UpSampling", [x], {"scale": 2, "sample_type": "nearest"}, x.repeat(2, 2).repeat(2, 3))
    check_gradient("UpSampling", [x], {"scale": 2, "sample_type": "nearest"})
    kw = {"scale": 2, "sample_type": "nearest", "num_args": 2}
    ins = [rand(1, 1, 2, 2), rand(1, 2, 4, 4, seed=1)]
    check_gradient("UpSampling", ins, kw)
    check_gradient("UpSampling", [rand(1, 2, 2, 2), rand(1, 2, 1, 1, seed=2)], dict(kw, multi_input_mode="sum"))
    check_req("UpSampling", ins, kw, req=("null", "write", "add"))


def test_upsampling_bilinear() -> None:
    kw = {"scale": 2, "sample_type": "bilinear", "num_args": 2, "num_filter": 2}
    prop = make_prop("UpSampling", kw)
    ins, outs, _ = prop.infer_shape([(1, 2, 3, 3), None])
    assert ins[1] == (2, 1, 4, 4) and outs[0] == (1, 2, 6, 6)
    check_gradient("UpSampling", [rand(1, 2, 3, 3), rand(2, 1, 4, 4, seed=3)], kw)


def test_upsampling_errors() -> None:
    with pytest.raises(ParamError, match="UpSampling.*num_args"):
        make_prop("UpSampling", {"scale": 2, "sample_type": "bilinear"})
    with pytest.raises(ShapeError, match=r"UpSampling.*\(1, 1, 3, 3\)"):
        make_prop("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 2}).infer_shape(
            [(1, 1, 2, 2), (1, 1, 3, 3)])
    with pytest.raises(ShapeError, match=r"UpSampling.*4-D"):
        make_prop("UpSampling", {"scale": 2, "sample_type": "nearest"}).infer_shape([(2, 2)])
