"""MXNet 1.x's Python custom operators: ``CustomOp``, ``CustomOpProp``, ``register``.

::

    @plexnet.operator.register("sqr")
    class SqrProp(plexnet.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Sqr()

    y = plexnet.nd.Custom(x, op_type="sqr")         # or plexnet.sym.Custom(..., op_type="sqr")

As in MXNet, ``forward``/``backward`` receive NDArrays and may call any NDArray API
(``asnumpy``, ``nd.*``) because they run on a custom-op thread, not on an engine worker:
the engine sees the operator as one asynchronous operation that completes when the
Python code and every write it pushed have finished. Errors raised in the Python code
surface at the next wait point, naming the custom op.
"""
from __future__ import annotations

import os
import queue
import threading
from typing import Any, Sequence

import numpy as np

from ..base import PlexnetError, ShapeError
from ..hookspecs import hookimpl
from .contract import OpContext, Operator, OperatorProperty, OpReqType
from .params import ParamError

__all__ = ["CustomOp", "CustomOpProp", "register", "get_custom_prop", "CustomProperty"]

_REQ_NAMES = {OpReqType.null: "null", OpReqType.write: "write", OpReqType.inplace: "inplace",
              OpReqType.add: "add"}
_custom_props: dict[str, type] = {}
_pool: "_Workers | None" = None


class CustomOp:
    """Base class of a custom operator's computation (MXNet ``mx.operator.CustomOp``)."""

    def forward(self, is_train: bool, req: list[str], in_data: list[Any], out_data: list[Any], aux: list[Any]) -> None:
        raise NotImplementedError

    def backward(self, req: list[str], out_grad: list[Any], in_data: list[Any], out_data: list[Any], in_grad: list[Any],
                 aux: list[Any]) -> None:
        raise NotImplementedError

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Write ``src`` into ``dst`` according to ``req`` ('null', 'write', 'inplace', 'add')."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise ValueError(f"CustomOp.assign: unknown req {req!r}")


class CustomOpProp:
    """Semantics of a custom operator (MXNet ``mx.operator.CustomOpProp``). Keyword
    arguments given to ``nd.Custom``/``sym.Custom`` reach ``__init__`` as strings."""

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list[Any]) -> tuple[Any, ...]:
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type: list[Any]) -> tuple[Any, ...]:
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def declare_backward_dependency(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any]) -> list[Any]:
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx: Any, in_shapes: list[Any], in_dtypes: list[Any]) -> CustomOp:
        return CustomOp()


def register(reg_name: str) -> Any:
    """Class decorator registering a ``CustomOpProp`` subclass under ``reg_name``."""
    def do_register(prop_cls: type) -> type:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError(f"register({reg_name!r}): {prop_cls!r} is not a CustomOpProp subclass")
        _custom_props[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_custom_prop(op_type: str) -> type:
    try:
        return _custom_props[op_type]
    except KeyError:
        known = ", ".join(sorted(_custom_props)) or "none"
        raise ParamError(f"Custom: op_type {op_type!r} is not registered with "
                         f"plexnet.operator.register (registered: {known})") from None


class CustomProperty(OperatorProperty):
    """The ``Custom`` operator: delegates every question to the user's CustomOpProp."""

    def init(self, kwargs: dict[str, Any]) -> None:
        kwargs = dict(kwargs)
        kwargs.pop("name", None)
        if "op_type" not in kwargs:
            raise ParamError("Custom: required argument 'op_type' is missing")
        self.op_type = str(kwargs.pop("op_type"))
        self.kwargs = {k: str(v) for k, v in kwargs.items()}
        cls = get_custom_prop(self.op_type)
        try:
            self.user = cls(**self.kwargs)
        except TypeError as e:
            raise ParamError(f"Custom[{self.op_type}]: bad arguments {self.kwargs}: {e}") from None
        self._shapes: list[Any] | None = None
        self._types: list[Any] | None = None

    def get_params(self) -> dict[str, str]:
        return {"op_type": self.op_type, **self.kwargs}

    def list_arguments(self) -> list[str]:
        return list(self.user.list_arguments())

    def list_outputs(self) -> list[str]:
        return list(self.user.list_outputs())

    def list_auxiliary_states(self) -> list[str]:
        return list(self.user.list_auxiliary_states())

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        n_out, n_aux = len(self.list_outputs()), len(self.list_auxiliary_states())
        if any(s is None for s in in_shape):
            # as MXNet: the user's infer_shape sees unknown shapes as [] and may fill them
            # in from the known ones (a label's shape from the data's)
            try:
                res = self.user.infer_shape([list(s) if s is not None else [] for s in in_shape])
                ins = [tuple(int(d) for d in s) or None for s in res[0]]
                outs = [tuple(int(d) for d in s) or None for s in res[1]]
                aux = [tuple(int(d) for d in s) or None for s in (res[2] if len(res) > 2 else [])]
            except Exception:  # noqa: BLE001 - user code that needs every shape: wait for them
                return list(in_shape), [None] * n_out, [None] * n_aux
            return ins, outs, aux
        try:
            res = self.user.infer_shape([list(s) for s in in_shape])
        except Exception as e:  # noqa: BLE001 - user code
            raise ShapeError(f"Custom[{self.op_type}].infer_shape failed for input shapes "
                             f"{[tuple(s) for s in in_shape]}: {type(e).__name__}: {e}") from e
        known_in = [tuple(int(d) for d in s) for s in res[0]]
        self._shapes = known_in
        return (known_in, [tuple(int(d) for d in s) for s in res[1]],
                [tuple(int(d) for d in s) for s in (res[2] if len(res) > 2 else [])])

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        if any(t is None for t in in_type):
            return super().infer_type(in_type)
        res = self.user.infer_type([np.dtype(t).type for t in in_type])
        ins, outs = list(res[0]), list(res[1])
        aux = list(res[2]) if len(res) > 2 else []
        self._types = ins
        return ins, outs, aux

    def declare_backward_dependency(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any]) -> list[Any]:
        return list(self.user.declare_backward_dependency(out_grad, in_data, out_data))

    def need_top_grad(self) -> bool:
        return bool(self.user.need_top_grad_)

    def is_stateless(self) -> bool:
        return False

    def create_operator(self, ctx: Any) -> Operator:
        shapes = self._shapes or []
        types = self._types or [np.float32] * len(shapes)
        return CustomOperator(self.op_type, self.user.create_operator(ctx, [list(s) for s in shapes], types))


class _Workers:
    """The custom-op threads. Not a ``concurrent.futures`` pool: that one refuses work once
    the interpreter starts exiting (before ``atexit`` handlers run), so an engine finishing
    a script's pending Custom backward at exit failed; daemon threads keep serving until
    the engine's exit handler has drained its operations."""

    def __init__(self, n: int) -> None:
        self._q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        for i in range(n):
            threading.Thread(target=self._serve, name=f"plexnet-custom-op_{i}", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self._q.get()()

    def submit(self, job: Any) -> None:
        self._q.put(job)


def _executor() -> _Workers:
    global _pool
    if _pool is None:
        n = int(os.environ.get("PLEXNET_CUSTOM_OP_NUM_THREADS", os.environ.get("MXNET_CUSTOM_OP_NUM_THREADS", "1")))
        _pool = _Workers(max(1, n))
    return _pool


def _after_fork_in_child() -> None:
    # the pool's threads do not exist in a forked child; its bookkeeping says they do, so a
    # submit would queue work no thread reads (MXNet restarts its custom-op worker likewise)
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _wrap(arrays: Sequence[Any], ctx: Any) -> list[Any]:
    from ..ndarray.ndarray import from_numpy_view
    return [None if a is None else from_numpy_view(a, ctx) for a in arrays]


class CustomOperator(Operator):
    """Runs a Python CustomOp on the custom-op thread as one async engine operation."""

    is_async = True

    def __init__(self, op_type: str, user_op: CustomOp) -> None:
        self.op_type = op_type
        self.user_op = user_op

    def _run(self, ctx: OpContext, body: Any, written: list[Any], on_complete: Any, label: str) -> None:
        from .. import engine

        def job() -> None:
            try:
                # as MXNet's profiler: the callback is "<op>::pure_python", the operations it
                # pushes "<op>::<name>" (both under "Custom Operator" in the statistics)
                with engine.op_name_prefix(label + "::"):
                    obs = engine.get().observers
                    toks, err = engine.start_observers(obs, label + "::pure_python", ctx.run_ctx.ctx, "custom")
                    if err is not None:
                        raise err
                    try:
                        body()
                    finally:
                        engine.end_observers(obs, toks)
                for w in written:  # the user's NDArray writes must land before we finish
                    if w is not None:
                        engine.get().wait_for_var(w._chunk.var)
            except BaseException as e:  # noqa: BLE001 - reported through the engine
                on_complete(PlexnetError(f"Custom[{self.op_type}]: {type(e).__name__}: {e}").with_traceback(
                    e.__traceback__))
                return
            on_complete()
        _executor().submit(job)

    def forward_async(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                      out_data: Sequence[Any], aux_states: Sequence[Any], on_complete: Any) -> None:
        c = ctx.run_ctx.ctx
        ins, outs, aux = _wrap(in_data, c), _wrap(out_data, c), _wrap(aux_states, c)
        reqs = [_REQ_NAMES[OpReqType(r)] for r in req]
        self._run(ctx, lambda: self.user_op.forward(bool(ctx.is_train), reqs, ins, outs, aux), outs + aux,
                  on_complete, self.op_type)

    def backward_async(self, ctx: OpContext, out_grad: Sequence[Any], in_data: Sequence[Any],
                       out_data: Sequence[Any], req: Sequence[OpReqType], in_grad: Sequence[Any],
                       aux_states: Sequence[Any], on_complete: Any) -> None:
        c = ctx.run_ctx.ctx
        og, ins, outs = _wrap(out_grad, c), _wrap(in_data, c), _wrap(out_data, c)
        ig, aux = _wrap(in_grad, c), _wrap(aux_states, c)
        reqs = [_REQ_NAMES[OpReqType(r)] for r in req]
        self._run(ctx, lambda: self.user_op.backward(reqs, og, ins, outs, ig, aux), ig + aux, on_complete,
                  "_backward_" + self.op_type)

    def forward(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                out_data: Sequence[Any], aux_states: Sequence[Any]) -> None:
        raise PlexnetError("Custom operators run asynchronously; push them with Engine.push_async")


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    registry.register_property("Custom", CustomProperty)
    registry.register_impl("Custom", "*", lambda prop, ctx: prop.create_operator(ctx), impl_name="python")
