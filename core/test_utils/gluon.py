"""``check_gluon_hybridize_consistency``: a Gluon block gives the same outputs (and
input gradients) imperatively and hybridized (MXNet 1.9.1's test helper)."""
from __future__ import annotations

import importlib
from typing import Any, Callable

from .compare import assert_almost_equal

__all__ = ["check_gluon_hybridize_consistency"]


def check_gluon_hybridize_consistency(net_builder: Callable[..., Any], data_l: list, numpy_func: Callable | None = None,
                                      test_grad: bool = True, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """Build the net four times (imperative / hybridized, with / without autograd) from
    the same initial parameters and compare outputs and input gradients; with
    ``numpy_func`` also against a numpy reference."""
    autograd = importlib.import_module("plexnet.autograd")
    init_mod = importlib.import_module("plexnet.initializer")

    class _NumpyParamDictInit(init_mod.Initializer):  # type: ignore[name-defined,misc]
        def __init__(self, np_params: dict) -> None:
            super().__init__()
            self._np_params = np_params

        def _init_weight(self, name: str, arr: Any) -> None:
            arr[:] = self._np_params[name]

    saved_out = None
    saved_grads = None
    params_init = None
    for hybridize in (False, True):
        for use_autograd in ([False, True] if test_grad else [False]):
            net = net_builder(prefix="net_")
            if params_init is None:
                net.initialize()
            else:
                net.initialize(params_init)
            if hybridize:
                net.hybridize()
            in_data = [x.copy() for x in data_l]
            if use_autograd:
                for x in in_data:
                    x.attach_grad()
                with autograd.record():
                    out = net(*in_data)
                out.backward(out)
            else:
                out = net(*in_data)
            if params_init is None:
                params_init = _NumpyParamDictInit({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in in_data]
                if saved_grads is None:
                    saved_grads = grads
                else:
                    for g, s in zip(grads, saved_grads):
                        assert_almost_equal(g, s, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol)
