"""MXNet 1.9.1's symbolic control-flow operators ``_foreach``, ``_while_loop`` and ``_cond``
(behind ``sym.contrib.foreach`` / ``while_loop`` / ``cond``).

Each node holds its subgraphs (Symbols, ``prop.subgraphs``; MXNet's ``subgraphs`` field of
the JSON node) and takes the outer inputs the front end collected; the ``*_locs``
parameters say which subgraph input each outer input feeds (MXNet's attributes, so
MXNet's JSON loads). ``num_args`` counts the subgraphs too, as MXNet's does.

The operator runs each subgraph with an inner ``Executor`` (bound once per input
shapes and dtypes) step by step. It is an asynchronous operator (``is_async``): the
steps run on a thread of their own that waits for the inner executor, so no engine
worker blocks, and control flow nests. A training forward runs each step on an
executor of its own and keeps them (MXNet keeps each step's state), so backward runs
their backward from the last step to the first with no recomputation, carrying the
gradients of the loop states and summing those of the inputs every step reads
(weights); a backward with no training forward before it runs one first.

* ``_foreach``: steps over the first axis of the data inputs; outputs are the stacked
  step outputs and the final states.
* ``_while_loop``: while the ``cond`` subgraph gives a true value and fewer than
  ``max_iterations`` steps ran, runs ``func``; step outputs are stacked into
  ``max_iterations`` rows (rows past the last step are zero: MXNet leaves them
  unwritten); then the final loop variables.
* ``_cond``: runs ``then`` or ``else`` after the ``cond`` subgraph's value.
"""
from __future__ import annotations

import abc
import ast
import threading
import warnings
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from plexnet.base import PlexnetError, ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

__all__ = ["register"]


def _ints(v: Any) -> tuple[int, ...]:
    if isinstance(v, str):
        v = ast.literal_eval(v.strip() or "()")
    if isinstance(v, (int, np.integer)):
        v = (v,)
    return tuple(int(x) for x in v)


def _known(s: Any) -> bool:
    return s is not None and len(s) > 0 and all(int(d) > 0 for d in s)


class _Base(Params):
    num_args = Field(int, low=1, doc="number of inputs, the subgraphs included")
    num_outputs = Field(int, low=1, doc="number of outputs")


class ForeachParam(_Base):
    num_out_data = Field(int, low=0, doc="number of step outputs (the rest are the states)")
    in_data_locs = Field(_ints, doc="subgraph input of each data input")
    in_state_locs = Field(_ints, doc="subgraph input of each state")
    remain_locs = Field(_ints, doc="subgraph input of each remaining input")


class WhileLoopParam(_Base):
    num_out_data = Field(int, low=0, doc="number of step outputs (the rest are the loop variables)")
    max_iterations = Field(int, low=0, doc="most steps")
    cond_input_locs = Field(_ints, doc="outer input of each input of the cond subgraph")
    func_input_locs = Field(_ints, doc="outer input of each input of the func subgraph")
    func_var_locs = Field(_ints, doc="func input of each loop variable")


class CondParam(_Base):
    cond_input_locs = Field(_ints, doc="outer input of each input of the cond subgraph")
    then_input_locs = Field(_ints, doc="outer input of each input of the then subgraph")
    else_input_locs = Field(_ints, doc="outer input of each input of the else subgraph")


# -- subgraph inference -----------------------------------------------------------------------------
def _sub_infer_shape(g: Any, shapes: Sequence[Any]) -> tuple[dict[str, Any], list[Any]]:
    """Shapes of ``g``'s inputs (by name) and outputs, given those of its inputs in
    ``list_inputs`` order (None: unknown)."""
    names = g.list_inputs()
    known = {n: tuple(s) for n, s in zip(names, shapes) if _known(s)}
    args, outs, aux = g.infer_shape_partial(**known)
    by_name = dict(zip(g.list_arguments() + g.list_auxiliary_states(), list(args) + list(aux)))
    return ({n: (tuple(s) if _known(s) else None) for n, s in by_name.items()},
            [tuple(s) if _known(s) else None for s in outs])


def _sub_infer_type(g: Any, types: Sequence[Any]) -> tuple[dict[str, Any], list[Any]]:
    names = g.list_inputs()
    known = {n: np.dtype(t) for n, t in zip(names, types) if t is not None}
    try:
        with warnings.catch_warnings():  # partial knowledge is expected during the sweeps
            warnings.simplefilter("ignore")
            args, outs, aux = g.infer_type(**known)
    except Exception:  # noqa: BLE001 - not enough known yet: retry on the next sweep
        args = None
    if args is None:  # MXNet's convention: (None, None, None) when incomplete
        return {}, [None] * len(g.list_outputs())
    conv = lambda t: None if t is None else np.dtype(t)  # noqa: E731
    return (dict(zip(g.list_arguments() + g.list_auxiliary_states(), [conv(t) for t in list(args) + list(aux)])),
            [conv(t) for t in outs])


class _SubgraphProp(OperatorProperty):
    """What the three control-flow properties share: subgraphs, stateful, async."""

    n_subgraphs: ClassVar[int] = 1
    subgraphs: list[Any]

    def __init__(self) -> None:
        super().__init__()
        self.subgraphs = []

    def is_stateless(self) -> bool:
        return False  # each node holds its own subgraphs: never cached or shared

    def _graph(self, k: int) -> Any:
        if len(self.subgraphs) != self.n_subgraphs:
            raise PlexnetError(f"{self.op_name}: the node holds {len(self.subgraphs)} subgraphs, the operator "
                               f"needs {self.n_subgraphs} (build it with sym.contrib)")
        return self.subgraphs[k]

    def list_arguments(self) -> list[str]:
        return [f"data{i}" for i in range(self.param.num_args - self.n_subgraphs)]

    def list_outputs(self) -> list[str]:
        return [f"output{i}" for i in range(self.param.num_outputs)]

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        # out_data too: backward uses the step executors the forward kept, so it must follow it
        return list(out_grad) + list(in_data) + list(out_data)

    def create_operator(self, ctx: Any) -> Operator:
        return _CONTROL_OPS[type(self).kind](self)

    kind: ClassVar[str] = ""


def _row_shape(s: Sequence[int]) -> tuple[int, ...]:
    """The shape of one step of a foreach data input: MXNet slices a 1-D input into (1,)."""
    return tuple(s[1:]) if len(s) > 1 else (1,)


def _row(a: Any, t: int) -> Any:
    return a[t:t + 1] if a.ndim == 1 else a[t]


class ForeachProp(_SubgraphProp):
    """Runs the body subgraph once per slice of the data inputs' first axis."""

    param_cls = ForeachParam
    kind = "foreach"

    def _split(self) -> tuple[int, int]:
        p = self.param
        return len(p.in_data_locs), len(p.in_state_locs)

    def _sub_values(self, vals: Sequence[Any], data_row: Callable[[Any], Any]) -> list[Any]:
        p, (nd, ns) = self.param, self._split()
        sub: list[Any] = [None] * len(self._graph(0).list_inputs())
        for k, loc in enumerate(p.in_data_locs):
            sub[loc] = data_row(vals[k])
        for k, loc in enumerate(p.in_state_locs):
            sub[loc] = vals[nd + k]
        for k, loc in enumerate(p.remain_locs):
            sub[loc] = vals[nd + ns + k]
        return sub

    def _back(self, vals: list[Any], by_name: dict[str, Any], wrap_data: Callable[[Any, Any], Any]) -> list[Any]:
        p, (nd, ns) = self.param, self._split()
        names = self._graph(0).list_inputs()
        out = list(vals)
        for k, loc in enumerate(p.in_data_locs):
            out[k] = out[k] if out[k] is not None else wrap_data(k, by_name.get(names[loc]))
        for k, loc in enumerate(p.in_state_locs):
            out[nd + k] = out[nd + k] if out[nd + k] is not None else by_name.get(names[loc])
        for k, loc in enumerate(p.remain_locs):
            j = nd + ns + k
            out[j] = out[j] if out[j] is not None else by_name.get(names[loc])
        return out

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        p, nd = self.param, self._split()[0]
        steps = next((s[0] for s in in_shape[:nd] if s is not None and len(s) > 0 and s[0] > 0), None)
        for k, s in enumerate(in_shape[:nd]):
            if s is not None and len(s) > 0 and steps is not None and s[0] not in (0, steps):
                raise ShapeError(f"_foreach: data input {k} has {s[0]} steps, data input 0 has {steps} "
                                 f"(shapes {in_shape[:nd]})")
        sub = self._sub_values(in_shape, lambda s: None if s is None or len(s) == 0 else _row_shape(s))
        by_name, outs = _sub_infer_shape(self._graph(0), sub)
        ins = self._back([tuple(s) if _known(s) else None for s in in_shape], by_name,
                         lambda k, s: None if s is None or steps is None else (steps,) + tuple(s))
        # an unknown step count stays an unknown (0) leading dim (MXNet 1.x partial inference)
        res = [None if o is None else (steps or 0,) + o for o in outs[:p.num_out_data]]
        return ins, res + outs[p.num_out_data:], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        sub = self._sub_values(in_type, lambda t: t)
        by_name, outs = _sub_infer_type(self._graph(0), sub)
        return self._back(list(in_type), by_name, lambda k, t: t), outs, []


class WhileLoopProp(_SubgraphProp):
    """Runs the func subgraph while the cond subgraph holds (at most ``max_iterations``)."""

    param_cls = WhileLoopParam
    n_subgraphs = 2
    kind = "while_loop"

    def _infer(self, vals: list, infer: Callable, row: Callable[[Any], Any]) -> tuple[list, list, list]:
        p = self.param
        names_c, names_f = self._graph(0).list_inputs(), self._graph(1).list_inputs()
        by_c, _ = infer(self._graph(0), [vals[u] for u in p.cond_input_locs])
        by_f, outs = infer(self._graph(1), [vals[u] for u in p.func_input_locs])
        ins = list(vals)
        for names, locs, by in ((names_c, p.cond_input_locs, by_c), (names_f, p.func_input_locs, by_f)):
            for n, u in zip(names, locs):
                if ins[u] is None:
                    ins[u] = by.get(n)
        var_outs = [ins[p.func_input_locs[v]] for v in p.func_var_locs]
        return ins, [row(o) for o in outs[:p.num_out_data]] + var_outs, []

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        m = self.param.max_iterations
        return self._infer([tuple(s) if _known(s) else None for s in in_shape], _sub_infer_shape,
                           lambda o: None if o is None else (m,) + o)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return self._infer(list(in_type), _sub_infer_type, lambda t: t)


class CondProp(_SubgraphProp):
    """Runs the then or the else subgraph after the cond subgraph's value."""

    param_cls = CondParam
    n_subgraphs = 3
    kind = "cond"

    def _infer(self, vals: list, infer: Callable) -> tuple[list, list, list]:
        p = self.param
        ins = list(vals)
        outs: list[Any] = [None] * p.num_outputs
        for k, locs in enumerate((p.cond_input_locs, p.then_input_locs, p.else_input_locs)):
            g = self._graph(k)
            by, o = infer(g, [vals[u] for u in locs])
            for n, u in zip(g.list_inputs(), locs):
                if ins[u] is None:
                    ins[u] = by.get(n)
            if k:
                outs = [a if a is not None else b for a, b in zip(outs, o)]
        return ins, outs, []

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        return self._infer([tuple(s) if _known(s) else None for s in in_shape], _sub_infer_shape)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return self._infer(list(in_type), _sub_infer_type)


# -- running subgraphs -------------------------------------------------------------------------------
class _Runner:
    """One subgraph bound by an inner executor per input shapes/dtypes."""

    def __init__(self, g: Any, ctx: Any) -> None:
        self.g, self.ctx = g, ctx
        self.names = g.list_inputs()
        self._execs: dict[tuple, Any] = {}
        self._kept: dict[int, Any] = {}  # slot -> executor of the last training forward

    def _exec(self, values: Sequence[Any], grad: bool, slot: int = -1) -> Any:
        key = (slot, tuple(v.shape for v in values), tuple(v.dtype for v in values), grad)
        ex = self._execs.get(key)
        if ex is None:
            args = set(self.g.list_arguments())
            req = {n: ("write" if grad and np.issubdtype(v.dtype, np.floating) else "null")
                   for n, v in zip(self.names, values) if n in args}
            ex = self.g.simple_bind(self.ctx, grad_req=req, type_dict={n: v.dtype for n, v in zip(self.names, values)},
                                    **{n: v.shape for n, v in zip(self.names, values)})
            self._execs[key] = ex
        for n, v in zip(self.names, values):
            dst = ex.arg_dict.get(n)
            (dst if dst is not None else ex.aux_dict[n])[:] = v
        return ex

    def forward(self, values: Sequence[Any], is_train: bool = False, slot: int | None = None) -> list[Any]:
        """Outputs (copies: the executor's arrays are reused by the next step). With a
        ``slot`` (a step number) the step runs in training mode on an executor of its
        own, kept for ``backward(slot, ...)``, as MXNet keeps each step's state."""
        if slot is None:
            ex = self._exec(values, False)
        else:
            ex = self._kept[slot] = self._exec(values, True, slot)
        return [o.copy() for o in ex.forward(is_train=is_train or slot is not None)]

    def backward(self, slot: int, head_grads: Sequence[Any]) -> list[Any]:
        """Gradients of the inputs of the step kept in ``slot`` (``None`` for integer
        inputs), in ``list_inputs`` order."""
        ex = self._kept[slot]
        ex.backward(list(head_grads))
        return [None if ex.grad_dict.get(n) is None else ex.grad_dict[n].copy() for n in self.names]


def _wrap(arrays: Sequence[Any], ctx: Any) -> list[Any]:
    from plexnet.ndarray.ndarray import from_numpy_view
    return [None if a is None else from_numpy_view(a, ctx) for a in arrays]


def _store(dst: Any, req: Any, value: Any) -> None:
    r = OpReqType(int(req))
    if r == OpReqType.null:
        return
    if r == OpReqType.add:
        dst[:] = dst + value
    else:
        dst[:] = value


def _truth(v: Any) -> bool:
    a = v.asnumpy()
    if a.size != 1:
        raise ShapeError(f"control flow: the condition must hold one value, got shape {a.shape}")
    return bool(a.reshape(-1)[0])


class _ControlOp(Operator, abc.ABC):
    """Runs ``_forward``/``_backward`` (NDArray code) on a thread, then completes."""

    is_async = True

    def __init__(self, prop: _SubgraphProp) -> None:
        self.prop, self.p = prop, prop.param
        self._runners: dict[tuple[int, Any], _Runner] = {}
        #: steps (or the branch) the last training forward kept for backward; None: none
        self._kept: Any = None

    def runner(self, k: int, ctx: Any) -> _Runner:
        r = self._runners.get((k, ctx))
        if r is None:
            r = self._runners[(k, ctx)] = _Runner(self.prop._graph(k), ctx)
        return r

    def _spawn(self, body: Callable[[], list[Any]], on_complete: Any) -> None:
        def job() -> None:
            try:
                for w in body():
                    if w is not None:
                        w.wait_to_read()
            except BaseException as e:  # noqa: BLE001 - reported through the engine
                on_complete(PlexnetError(f"{self.prop.op_name}: {type(e).__name__}: {e}").with_traceback(
                    e.__traceback__))
                return
            on_complete()
        threading.Thread(target=job, name=f"plexnet-{self.prop.op_name}", daemon=True).start()

    def forward_async(self, ctx: Any, in_data: Sequence[Any], req: Sequence[Any], out_data: Sequence[Any],
                      aux_states: Sequence[Any], on_complete: Any) -> None:
        c = ctx.run_ctx.ctx
        ins, outs = _wrap(in_data, c), _wrap(out_data, c)
        self._spawn(lambda: self._forward(c, bool(ctx.is_train), ins, list(req), outs), on_complete)

    def backward_async(self, ctx: Any, out_grad: Sequence[Any], in_data: Sequence[Any], out_data: Sequence[Any],
                       req: Sequence[Any], in_grad: Sequence[Any], aux_states: Sequence[Any],
                       on_complete: Any) -> None:
        c = ctx.run_ctx.ctx
        og, ins, ig = _wrap(out_grad, c), _wrap(in_data, c), _wrap(in_grad, c)
        self._spawn(lambda: self._backward(c, og, ins, list(req), ig), on_complete)

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux_states: Any) -> None:
        raise PlexnetError(f"{self.prop.op_name} runs asynchronously; push it with Engine.push_async")

    @abc.abstractmethod
    def _forward(self, c: Any, is_train: bool, ins: list, req: list, outs: list) -> list[Any]:
        """Write the outputs (NDArrays over ``out_data``); returns the arrays to wait for."""

    @abc.abstractmethod
    def _backward(self, c: Any, og: list, ins: list, req: list, ig: list) -> list[Any]:
        """Write the input gradients; returns the arrays to wait for."""


def _finish_grads(ig: list, req: list, grads: list) -> list[Any]:
    from plexnet.ndarray.ndarray import zeros
    for dst, r, gv in zip(ig, req, grads):
        if dst is None:
            continue
        _store(dst, r, gv if gv is not None else zeros(dst.shape, dst.context, dst.dtype))
    return ig


def _acc(total: Any, g: Any) -> Any:
    if g is None:
        return total
    return g if total is None else total + g


class _LoopOp(_ControlOp):
    """Loops: step outputs written row by row, then the final states."""

    #: zero the rows of the step outputs first (a while loop may stop early)
    zero_fill: ClassVar[bool] = False

    @abc.abstractmethod
    def _steps(self, c: Any, ins: list, collect: Callable[[int, list, list], None], is_train: bool,
               steps: list[int]) -> list[Any]:
        """Run the steps (in training: on kept step executors), ``collect(t, sub_inputs,
        outputs)`` and append ``t`` to ``steps`` each; return the final states."""

    def _forward(self, c: Any, is_train: bool, ins: list, req: list, outs: list) -> list[Any]:
        n = self.p.num_out_data
        live = [j for j in range(n) if int(req[j]) != OpReqType.null]
        if self.zero_fill:
            for j in live:
                outs[j][:] = 0

        def collect(t: int, sub: list, step_outs: list) -> None:
            for j in live:
                outs[j][t] = step_outs[j]
        self._kept = None
        steps: list[int] = []
        for k, v in enumerate(self._steps(c, ins, collect, is_train, steps)):
            _store(outs[n + k], req[n + k], v)
        if is_train:
            self._kept = len(steps)
        return outs

    def _kept_steps(self, c: Any, ins: list) -> int:
        """The number of steps of the last training forward; runs it when there was none."""
        if self._kept is None:
            steps: list[int] = []
            self._steps(c, ins, lambda t, sub, o: None, True, steps)
            self._kept = len(steps)
        return int(self._kept)


class ForeachOp(_LoopOp):
    def _steps(self, c: Any, ins: list, collect: Callable[[int, list, list], None], is_train: bool,
               steps: list[int]) -> list[Any]:
        prop, p = self.prop, self.p
        nd, ns = prop._split()  # type: ignore[attr-defined]
        run = self.runner(0, c)
        states = ins[nd:nd + ns]
        for t in range(ins[0].shape[0] if nd else 0):
            sub = prop._sub_values(ins[:nd] + states + ins[nd + ns:], lambda a, t=t: _row(a, t))  # type: ignore[attr-defined]
            outs = run.forward(sub, is_train, t if is_train else None)
            collect(t, sub, outs)
            steps.append(t)
            states = outs[p.num_out_data:]
        return states

    def _backward(self, c: Any, og: list, ins: list, req: list, ig: list) -> list[Any]:
        prop, p = self.prop, self.p
        nd = prop._split()[0]  # type: ignore[attr-defined]
        n_steps = self._kept_steps(c, ins)
        run = self.runner(0, c)
        state_grads = og[p.num_out_data:]
        data_grads: list[list[Any]] = [[None] * n_steps for _ in range(nd)]
        remain: list[Any] = [None] * len(p.remain_locs)
        for t in range(n_steps - 1, -1, -1):
            g = run.backward(t, [og[j][t] for j in range(p.num_out_data)] + list(state_grads))
            for k, loc in enumerate(p.in_data_locs):
                data_grads[k][t] = g[loc]
            state_grads = [g[loc] for loc in p.in_state_locs]
            remain = [_acc(a, g[loc]) for a, loc in zip(remain, p.remain_locs)]
        from plexnet.ndarray.ndarray import zeros
        stacked: list[Any] = []
        for k in range(nd):
            if any(x is None for x in data_grads[k]) or not data_grads[k]:
                stacked.append(None)
                continue
            full = zeros(ins[k].shape, c, ins[k].dtype)
            for t, x in enumerate(data_grads[k]):
                if full.ndim == 1:
                    full[t:t + 1] = x
                else:
                    full[t] = x
            stacked.append(full)
        return _finish_grads(ig, req, stacked + list(state_grads) + remain)


class WhileLoopOp(_LoopOp):
    zero_fill = True

    def _steps(self, c: Any, ins: list, collect: Callable[[int, list, list], None], is_train: bool,
               steps: list[int]) -> list[Any]:
        p = self.p
        cond, func = self.runner(0, c), self.runner(1, c)
        cur = list(ins)
        var_union = [p.func_input_locs[v] for v in p.func_var_locs]
        t = 0
        while t < p.max_iterations and _truth(cond.forward([cur[u] for u in p.cond_input_locs])[0]):
            sub = [cur[u] for u in p.func_input_locs]
            outs = func.forward(sub, is_train, t if is_train else None)
            collect(t, sub, outs)
            steps.append(t)
            for k, u in enumerate(var_union):
                cur[u] = outs[p.num_out_data + k]
            t += 1
        return [cur[u] for u in var_union]

    def _backward(self, c: Any, og: list, ins: list, req: list, ig: list) -> list[Any]:
        p = self.p
        n_steps = self._kept_steps(c, ins)
        func = self.runner(1, c)
        var_grads = list(og[p.num_out_data:])
        grads: list[Any] = [None] * len(ins)
        var_set = set(p.func_var_locs)
        for t in range(n_steps - 1, -1, -1):
            g = func.backward(t, [og[j][t] for j in range(p.num_out_data)] + var_grads)
            var_grads = [g[v] for v in p.func_var_locs]
            for i, u in enumerate(p.func_input_locs):
                if i not in var_set:
                    grads[u] = _acc(grads[u], g[i])
        for k, v in enumerate(p.func_var_locs):
            u = p.func_input_locs[v]
            grads[u] = _acc(grads[u], var_grads[k])
        return _finish_grads(ig, req, grads)


class CondOp(_ControlOp):
    def _branch(self, c: Any, ins: list) -> tuple[int, tuple[int, ...]]:
        p = self.p
        take = _truth(self.runner(0, c).forward([ins[u] for u in p.cond_input_locs])[0])
        return (1, p.then_input_locs) if take else (2, p.else_input_locs)

    def _forward(self, c: Any, is_train: bool, ins: list, req: list, outs: list) -> list[Any]:
        k, locs = self._branch(c, ins)
        res = self.runner(k, c).forward([ins[u] for u in locs], is_train, 0 if is_train else None)
        self._kept = k if is_train else None
        for dst, r, v in zip(outs, req, res):
            _store(dst, r, v)
        return outs

    def _backward(self, c: Any, og: list, ins: list, req: list, ig: list) -> list[Any]:
        if self._kept is None:  # no training forward: run the branch now
            k, locs = self._branch(c, ins)
            self.runner(k, c).forward([ins[u] for u in locs], True, 0)
            self._kept = k
        k = int(self._kept)
        locs = self.p.then_input_locs if k == 1 else self.p.else_input_locs
        g = self.runner(k, c).backward(0, og)
        grads: list[Any] = [None] * len(ins)
        for i, u in enumerate(locs):
            grads[u] = _acc(grads[u], g[i])
        return _finish_grads(ig, req, grads)


_CONTROL_OPS: dict[str, type[_ControlOp]] = {"foreach": ForeachOp, "while_loop": WhileLoopOp, "cond": CondOp}


def register(registry: Any) -> None:
    for name, cls in (("_foreach", ForeachProp), ("_while_loop", WhileLoopProp), ("_cond", CondProp)):
        registry.register_property(name, cls)
        registry.register_impl(name, "*", lambda prop, ctx: prop.create_operator(ctx), impl_name="subgraph")
