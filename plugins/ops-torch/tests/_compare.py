"""Run an operator through one named implementation (``force_impl``) with the
``plexnet.testing`` harness, and compare the torch implementation against ``xp``."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from plexnet.plugins import registries
from plexnet.testing import opcheck

TOL = {np.dtype(np.float32): dict(rtol=2e-4, atol=2e-5), np.dtype(np.float64): dict(rtol=1e-9, atol=1e-11)}


@contextlib.contextmanager
def impl(name: str, which: str) -> Iterator[None]:
    reg = registries().operators
    reg.force_impl(name, "cpu", which)
    try:
        yield
    finally:
        reg.force_impl(name, "cpu", None)


def chosen(name: str, kwargs: dict) -> Any:
    """The class of the operator the registry picks for ``cpu`` now."""
    import plexnet as mx
    return type(opcheck.make_prop(name, kwargs).create_operator(mx.cpu()))


def _close(a: Any, b: Any, what: str, dtype: Any) -> None:
    if a is None or b is None:
        assert a is None and b is None, what
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), err_msg=what, **TOL[np.dtype(dtype)])


def compare(name: str, inputs: dict, kwargs: dict, *, req: str = "write", is_train: bool = True,
            aux: Any = None, backward: bool = True, seed: int = 0) -> None:
    """Forward outputs, aux states after forward and (with ``backward``) input gradients
    of the torch and xp implementations agree, for ``req`` on every output/gradient."""
    dtype = next(iter(inputs.values())).dtype
    res = {}
    for which in ("xp", "torch"):
        with impl(name, which):
            a = None if aux is None else {k: v.copy() for k, v in aux.items()}
            outs = opcheck.run_forward(name, inputs, kwargs, a, is_train=is_train, req=req)
            grads = None
            if backward:
                rng = np.random.default_rng(seed + 1)
                nvis = outs.prop.num_visible_outputs()
                ogs = [rng.uniform(-1, 1, o.shape).astype(dtype) for o in outs[:nvis]]
                a2 = None if aux is None else {k: v.copy() for k, v in aux.items()}
                grads = opcheck.run_backward(name, inputs, kwargs, ogs, a2, is_train=is_train, req=req)
            res[which] = (outs, grads)
    (ox, gx), (ot, gt) = res["xp"], res["torch"]
    for i, (a, b) in enumerate(zip(ot, ox)):
        _close(a, b, f"{name} output {i} (req {req})", dtype)
    for i, (a, b) in enumerate(zip(ot.aux, ox.aux)):
        _close(a, b, f"{name} aux {i}", dtype)
    if backward:
        for i, (a, b) in enumerate(zip(gt, gx)):
            _close(a, b, f"{name} gradient {i} (req {req})", dtype)
