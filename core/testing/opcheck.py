"""The operator test harness (``plexnet.testing``): run one operator straight through
the operator contract, as plugin authors test their operators.

No NDArray, no executor, no engine: the harness creates the ``OperatorProperty`` from
the global registry (installed plugins included), infers shapes and types, creates the
``Operator`` for ``cpu()``, builds an ``OpContext`` with the requested resources,
allocates outputs and calls ``forward`` / ``backward`` directly on numpy arrays.

Public API (keep it stable, other test suites use it)::

    prop = make_prop(name, kwargs)
    in_shapes, out_shapes, aux_shapes = infer_shapes(name, kwargs, data=(2, 3), ...)
    args = random_args(name, kwargs, data=(2, 3), seed=0, dtype="float64", low=-1, high=1)

    outs = run_forward(name, inputs, kwargs, aux=None, is_train=True, req="write")
    outs[0], outs.aux, outs.prop          # all outputs (hidden ones included), aux after forward

    grads = run_backward(name, inputs, kwargs, out_grads=None, aux=None, req="write")
    grads[0], grads.outputs, grads.aux    # one in_grad per argument

    check_forward(name, inputs, kwargs, expected, rtol=1e-5, atol=1e-6)
    check_gradient(name, inputs, kwargs, wrt=None, out_index=None, eps=1e-6, rtol=1e-5, atol=1e-7)
    check_req(name, inputs, kwargs, req=("null", "write", "add", "inplace"))

``inputs`` is a sequence in ``list_arguments()`` order or a dict keyed by argument name.
``kwargs`` are the operator's keyword arguments (Python values or MXNet strings).
``aux`` likewise for ``list_auxiliary_states()``; when omitted, aux states start as zeros
(or as ``aux_init`` values, e.g. ``{"moving_var": 1.0}``). Forward updates the aux arrays
given by the caller in place (as an executor would); the harness never mutates the
caller's ``inputs``.

Conventions followed (MXNet's legacy-operator rules):

* ``out_grad`` has one entry per *visible* output (``num_visible_outputs()``);
* backward only receives the arrays named by ``declare_backward_dependency``; the others
  are passed as ``None``, so an operator that reads an undeclared array fails loudly;
* ``req="inplace"`` aliases the arrays named by ``forward_inplace_option`` /
  ``backward_inplace_option``.
* the harness checks that an operator does not modify its (non-aliased) inputs.

**A second device.** With ``PLEXNET_OPCHECK_CTX`` set to a context (``gpu(0)``), every
``run_forward`` / ``run_backward`` (so every ``check_*``) also runs the operator on that
context -- device copies of the very same inputs, preallocated outputs, gradients and aux
states (aliasing kept: ``inplace`` shares one device array), the context's run context,
stream and resources, the CPU's implementation (``PLEXNET_OPCHECK_IMPL=registry``: the
registry's choice for the device, e.g. cuDNN), twice on two streams without
synchronisation in between -- and compares every array afterwards with the CPU run (outputs,
input gradients, aux states, untouched inputs, ``null`` outputs): ``DEVICE_TOL`` per dtype,
tight when the device is simulated. Results returned to the test are the CPU ones, so
every test keeps checking them against its float64 reference; the central differences of
``check_gradient`` run on the CPU only. Values of operators that request a random resource
are not compared (device generators differ), only shapes; their backward gets the CPU's
forward outputs (the mask) and is compared. An operator that raises an exception with
``device_unsupported = True`` (ops-basic's ``DeviceUnsupported``) on the device is recorded
in ``MIRROR.unsupported`` instead of failing. ``MIRROR`` counts what was compared
(ops-basic's ``conftest.py`` prints it and writes it to ``PLEXNET_OPCHECK_REPORT``).
"""
from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

import plexnet
from plexnet.engine.runctx import run_context
from plexnet.operator import OpContext, OpReqType
from plexnet.resource import ResourceManager

__all__ = ["CTX", "DEVICE", "DEVICE_IMPL", "MIRROR", "make_prop", "infer_shapes", "random_args", "run_forward",
           "run_backward", "check_forward", "check_gradient", "check_req", "numeric_grad", "assert_close",
           "Outputs", "Grads", "REQS"]

CTX = plexnet.cpu()
REQS = ("null", "write", "add", "inplace")


def _parse_ctx(text: str) -> "plexnet.Context | None":
    text = text.strip()
    if not text or text.lower() in ("0", "none", "off", "cpu", "cpu(0)"):
        return None
    m = re.fullmatch(r"([a-z_]+)(?:\((\d+)\))?", text)
    if m is None:
        raise ValueError(f"PLEXNET_OPCHECK_CTX={text!r}: expected a context such as 'gpu(0)'")
    return plexnet.Context(m.group(1), int(m.group(2) or 0))


#: the second context every run is repeated on and compared with the CPU (None: off)
DEVICE = _parse_ctx(os.environ.get("PLEXNET_OPCHECK_CTX", ""))
#: which implementation runs on ``DEVICE``: ``same`` (default) the one the CPU run uses
#: (ops-basic's ``xp`` code), ``registry`` the registry's choice for the device (e.g. cuDNN)
DEVICE_IMPL = os.environ.get("PLEXNET_OPCHECK_IMPL", "same").strip().lower() or "same"
if DEVICE_IMPL not in ("same", "registry"):
    raise ValueError(f"PLEXNET_OPCHECK_IMPL={DEVICE_IMPL!r}: expected 'same' or 'registry'")


# ---------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------
def make_prop(name: str, kwargs: Mapping[str, Any] | None = None):
    """A property for ``name`` from the global registry, initialised with ``kwargs``."""
    return plexnet.plugins.registries().operators.create_property(name, dict(kwargs or {}))


def infer_shapes(name: str, kwargs: Mapping[str, Any] | None = None, **shapes: Any):
    """``(in_shapes, out_shapes, aux_shapes)`` from known argument shapes given by name."""
    prop = make_prop(name, kwargs)
    args = prop.list_arguments()
    unknown = [k for k in shapes if k not in args]
    if unknown:
        raise TypeError(f"{name}: unknown argument(s) {unknown}; arguments are {args}")
    ins = [tuple(shapes[a]) if shapes.get(a) is not None else None for a in args]
    return prop.infer_shape(ins)


def random_args(name: str, kwargs: Mapping[str, Any] | None = None, *, seed: int = 0,
                dtype: Any = "float64", low: float = -1.0, high: float = 1.0,
                **shapes: Any) -> dict[str, np.ndarray]:
    """Uniform random arrays for every argument, shapes inferred from those given."""
    in_shapes, _, _ = infer_shapes(name, kwargs, **shapes)
    prop = make_prop(name, kwargs)
    rng = np.random.default_rng(seed)
    out = {}
    for a, s in zip(prop.list_arguments(), in_shapes):
        if s is None:
            raise ValueError(f"{name}: shape of argument {a!r} cannot be inferred from {shapes}")
        out[a] = rng.uniform(low, high, s).astype(dtype)
    return out


class Outputs(list):
    """Forward outputs (every output, hidden ones included) plus context."""

    aux: list[np.ndarray]
    prop: Any
    inputs: list[np.ndarray]


class Grads(list):
    """Input gradients (one per argument) plus the forward results they came from."""

    outputs: Outputs
    aux: list[np.ndarray]
    prop: Any


def _parse_req(req: Any, n: int, what: str, nvis: int | None = None) -> list[OpReqType]:
    if isinstance(req, (str, int, OpReqType)):
        r = OpReqType.parse(req)
        nv = n if nvis is None else nvis
        return [r] * nv + [OpReqType.write] * (n - nv)  # hidden outputs are always written
    reqs = [OpReqType.parse(r) for r in req]
    if len(reqs) != n:
        raise ValueError(f"expected {n} {what} req values, got {len(reqs)}")
    return reqs


def _inputs_list(prop: Any, inputs: Any) -> list[np.ndarray]:
    args = prop.list_arguments()
    if isinstance(inputs, Mapping):
        unknown = [k for k in inputs if k not in args]
        missing = [a for a in args if a not in inputs]
        if unknown or missing:
            raise TypeError(f"{prop.op_name}: arguments are {args}; unknown {unknown}, missing {missing}")
        inputs = [inputs[a] for a in args]
    inputs = list(inputs)
    if len(inputs) != len(args):
        raise TypeError(f"{prop.op_name}: expected {len(args)} inputs {args}, got {len(inputs)}")
    return [np.array(x, copy=True) if not np.isscalar(x) else np.array(x) for x in inputs]


def _aux_list(prop: Any, aux: Any, aux_shapes: Sequence[Any], aux_types: Sequence[Any],
              aux_init: Mapping[str, float] | None) -> list[np.ndarray]:
    names = prop.list_auxiliary_states()
    if aux is None:
        init = dict(aux_init or {})
        return [np.full(s, init.get(n, 0.0), dtype=t or np.float32) for n, s, t in zip(names, aux_shapes, aux_types)]
    if isinstance(aux, Mapping):
        aux = [aux[n] for n in names]
    aux = list(aux)
    if len(aux) != len(names):
        raise TypeError(f"{prop.op_name}: expected {len(names)} aux states {names}, got {len(aux)}")
    for n, a, s in zip(names, aux, aux_shapes):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"aux state {n!r} must be a numpy array (it is updated in place)")
        if s is not None and tuple(a.shape) != tuple(s):
            raise ValueError(f"{prop.op_name}: aux state {n!r} has shape {a.shape}, inferred {s}")
    return aux


def _infer(prop: Any, ins: list[np.ndarray]):
    in_shapes, out_shapes, aux_shapes = prop.infer_shape([tuple(x.shape) for x in ins])
    for a, x, s in zip(prop.list_arguments(), ins, in_shapes):
        if s is None or tuple(s) != tuple(x.shape):
            raise AssertionError(f"{prop.op_name}: infer_shape changed/lost the shape of argument {a!r}: "
                                 f"given {x.shape}, returned {s}")
    for o, s in zip(prop.list_outputs(), out_shapes):
        if s is None:
            raise AssertionError(f"{prop.op_name}: infer_shape left output {o!r} unknown")
    assert len(out_shapes) == prop.num_outputs(), "infer_shape returned the wrong number of outputs"
    assert len(aux_shapes) == len(prop.list_auxiliary_states()), "wrong number of aux shapes"
    in_types, out_types, aux_types = prop.infer_type([x.dtype for x in ins])
    return [tuple(s) for s in out_shapes], [tuple(s) for s in aux_shapes], out_types, aux_types


def _resources(requests: Iterable[Any], seed: int | None) -> list[Any]:
    mgr = plexnet.resource.get() if seed is None else ResourceManager(global_seed=seed)
    return [mgr.request(CTX, r) for r in requests]


def _opctx(is_train: bool, requested: list[Any]) -> OpContext:
    return OpContext(bool(is_train), run_context(CTX, "test"), requested)


def _garbage(shape: Any, dtype: Any, rng: np.random.Generator) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dtype=dt)
    return rng.integers(-100, 100, shape).astype(dt)


# ---------------------------------------------------------------------------------------
# the second device (PLEXNET_OPCHECK_CTX)
# ---------------------------------------------------------------------------------------
class _MirrorStats:
    """What the device runs compared: ``runs[op]``, ``unsupported[op] = message``."""

    def __init__(self) -> None:
        self.runs: Counter = Counter()
        self.arrays = 0
        self.unsupported: dict[str, str] = {}

    def as_dict(self) -> dict[str, Any]:
        return {"device": str(DEVICE), "operators": len(self.runs), "runs": sum(self.runs.values()),
                "arrays": self.arrays, "per_operator": dict(sorted(self.runs.items())),
                "unsupported": dict(sorted(self.unsupported.items()))}


MIRROR = _MirrorStats()


def _device_tol(dtype: Any, simulated: bool) -> dict[str, float]:
    """Tolerances of the device against the CPU: a simulated device computes with numpy
    (same algorithms, float64 nearly exact); a real GPU sums in other orders, uses other
    libraries (cuBLAS, cuDNN) and math functions."""
    kind, size = np.dtype(dtype).kind, np.dtype(dtype).itemsize
    if kind not in "fc":
        return dict(rtol=0, atol=0)
    if size <= 2:
        return dict(rtol=1e-3, atol=1e-3) if simulated else dict(rtol=1e-2, atol=1e-2)
    if size <= 4:
        return dict(rtol=1e-5, atol=1e-6) if simulated else dict(rtol=2e-3, atol=2e-4)
    return dict(rtol=1e-9, atol=1e-12) if simulated else dict(rtol=1e-7, atol=1e-9)


#: looser tolerances (any dtype) for operators whose device path may use another formula:
#: ``erf`` without ``cupyx.scipy.special`` (the simulator) is an approximation with
#: |error| < 1.5e-7, used by ``erf`` and LeakyReLU's ``gelu``
DEVICE_TOL = {"erf": dict(rtol=1e-6, atol=5e-7), "LeakyReLU": dict(rtol=1e-6, atol=5e-7)}

#: device streams the runs use, per context (CuPy-like devices: two non-blocking streams)
_streams: dict[Any, list[Any]] = {}


def _snapshot(groups: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Copies of the arrays of ``groups`` (``None`` entries kept), aliasing kept."""
    memo: dict[int, np.ndarray] = {}
    out = []
    for g in groups:
        row = []
        for a in g:
            if a is not None and id(a) not in memo:
                memo[id(a)] = np.array(a, copy=True)
            row.append(None if a is None else memo[id(a)])
        out.append(row)
    return out


def _uses_random(requests: Iterable[Any]) -> bool:
    from plexnet.resource import ResourceRequest
    return any(getattr(r, "type", r) == ResourceRequest.kRandom for r in requests)


def _device_operator(prop: Any) -> Any:
    """The operator for ``DEVICE``: the CPU run's implementation (``DEVICE_IMPL='same'``),
    else the registry's choice for the device."""
    assert DEVICE is not None
    if DEVICE_IMPL == "registry":
        return prop.create_operator(DEVICE)
    reg = plexnet.plugins.registries().operators
    impl = reg.select_impl(prop.op_name, CTX.device_type).impl_name
    for r in reg.implementations(prop.op_name):
        if r.impl_name == impl and r.device_type in (DEVICE.device_type, "*"):
            return r.factory(prop, DEVICE)
    raise AssertionError(f"{prop.op_name}: implementation {impl!r} (the CPU's) is not registered for {DEVICE}")


def _on_device(prop: Any, snap: list[list[Any]], call: Callable[..., None], requests: Sequence[Any],
               is_train: bool, seed: int | None) -> list[list[list[Any]]] | None:
    """Run ``call(op, opctx, *groups)`` on ``DEVICE`` with device copies of ``snap`` (one
    device array per host array: aliasing kept). On a CuPy-like device it runs twice, on
    two non-blocking streams of its own with no synchronisation in between (as two engine
    workers of the device share the operator instance): state an operator keeps between
    calls and uses from another stream is a stream race (the simulator raises). Returns
    host copies of every group after each run, or None when the operator says it does not
    run there (``device_unsupported``)."""
    from plexnet.backends import get_backend
    be = get_backend(DEVICE)
    xp = be.xp
    assert DEVICE is not None
    dev_id = DEVICE.device_id
    cuda = getattr(xp, "cuda", None)
    if cuda is None:
        be.activate(dev_id)
    streams = _streams.get(DEVICE)
    if streams is None:
        if cuda is not None:
            with cuda.Device(dev_id):
                streams = [cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)]
        else:
            streams = [None]
        _streams[DEVICE] = streams
    runs = []
    with contextlib.ExitStack() as scope:
        if cuda is not None:
            scope.enter_context(cuda.Device(dev_id))
        op = _device_operator(prop)  # one instance for both streams, as engine workers share it
        for stream in streams:
            with contextlib.ExitStack() as on_stream:
                if stream is not None:
                    on_stream.enter_context(stream)
                memo: dict[int, Any] = {}

                def up(h: np.ndarray, memo: dict[int, Any] = memo, stream: Any = stream) -> Any:
                    d = memo.get(id(h))
                    if d is None:
                        d = memo[id(h)] = xp.empty(h.shape, dtype=h.dtype)
                        be.from_host(h, d, stream)
                    return d

                dev = [[None if h is None else up(h) for h in g] for g in snap]
                # resources of their own per run (the engine serialises the users of one
                # workspace; these runs are not serialised)
                mgr = ResourceManager(global_seed=seed)
                opctx = OpContext(bool(is_train), run_context(DEVICE, "opcheck", stream),  # type: ignore[arg-type]
                                  [mgr.request(DEVICE, r) for r in requests])
                try:
                    call(op, opctx, *dev)
                except Exception as e:  # noqa: BLE001 - re-raised unless the operator opts out
                    if getattr(e, "device_unsupported", False):
                        MIRROR.unsupported.setdefault(prop.op_name, str(e))
                        for st in streams:
                            be.synchronize(st)
                        return None
                    raise
                runs.append((stream, dev))
        out = []
        for stream, dev in runs:
            out.append([[None if d is None else be.to_host(d, stream) for d in g] for g in dev])
            be.synchronize(stream)
    return out


def _compare(name: str, phase: str, labels: list[list[str]], cpu: list[list[Any]], dev: list[list[Any]],
             values: bool = True) -> None:
    from plexnet.backends import get_backend
    simulated = bool(getattr(get_backend(DEVICE), "simulated", False))
    for lab_g, c_g, d_g in zip(labels, cpu, dev):
        for lab, c, d in zip(lab_g, c_g, d_g):
            if c is None:
                continue
            what = f"{name}: {phase} on {DEVICE} differs from {CTX}: {lab}"
            assert d.shape == c.shape and d.dtype == c.dtype, \
                f"{what}: {d.dtype}{d.shape} against {c.dtype}{c.shape}"
            MIRROR.arrays += 1
            if not values:
                continue
            tol = DEVICE_TOL.get(name) or _device_tol(c.dtype, simulated)
            if c.dtype.kind in "fc":
                np.testing.assert_allclose(d, c, equal_nan=True, err_msg=what, **tol)  # type: ignore[call-overload]
            else:
                np.testing.assert_array_equal(d, c, err_msg=what)


# ---------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------
def run_forward(name: str, inputs: Any, kwargs: Mapping[str, Any] | None = None, aux: Any = None, *,
                is_train: bool = True, req: Any = "write", out: Sequence[np.ndarray] | None = None,
                seed: int | None = 0, aux_init: Mapping[str, float] | None = None,
                check_inputs: bool = True, mirror: bool = True) -> Outputs:
    """Run forward once. ``req``: one value for the visible outputs (hidden ones get
    ``write``, as an executor gives them) or a list with one per output; ``out``: preallocated
    outputs (default: NaN garbage for write, zeros for add/null); ``seed``: seed of a
    private random resource (``None``: the global one). ``req="inplace"`` aliases the
    outputs named by ``forward_inplace_option`` to their inputs. ``mirror=False``: not on
    ``DEVICE`` (the central differences of ``check_gradient``)."""
    prop = make_prop(name, kwargs)
    ins = _inputs_list(prop, inputs)
    out_shapes, aux_shapes, out_types, aux_types = _infer(prop, ins)
    auxs = _aux_list(prop, aux, aux_shapes, aux_types, aux_init)
    nout = prop.num_outputs()
    reqs = _parse_req(req, nout, "output", prop.num_visible_outputs())
    rng = np.random.default_rng(1234)
    if out is None:
        outs = [(_garbage(s, t or ins[0].dtype, rng) if r in (OpReqType.write, OpReqType.inplace)
                 else np.zeros(s, dtype=t or ins[0].dtype)) for s, t, r in zip(out_shapes, out_types, reqs)]
    else:
        outs = list(out)
        for o, s in zip(outs, out_shapes):
            assert tuple(o.shape) == s, f"preallocated output has shape {o.shape}, inferred {s}"
    if any(r == OpReqType.inplace for r in reqs):
        nin = len(ins)
        pairs = prop.forward_inplace_option(list(range(nin)), list(range(nin, nin + nout)))
        for oi, r in enumerate(reqs):
            if r != OpReqType.inplace:
                continue
            src = [i for i, oo in pairs if oo - nin == oi]
            if not src:
                raise ValueError(f"{name}: req 'inplace' for output {oi} but forward_inplace_option "
                                 f"declares {pairs}")
            assert ins[src[0]].shape == outs[oi].shape and ins[src[0]].dtype == outs[oi].dtype, \
                f"{name}: in-place pair {src[0]}->{oi} differs in shape or dtype"
            outs[oi] = ins[src[0]]
    aliased = {id(o) for o in outs}
    saved = [x.copy() for x in ins] if check_inputs else None
    requests = prop.forward_resource([x.shape for x in ins])
    snap = _snapshot([ins, outs, auxs]) if DEVICE is not None and mirror else None
    op = prop.create_operator(CTX)
    ctx = _opctx(is_train, _resources(requests, seed))
    op.forward(ctx, ins, reqs, outs, auxs)
    if snap is not None:
        devs = _on_device(prop, snap, lambda o, c, i, u, a: o.forward(c, i, reqs, u, a), requests, is_train, seed)
        for dev in devs or ():
            labels = [[f"in_data {a!r}" for a in prop.list_arguments()],
                      [f"forward req {reqs[k].name!r} output {o!r}" for k, o in enumerate(prop.list_outputs())],
                      [f"aux {a!r} after forward" for a in prop.list_auxiliary_states()]]
            _compare(prop.op_name, "forward", labels, [ins, outs, auxs], dev, values=not _uses_random(requests))
        if devs:
            MIRROR.runs[prop.op_name] += 1
    if saved is not None:
        for a, x, s in zip(prop.list_arguments(), ins, saved):
            if id(x) not in aliased:
                np.testing.assert_array_equal(x, s, err_msg=f"{name}: forward modified input {a!r}")
    res = Outputs(outs)
    res.aux, res.prop, res.inputs = auxs, prop, ins
    return res


def run_backward(name: str, inputs: Any, kwargs: Mapping[str, Any] | None = None, out_grads: Any = None,
                 aux: Any = None, *, is_train: bool = True, req: Any = "write",
                 in_grads: Sequence[np.ndarray] | None = None, seed: int | None = 0,
                 aux_init: Mapping[str, float] | None = None, check_inputs: bool = True,
                 fwd: Outputs | None = None) -> Grads:
    """Run forward (req write) then backward. ``out_grads``: one per visible output
    (default ones); ``req``: one value or one per argument; ``in_grads``: preallocated
    gradient arrays (default NaN garbage for write, zeros for add/null). Only the arrays
    declared by ``declare_backward_dependency`` reach ``backward``."""
    prop = make_prop(name, kwargs)
    if fwd is None:
        fwd = run_forward(name, inputs, kwargs, aux, is_train=is_train, seed=seed, aux_init=aux_init,
                          check_inputs=check_inputs)
    ins, outs, auxs = [x.copy() for x in fwd.inputs], [o.copy() for o in fwd], fwd.aux
    nvis, nin, nout = prop.num_visible_outputs(), len(ins), prop.num_outputs()
    if out_grads is None:
        ograds = [np.ones_like(outs[i]) for i in range(nvis)]
    else:
        ograds = [np.array(g, dtype=outs[i].dtype, copy=True) for i, g in enumerate(out_grads)]
        if len(ograds) != nvis:
            raise ValueError(f"{name}: expected {nvis} out_grads (visible outputs), got {len(ograds)}")
    reqs = _parse_req(req, nin, "argument")
    rng = np.random.default_rng(4321)
    if in_grads is None:
        igrads = [(_garbage(x.shape, x.dtype, rng) if r in (OpReqType.write, OpReqType.inplace)
                   else np.zeros_like(x)) for x, r in zip(ins, reqs)]
    else:
        igrads = list(in_grads)
    og_ids = list(range(nvis))
    in_ids = list(range(nvis, nvis + nin))
    out_ids = list(range(nvis + nin, nvis + nin + nout))
    deps = set(prop.declare_backward_dependency(og_ids, in_ids, out_ids))
    by_id = {**{i: a for i, a in zip(og_ids, ograds)}, **{i: a for i, a in zip(in_ids, ins)},
             **{i: a for i, a in zip(out_ids, outs)}}
    if any(r == OpReqType.inplace for r in reqs):
        ig_ids = list(range(nvis + nin + nout, nvis + 2 * nin + nout))
        pairs = prop.backward_inplace_option(og_ids, in_ids, out_ids, ig_ids)
        for k, r in enumerate(reqs):
            if r != OpReqType.inplace:
                continue
            src = [i for i, g in pairs if g == ig_ids[k]]
            if not src:
                raise ValueError(f"{name}: req 'inplace' for in_grad {k} but backward_inplace_option "
                                 f"declares {pairs}")
            arr = by_id[src[0]]
            assert arr.shape == igrads[k].shape, f"{name}: in-place pair {src[0]}->in_grad {k} differs in shape"
            igrads[k] = arr
            deps.add(src[0])  # the aliased array is handed over whether declared or not
    aliased = {id(g) for g in igrads}
    pick = lambda ids, arrs: [a if i in deps else None for i, a in zip(ids, arrs)]  # noqa: E731
    g_og, g_in, g_out = pick(og_ids, ograds), pick(in_ids, ins), pick(out_ids, outs)
    saved = [None if a is None else a.copy() for a in g_og + g_in + g_out] if check_inputs else None
    requests = prop.backward_resource([x.shape for x in ins])
    snap = _snapshot([g_og, g_in, g_out, igrads, auxs]) if DEVICE is not None else None
    op = prop.create_operator(CTX)
    ctx = _opctx(is_train, _resources(requests, seed))
    op.backward(ctx, g_og, g_in, g_out, reqs, igrads, auxs)
    if snap is not None:
        devs = _on_device(prop, snap, lambda o, c, og, i, u, ig, a: o.backward(c, og, i, u, reqs, ig, a),
                          requests, is_train, seed)
        for dev in devs or ():
            args = prop.list_arguments()
            labels = [[f"out_grad[{i}]" for i in og_ids], [f"in_data {a!r}" for a in args],
                      [f"out_data {o!r}" for o in prop.list_outputs()],
                      [f"backward req {reqs[k].name!r} in_grad {a!r}" for k, a in enumerate(args)],
                      [f"aux {a!r} after backward" for a in prop.list_auxiliary_states()]]
            _compare(prop.op_name, "backward", labels, [g_og, g_in, g_out, igrads, auxs], dev,
                     values=not _uses_random(requests))
        if devs:
            MIRROR.runs[prop.op_name] += 1
    if saved is not None:
        names = ([f"out_grad[{i}]" for i in og_ids] + [f"in_data {a!r}" for a in prop.list_arguments()]
                 + [f"out_data {o!r}" for o in prop.list_outputs()])
        for lab, a, s in zip(names, g_og + g_in + g_out, saved):
            if a is not None and id(a) not in aliased:
                np.testing.assert_array_equal(a, s, err_msg=f"{name}: backward modified {lab}")
    res = Grads(igrads)
    res.outputs, res.aux, res.prop = fwd, auxs, prop
    return res


# ---------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------
def assert_close(actual: Any, expected: Any, rtol: float = 1e-5, atol: float = 1e-6, msg: str = "") -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{msg}: shape {actual.shape} != expected {expected.shape}"
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                               err_msg=msg)


def check_forward(name: str, inputs: Any, kwargs: Mapping[str, Any] | None, expected: Any, rtol: float = 1e-5,
                  atol: float = 1e-6, *, aux: Any = None, expected_aux: Any = None, is_train: bool = True,
                  seed: int | None = 0, aux_init: Mapping[str, float] | None = None) -> Outputs:
    """Forward outputs equal ``expected`` (an array: the first output; a list: the first
    ``len(list)`` outputs, ``None`` entries skipped; a callable: called with the input
    arrays). ``expected_aux`` likewise for the aux states after forward."""
    outs = run_forward(name, inputs, kwargs, aux, is_train=is_train, seed=seed, aux_init=aux_init)
    if callable(expected):
        expected = expected(*[x.copy() for x in outs.inputs])
    exp = [expected] if isinstance(expected, np.ndarray) or np.isscalar(expected) else list(expected)
    for i, e in enumerate(exp):
        if e is not None:
            assert_close(outs[i], e, rtol, atol, f"{name}: output {outs.prop.list_outputs()[i]!r}")
    if expected_aux is not None:
        for i, e in enumerate(expected_aux):
            if e is not None:
                assert_close(outs.aux[i], e, rtol, atol, f"{name}: aux {outs.prop.list_auxiliary_states()[i]!r}")
    return outs


def numeric_grad(f: Callable[[], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of scalar ``f()`` with respect to array ``x`` (modified in place
    and restored)."""
    g = np.zeros(x.shape, dtype=np.float64)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    assert np.shares_memory(flat, x)
    for i in range(flat.size):
        v = flat[i]
        flat[i] = v + eps
        fp = f()
        flat[i] = v - eps
        fm = f()
        flat[i] = v
        gflat[i] = (fp - fm) / (2 * eps)
    return g


def check_gradient(name: str, inputs: Any, kwargs: Mapping[str, Any] | None = None, *, wrt: Sequence[str] | None = None,
                   out_index: Sequence[int] | None = None, aux: Any = None, aux_init: Mapping[str, float] | None = None,
                   is_train: bool = True, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7,
                   seed: int = 0, dtype: Any = np.float64, out_grads: Any = None) -> Grads:
    """Backward equals central-difference gradients of ``sum(out[i] * head[i])`` over the
    visible outputs in ``out_index`` (default all visible), computed in ``dtype``
    (float64). ``wrt``: argument names to check (default: all). Head gradients are random
    (seeded) unless ``out_grads`` is given; outputs not in ``out_index`` get zero head
    gradient. Every forward evaluation uses the same random seed and fresh aux copies."""
    prop = make_prop(name, kwargs)
    args = prop.list_arguments()
    ins = _inputs_list(prop, inputs)
    ins = [x.astype(dtype) for x in ins]
    aux0 = None
    if aux is not None:
        aux0 = [np.array(a, dtype=dtype) for a in (aux.values() if isinstance(aux, Mapping) else aux)]
    fwd = run_forward(name, ins, kwargs, None if aux0 is None else [a.copy() for a in aux0], is_train=is_train,
                      seed=seed, aux_init=aux_init)
    nvis = prop.num_visible_outputs()
    idx = list(range(nvis)) if out_index is None else list(out_index)
    rng = np.random.default_rng(seed + 99)
    if out_grads is None:
        heads = [rng.normal(size=fwd[i].shape).astype(dtype) if i in idx else np.zeros_like(fwd[i])
                 for i in range(nvis)]
    else:
        heads = [np.asarray(g, dtype=dtype) for g in out_grads]
    grads = run_backward(name, ins, kwargs, heads, is_train=is_train, seed=seed, fwd=fwd)

    def f() -> float:
        o = run_forward(name, ins, kwargs, None if aux0 is None else [a.copy() for a in aux0], is_train=is_train,
                        seed=seed, aux_init=aux_init, check_inputs=False, mirror=False)
        return float(sum(np.sum(o[i].astype(np.float64) * heads[i]) for i in idx))

    for k, a in enumerate(args):
        if wrt is not None and a not in wrt:
            continue
        num = numeric_grad(f, ins[k], eps)
        assert_close(grads[k], num, rtol, atol, f"{name}: gradient of {a!r} (analytic vs numeric)")
    return grads


def check_req(name: str, inputs: Any, kwargs: Mapping[str, Any] | None = None, req: Any = REQS, *,
              aux: Any = None, aux_init: Mapping[str, float] | None = None, is_train: bool = True,
              backward: bool = True, forward: bool = True, out_grads: Any = None, seed: int = 0,
              rtol: float = 1e-5, atol: float = 1e-6) -> list[str]:
    """Each ``req`` value is honoured in forward (outputs) and backward (input grads):
    ``write`` overwrites garbage (NaN), ``add`` accumulates onto existing values, ``null``
    leaves arrays untouched (hidden outputs are always requested with ``write``),
    ``inplace`` (only where the operator declares an in-place option) aliases and still
    gives the reference result. A single ``req="inplace"`` on an
    operator with no in-place option skips the test. Returns what was checked."""
    reqs = [req] if isinstance(req, str) else list(req)
    prop = make_prop(name, kwargs)
    ins = _inputs_list(prop, inputs)
    nin, nout, nvis = len(ins), prop.num_outputs(), prop.num_visible_outputs()
    aux_given = None if aux is None else [np.array(a, copy=True)
                                          for a in (aux.values() if isinstance(aux, Mapping) else aux)]
    fresh_aux = lambda: None if aux_given is None else [a.copy() for a in aux_given]  # noqa: E731
    kw: dict[str, Any] = dict(is_train=is_train, seed=seed, aux_init=aux_init)
    done: list[str] = []
    got: Any
    rng = np.random.default_rng(seed + 7)
    if forward:
        ref = run_forward(name, ins, kwargs, fresh_aux(), **kw)
        for r in reqs:
            if r == "inplace":
                pairs = prop.forward_inplace_option(list(range(nin)), list(range(nin, nin + nout)))
                outs_ip = {o - nin for _, o in pairs}
                if not outs_ip:
                    continue
                rq = ["inplace" if o in outs_ip and o < nvis else "write" for o in range(nout)]
                got = run_forward(name, ins, kwargs, fresh_aux(), req=rq, **kw)
                for o in range(nout):
                    assert_close(got[o], ref[o], rtol, atol, f"{name}: forward req {rq[o]!r} output {o}")
            else:
                init = [rng.uniform(-1, 1, o.shape).astype(o.dtype) for o in ref]
                out = [np.full_like(o, np.nan) if (r == "write" or k >= nvis) and o.dtype.kind == "f" else i.copy()
                       for k, (o, i) in enumerate(zip(ref, init))]
                got = run_forward(name, ins, kwargs, fresh_aux(), req=r, out=out, **kw)
                for o in range(nout):
                    rr = r if o < nvis else "write"
                    exp = {"write": ref[o], "add": init[o] + ref[o], "null": init[o]}[rr]
                    assert_close(got[o], exp, rtol, atol, f"{name}: forward req {r!r} output {o}")
                    assert got[o] is out[o]
            done.append(f"forward:{r}")
    if backward:
        fwd = run_forward(name, ins, kwargs, fresh_aux(), **kw)
        if out_grads is None:
            out_grads = [rng.normal(size=fwd[i].shape).astype(fwd[i].dtype) for i in range(nvis)]
        ref_g = run_backward(name, ins, kwargs, out_grads, fwd=fwd, **kw)
        for r in reqs:
            if r == "inplace":
                og, ii = list(range(nvis)), list(range(nvis, nvis + nin))
                oo = list(range(nvis + nin, nvis + nin + nout))
                ig = list(range(nvis + nin + nout, nvis + 2 * nin + nout))
                pairs = prop.backward_inplace_option(og, ii, oo, ig)
                targets = {ig.index(g) for _, g in pairs}
                if not targets:
                    continue
                rq = ["inplace" if k in targets else "write" for k in range(nin)]
                got = run_backward(name, ins, kwargs, out_grads, req=rq, fwd=fwd, **kw)
                for k in range(nin):
                    assert_close(got[k], ref_g[k], rtol, atol, f"{name}: backward req {rq[k]!r} in_grad {k}")
            else:
                init = [rng.uniform(-1, 1, g.shape).astype(g.dtype) for g in ref_g]
                buf = [np.full_like(g, np.nan) if r == "write" and g.dtype.kind == "f" else i.copy()
                       for g, i in zip(ref_g, init)]
                got = run_backward(name, ins, kwargs, out_grads, req=r, in_grads=buf, fwd=fwd, **kw)
                for k in range(nin):
                    exp = {"write": ref_g[k], "add": init[k] + ref_g[k], "null": init[k]}[r]
                    assert_close(got[k], exp, rtol, atol, f"{name}: backward req {r!r} in_grad {k} "
                                 f"({prop.list_arguments()[k]!r})")
            done.append(f"backward:{r}")
    if req == "inplace" and not done:
        import pytest
        pytest.skip(f"{name} declares no in-place option")
    return done
