"""Symbolic executors over sparse arrays (MXNet 1.9.1's storage types in ``bind``).

``Executor.bind``/``simple_bind`` hand over to ``SparseExecutor`` when an argument or
gradient is CSR/row_sparse (``bind`` with such arrays, ``Variable(stype=)``,
``simple_bind(stype_dict=)``) or when a gradient is row_sparse by MXNet's rules
(``Embedding(sparse_grad=True)``, the right operand of ``dot(csr, w)``). Graphs bound to
dense arrays never get here: the dense executor is unchanged (one check per bind).

How it runs (docs/sparse.md, "Symbolic sparse storage"):

* inference (``forward(is_train=False)``, or any forward of an executor without
  gradients) walks the graph node by node through the ``nd`` operator functions, which
  run the sparse kernels for the storage types they get and fall back to the dense
  operator on dense copies otherwise (core/ndarray/sparse/ops.py);
* training (``forward(is_train=True)`` with gradients, then ``backward``) runs a dense
  executor of the same graph over dense copies of the sparse arguments (MXNet's sparse
  backward kernels give the same values); gradients bound as row_sparse receive the rows
  MXNet's kernels produce (the columns a csr ``dot`` operand uses, the ids an
  ``Embedding`` looks up) plus any other row with a non-zero value.

Output storage types follow ``infer_stype`` (the table of docs/sparse.md).
"""
from __future__ import annotations

import ast
from typing import Any, Sequence

from ..base import PlexnetError
from ..ndarray.ndarray import NDArray, zeros as _dense_zeros
from ..ndarray import sparse as _sp
from ..ndarray.sparse.ops import ZERO_PRESERVING

__all__ = ["STYPE_CODES", "var_stype", "infer_stypes", "grad_stypes", "wants_sparse", "makes_sparse",
           "make_array"]

#: MXNet's ``__storage_type__`` codes
STYPE_CODES = {"0": "default", "1": "row_sparse", "2": "csr", "-1": "default"}
_STYPES = ("default", "row_sparse", "csr")
_ZP = frozenset(ZERO_PRESERVING)
_ADD = frozenset({"elemwise_add", "elemwise_sub", "_plus", "_minus", "_add", "_sub", "_grad_add", "_maximum",
                  "_minimum", "_hypot"})
_MUL = frozenset({"elemwise_mul", "_mul"})
_UPDATES = frozenset({"sgd_update", "sgd_mom_update", "adam_update", "ftrl_update", "_sparse_adagrad_update"})


def stype_of(a: Any) -> str:
    return getattr(a, "stype", "default") if a is not None else "default"


def check_stype(stype: Any, what: str) -> str:
    """``stype`` validated (a name or MXNet's code), or an error naming ``what``."""
    s = STYPE_CODES.get(str(stype), stype)
    if s not in _STYPES:
        raise PlexnetError(f"{what}: unknown storage type {stype!r}; expected one of {', '.join(_STYPES)}")
    return str(s)


def var_stype(node: Any) -> str:
    """A variable's storage type from its ``__storage_type__`` attribute (``Variable(stype=)``)."""
    v = node.attrs.get("__storage_type__")
    return "default" if v is None else check_stype(v, f"Variable {node.name!r}")


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1")


def _param(v: str) -> Any:
    """An MXNet parameter string as a Python value (``'True'`` -> True, ``'(0, 1)'`` -> tuple)."""
    if v in ("True", "False", "true", "false"):
        return v.lower() == "true"
    try:
        return ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return v


def _node_stype(op: str, params: dict[str, str], ins: list[str]) -> str:
    """MXNet 1.9.1's output storage type of ``op`` for input storage types ``ins``."""
    if op == "cast_storage":
        return check_stype(params.get("stype", "default"), "cast_storage: argument 'stype'")
    if op == "dot" and params.get("forward_stype", "None") != "None":  # MXNet: it wins, whatever the inputs
        return check_stype(params["forward_stype"], "dot: argument 'forward_stype'")
    if all(s == "default" for s in ins):
        return "default"
    first = ins[0] if ins else "default"
    if op in _ZP:
        return first if len(ins) == 1 else "default"
    if op == "clip":
        lo, hi = float(_param(params.get("a_min", "0"))), float(_param(params.get("a_max", "0")))
        return first if lo <= 0 <= hi else "default"
    if op in ("zeros_like", "_sparse_retain"):
        return first
    if op in _ADD and len(ins) == 2:
        return ins[0] if ins[0] == ins[1] else "default"
    if op in _MUL and len(ins) == 2:
        sp = {s for s in ins if s != "default"}
        return sp.pop() if len(sp) == 1 else "default"
    if op in ("broadcast_mul", "broadcast_div"):
        return "csr" if ins == ["csr", "default"] else "default"
    if op in ("add_n", "ElementWiseSum"):
        return "row_sparse" if all(s == "row_sparse" for s in ins) else "default"
    if op == "dot":
        ta, tb = _truthy(params.get("transpose_a", False)), _truthy(params.get("transpose_b", False))
        if ins[0] == "csr" and ta and ins[1] in ("default", "row_sparse") and not tb:
            return "row_sparse"
        if ins[0] == "default" and ins[1] == "csr":
            return "csr"
        return "default"
    if op == "slice":
        step = _param(params.get("step", "()")) or ()
        return "csr" if first == "csr" and all(s in (None, 1) for s in step) else "default"
    if op in ("Concat", "concat"):
        return "csr" if all(s == "csr" for s in ins) and int(_param(params.get("dim", "1"))) == 0 else "default"
    if op in _UPDATES:
        return first
    if op in ("_scatter_plus_scalar", "_scatter_minus_scalar"):
        return first
    if op == "_scatter_elemwise_div":  # MXNet's kernel takes a row_sparse lhs only
        return first if first == "row_sparse" else "default"
    if op == "_contrib_quadratic":
        return first if float(_param(params.get("c", "0"))) == 0 and len(ins) == 1 else "default"
    if op == "_square_sum":
        ax = _param(params.get("axis", "None"))
        ax = (ax,) if isinstance(ax, int) else ax
        keep = _truthy(params.get("keepdims", False)) and not _truthy(params.get("exclude", False))
        return "row_sparse" if first == "row_sparse" and keep and ax is not None and tuple(ax) in ((1,), (-1,)) \
            else "default"
    return "default"


def infer_stypes(g: Any, arg_stypes: Sequence[str], aux_stypes: Sequence[str] | None = None) -> list[str]:
    """The storage type of every entry of graph ``g`` (by entry id)."""
    st = ["default"] * g.num_entries
    for nid, s in zip(g.arg_nids, arg_stypes):
        st[g.row_ptr[nid]] = s
    for nid, s in zip(g.aux_nids, aux_stypes or ()):
        st[g.row_ptr[nid]] = s
    for nid in g.op_nids:
        node = g.nodes[nid]
        ins = [st[e] for e in g.inputs[nid]]
        out = _node_stype(node.op, node.params(), ins)
        for k in range(g.row_ptr[nid + 1] - g.row_ptr[nid]):
            st[g.row_ptr[nid] + k] = out if k == 0 else "default"
    return st


def _sparse_grad_rules(g: Any, st: list[str]) -> dict[int, set[str]]:
    """Argument node id -> the gradient kinds MXNet's backward gives it: ``'dot'`` (right
    operand of ``dot(csr, w)``), ``'embedding'`` (weight of ``Embedding(sparse_grad=True)``),
    ``'other'`` (any other consumer: dense)."""
    arg_of = {g.row_ptr[nid]: nid for nid in g.arg_nids}
    kinds: dict[int, set[str]] = {}
    for nid in g.op_nids:
        node = g.nodes[nid]
        p = node.params()
        for pos, e in enumerate(g.inputs[nid]):
            a = arg_of.get(e)
            if a is None:
                continue
            ins = g.inputs[nid]
            if (node.op == "dot" and pos == 1 and st[ins[0]] == "csr"
                    and not _truthy(p.get("transpose_a", False)) and not _truthy(p.get("transpose_b", False))):
                kind = "dot"
            elif pos == 1 and (node.op == "Embedding" and _truthy(p.get("sparse_grad", False))
                               or node.op == "_contrib_SparseEmbedding"):
                kind = "embedding"
            else:
                kind = "other"
            kinds.setdefault(a, set()).add(kind)
    return kinds


#: backward kernels that keep a sparse head gradient's storage for an input of that storage
#: type (MXNet 1.9.1's simple_bind: relu(csr) has a csr gradient, sqrt(csr) a dense one)
_BWD_KEEP = frozenset({"relu", "square", "abs", "negative", "zeros_like", "stop_gradient", "BlockGrad",
                       "_mul_scalar", "_div_scalar", "_copy", "identity"})


def _input_grad_stypes(node: Any, ins: list[str], og: str) -> list[str]:
    """Gradient storage types of ``node``'s inputs for a head gradient of storage ``og``."""
    op, p = node.op, node.params()
    out = ["default"] * len(ins)
    if op == "dot" and len(ins) == 2 and ins[0] == "csr" and not _truthy(p.get("transpose_a", False)) \
            and not _truthy(p.get("transpose_b", False)):
        out[1] = "row_sparse"
    elif (op == "Embedding" and _truthy(p.get("sparse_grad", False)) or op == "_contrib_SparseEmbedding") \
            and len(ins) == 2:
        out[1] = "row_sparse"
    elif op == "_square_sum" and ins and ins[0] == "row_sparse":
        out[0] = "row_sparse"
    elif og != "default":
        if op in _BWD_KEEP and ins and ins[0] == og:
            out[0] = og
        elif op in _ADD - {"_maximum", "_minimum", "_hypot"} and len(ins) == 2 and ins[0] == ins[1] == og:
            out = [og, og]
        elif op in ("add_n", "ElementWiseSum") and all(s == og == "row_sparse" for s in ins):
            out = [og] * len(ins)
    return out


def grad_stypes(g: Any, arg_stypes: Sequence[str]) -> list[str]:
    """MXNet's gradient storage type per argument (``simple_bind``): the head gradients take
    their outputs' storage types and flow back through the operators' rules (row_sparse for
    ``dot(csr, w)``'s ``w`` and a sparse-grad ``Embedding``'s weight, the head gradient's type
    through ``relu``/``square``/``elemwise_add``..., default elsewhere); gradients summed from
    several consumers stay sparse only when all are row_sparse."""
    st = infer_stypes(g, arg_stypes)
    contrib: dict[int, list[str]] = {e: [st[e]] for e in g.outputs}  # entry -> its gradients' types
    op_nids = list(g.op_nids)
    for nid in reversed(op_nids):
        node = g.nodes[nid]
        outs = range(g.row_ptr[nid], g.row_ptr[nid + 1])
        ogs = [_merge(contrib.get(e)) for e in outs]
        ins = [st[e] for e in g.inputs[nid]]
        for e, gs in zip(g.inputs[nid], _input_grad_stypes(node, ins, ogs[0] if ogs else "default")):
            contrib.setdefault(e, []).append(gs)
    return [_merge(contrib.get(g.row_ptr[nid])) for nid in g.arg_nids]


def _merge(kinds: list[str] | None) -> str:
    """The storage type of a sum of gradients (MXNet's ``add_n``: row_sparse only when all are)."""
    if not kinds:
        return "default"
    first = kinds[0]
    if len(kinds) == 1:
        return first
    return "row_sparse" if all(k == "row_sparse" for k in kinds) else "default"


def makes_sparse(g: Any) -> bool:
    """True when an operator of ``g`` makes a sparse array from dense ones (``cast_storage``
    to csr/row_sparse, ``dot(forward_stype=csr|row_sparse)``)."""
    for nid in g.op_nids:
        node = g.nodes[nid]
        want = node.attrs.get("stype") if node.op == "cast_storage" else \
            node.attrs.get("forward_stype") if node.op == "dot" else None
        if want is not None and STYPE_CODES.get(str(want), want) in ("csr", "row_sparse"):
            return True
    return False


def wants_sparse(g: Any, arg_stypes: Sequence[str]) -> bool:
    """True when the graph needs the sparse executor: a sparse argument, a sparse-gradient
    ``Embedding`` or a ``cast_storage`` to a sparse type."""
    if any(s != "default" for s in arg_stypes):
        return True
    return makes_sparse(g) or any(g.nodes[nid].op == "Embedding" and _truthy(g.nodes[nid].attrs.get("sparse_grad",
                                                                                                     False))
                                  or g.nodes[nid].op == "_contrib_SparseEmbedding" for nid in g.op_nids)


def make_array(stype: str, shape: tuple, ctx: Any, dtype: Any) -> NDArray:
    """A zero array of storage type ``stype``."""
    if stype == "default":
        return _dense_zeros(shape, ctx, dtype)
    return _sp.zeros(stype, shape, ctx=ctx, dtype=dtype)


def _densify(a: NDArray) -> NDArray:
    return a.tostype("default") if stype_of(a) != "default" else a
