"""MXNet 1.9.1 io behaviours found by running MXNet's own tests (test_loss.py)."""
import numpy as np
import pytest

import plexnet as mx


def test_ndarrayiter_counts_examples_of_the_first_data_array():
    # MXNet's test_loss.test_sample_weight_loss iterates 10 examples with 20-entry labels
    it = mx.io.NDArrayIter(mx.nd.arange(10).reshape((10, 1)),
                           {"label": mx.nd.arange(20), "w": mx.nd.arange(20)}, batch_size=4)
    got = [(b.data[0].asnumpy().ravel().tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it]
    assert got[0] == ([0, 1, 2, 3], [0, 1, 2, 3], 0)
    assert got[1] == ([4, 5, 6, 7], [4, 5, 6, 7], 0)
    assert got[2][0] == [8, 9, 0, 1] and got[2][2] == 2
    assert it.num_data == 10


def test_ndarrayiter_shorter_label_is_refused():
    with pytest.raises(ValueError, match="at least as many examples"):
        mx.io.NDArrayIter(np.zeros((5, 2)), np.zeros(4), 2)
