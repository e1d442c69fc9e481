"""MXNet 1.9.1 mx.image behaviours found by running MXNet's own tests (test_image.py)."""
import numpy as np
import pytest

import plexnet as mx


def _img():
    return mx.nd.array(np.arange(4 * 4 * 3).reshape(4, 4, 3), dtype="uint8")


@pytest.mark.parametrize("interp", [-1, -2, 6, 7, 8, 9, 10, 11, 100])
def test_imresize_unknown_interp_is_mxneterror(interp):
    # MXNet's operator passes interp straight to cv::resize: OpenCV's error, as MXNetError
    # (9 "auto" and 10 "random" are resolved by the Python augmenters, not the operator)
    with pytest.raises(mx.base.MXNetError, match="interp"):
        mx.image.imresize(_img(), 2, 2, interp=interp)


def test_imresize_interp_values_as_mxnet():
    pytest.importorskip("cv2", reason="the image pipeline needs OpenCV: pip install 'plexnet[image]'")
    # values recorded with MXNet 1.9.1 (first 12 of the 2x2x3 result)
    want = {0: [0, 1, 2, 6, 7, 8, 24, 25, 26, 30, 31, 32], 1: [8, 9, 10, 14, 15, 16, 32, 33, 34, 38, 39, 40],
            2: [6, 7, 8, 13, 14, 15, 32, 33, 34, 39, 40, 41], 3: [8, 9, 10, 14, 15, 16, 32, 33, 34, 38, 39, 40],
            4: [6, 7, 8, 13, 14, 15, 32, 33, 34, 39, 40, 41], 5: [8, 9, 10, 14, 15, 16, 32, 33, 34, 38, 39, 40]}
    for interp, vals in want.items():
        assert mx.image.imresize(_img(), 2, 2, interp=interp).asnumpy().ravel().tolist() == vals
