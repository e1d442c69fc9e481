"""``plexnet.testing``: what plugin authors test their operators with.

The op harness (``plexnet.testing.opcheck``) runs one operator straight through the
operator contract -- no NDArray, executor or engine -- on numpy arrays: forward against a
reference, backward against central-difference gradients, every ``req``
(``null``/``write``/``add``/``inplace``), undeclared backward dependencies passed as
``None`` so that reading them fails, inputs checked for mutation; with
``PLEXNET_OPCHECK_CTX=gpu(0)`` every case also runs on that device and is compared::

    from plexnet.testing import check_forward, check_gradient, check_req

    def test_swish():
        x = np.linspace(-3, 3, 12).reshape(3, 4)
        check_forward("swish", [x], {"beta": 1.0}, [x / (1 + np.exp(-x))])
        check_gradient("swish", [x], {"beta": 1.0})
        check_req("swish", [x], {"beta": 1.0})
"""
from __future__ import annotations

from .opcheck import (
    CTX,
    DEVICE,
    MIRROR,
    REQS,
    Grads,
    Outputs,
    assert_close,
    check_forward,
    check_gradient,
    check_req,
    infer_shapes,
    make_prop,
    numeric_grad,
    random_args,
    run_backward,
    run_forward,
)

__all__ = ["CTX", "DEVICE", "MIRROR", "REQS", "Grads", "Outputs", "assert_close", "check_forward",
           "check_gradient", "check_req", "infer_shapes", "make_prop", "numeric_grad", "random_args",
           "run_backward", "run_forward"]
