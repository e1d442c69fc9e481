"""Loading torch, zero-copy views of numpy arrays as tensors, storing by ``req``, and the
base class of every torch operator (the ops-basic implementation as its fallback)."""
from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any, Callable, Sequence

import numpy as np

from plexnet.engine.blas import threads_per_worker
from plexnet.operator import Operator, OpReqType

NULL, WRITE, INPLACE, ADD = OpReqType.null, OpReqType.write, OpReqType.inplace, OpReqType.add
#: dtypes the torch kernels take here (others run the ops-basic implementation)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

#: smallest problem torch takes: the largest array of a call must have at least this many
#: elements. Below it ops-basic's numpy code runs: on small CNNs (the demo's LeNet on
#: 8x8 digits) torch's per-call cost and its OpenMP pool, which the engine's BLAS thread
#: policy does not control, made a training step 2-10x slower; ResNet-18's layers are
#: all above it. ``PLEXNET_TORCH_MIN_ELEMENTS`` overrides it.
MIN_ELEMENTS = int(os.environ.get("PLEXNET_TORCH_MIN_ELEMENTS", str(1 << 18)))

torch: Any = None
_reason: str | None = None
_checked = False
_lock = threading.Lock()
_tls = threading.local()


def load() -> bool:
    """Import torch once; False (with ``reason()``) when it cannot be imported."""
    global torch, _reason, _checked
    if _checked:
        return torch is not None
    with _lock:
        if not _checked:
            try:
                import torch as _t
                torch = _t
            except Exception as e:  # noqa: BLE001 - any import failure makes the plugin unavailable
                _reason = f"torch cannot be imported ({type(e).__name__}: {e}); pip install torch"
            _checked = True
    return torch is not None


def available() -> bool:
    """The registry's availability probe: torch is installed. It is found without being
    imported: importing torch takes 1-2 s and starts its thread pools, which a script whose
    calls all stay below ``MIN_ELEMENTS`` (an MLP, the demo's LeNet) should not pay. torch
    is imported at the first call big enough for it; one that is found but fails to
    import makes every call run ops-basic, and the probe then reports why."""
    if _checked:
        return torch is not None
    return importlib.util.find_spec("torch") is not None


available.reason = lambda: _reason  # type: ignore[attr-defined]


def sync_threads() -> None:
    """Give torch's OpenMP pool, in the calling (worker) thread, the engine's share of the
    cores: all of them while one worker computes, one each while two do (no
    oversubscription). torch reads its thread count once per calling thread, so each
    worker sets its own, and only when the share changed."""
    n = threads_per_worker()
    if getattr(_tls, "threads", 0) != n:
        torch.set_num_threads(n)
        _tls.threads = n


def T(a: Any) -> Any:
    """``a`` (a numpy array) as a tensor sharing its memory; a read-only array is copied
    (torch tensors are always writable)."""
    if not a.flags.writeable:
        a = a.copy()
    return torch.from_numpy(a)


def store(out: Any, req: OpReqType, value: Any) -> None:
    """``out (req)= value`` for a numpy ``out`` and a tensor ``value``."""
    if req == NULL:
        return
    o = torch.from_numpy(out)
    if req == ADD:
        o.add_(value)
    elif o.data_ptr() != value.data_ptr() or o.stride() != value.stride():
        o.copy_(value)


def ok_arrays(arrays: Sequence[Any]) -> bool:
    """Every array is a numpy array of one dtype torch runs here, and the call is big
    enough (``MIN_ELEMENTS``) for torch to pay."""
    dt = None
    biggest = 0
    for a in arrays:
        if a is None:
            continue
        if not isinstance(a, np.ndarray) or a.dtype not in DTYPES:
            return False
        if dt is None:
            dt = a.dtype
        elif a.dtype != dt:
            return False
        biggest = max(biggest, a.size)
    return biggest >= MIN_ELEMENTS


class TorchOp(Operator):
    """An operator that runs through torch where it can and through the ops-basic (xp)
    implementation ``fallback(prop)`` otherwise; subclasses say which inputs they handle
    with ``supports`` (decided per call from the parameters and the arrays)."""

    #: builds the ops-basic operator from the property's parameters
    fallback: Callable[[Any], Operator]

    def __init__(self, prop: Any) -> None:
        self.prop = prop
        self.p = prop.param
        self._xp: Operator | None = None

    @property
    def xp_op(self) -> Operator:
        """The operator that runs the calls torch declines: the best available
        implementation below torch's in the registry (plexnet-ops-numba's where installed),
        else the ops-basic class ``fallback``."""
        if self._xp is None:
            self._xp = _next_impl(self.prop) or type(self).fallback(self.p)
        return self._xp

    def supports(self, ctx: Any, arrays: Sequence[Any]) -> bool:
        return ok_arrays(arrays)

    def takes(self, data: Any) -> bool:
        """Whether torch (not ops-basic) computes a call on input ``data`` (or an array of
        its shape; None when unknown): geometry a subclass refuses runs ops-basic. Decided
        before torch is imported, so a call that ops-basic runs never loads it."""
        return True

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if not (self.supports(ctx, list(in_data) + list(out_data)) and self.takes(in_data[0]) and load()):
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        sync_threads()
        self.torch_forward(ctx, in_data, req, out_data, aux_states)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        data = in_data[0] if in_data[0] is not None else in_grad[0]   # a backward may not read the data
        if not (self.supports(ctx, list(out_grad) + list(in_data) + list(in_grad)) and self.takes(data)
                and load()):
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        sync_threads()
        self.torch_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)

    def torch_forward(self, ctx, in_data, req, out_data, aux_states) -> None:
        raise NotImplementedError

    def torch_backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states) -> None:
        raise NotImplementedError


def _next_impl(prop: Any) -> Operator | None:
    """The highest-priority available cpu implementation of ``prop``'s operator other than
    torch's (a ``PLEXNET_FORCE_IMPL`` choice of torch still falls back through this)."""
    from plexnet.context import cpu
    from plexnet.plugins import registries
    try:
        reg = registries().operators
        for rec in reg.implementations(prop.op_name):
            if rec.impl_name == "torch" or rec.device_type not in ("cpu", "*") or not rec.is_available():
                continue
            return rec.factory(prop, cpu())
    except Exception:  # noqa: BLE001 - an unexpected registry: the ops-basic class
        return None
    return None

