"""Sampler semantics MXNet 1.9.1 has that the numpy generator would refuse."""
from __future__ import annotations

import plexnet as mx


def test_sample_uniform_with_low_above_high_draws_between_them() -> None:
    # MXNet 1.9.1: nd.random.uniform(nd.array([2.]), nd.array([1.]), shape=3) draws from
    # (1, 2] without complaint (only the scalar form checks low <= high)
    r = mx.nd.random.uniform(mx.nd.array([2.0, 5.0]), mx.nd.array([1.0, 5.0]), shape=4).asnumpy()
    assert r.shape == (2, 4)
    assert ((r[0] > 1.0) & (r[0] <= 2.0)).all()
    assert (r[1] == 5.0).all()
