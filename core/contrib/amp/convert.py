"""AMP graph conversion (MXNet 1.9.1's ``ReducePrecision`` pass): ``convert_symbol`` inserts
``amp_cast`` / ``amp_multicast`` nodes so the low-precision operators get ``target_dtype``
inputs and the float32 ones float32; ``convert_model`` / ``convert_hybrid_block`` also cast
the parameters.

Walk in topological order, keeping ``lp`` (old entry -> its low-precision version) and
``f32`` (old entry -> its float32 cast), so one cast serves every consumer:
float32 / excluded / matching conditional operators read float32 inputs; a low-precision
operator reads the inputs its type inference puts in ``target_dtype`` cast to it; a widest-type
operator reads low precision when all its inputs are, float32 when one input is a known
float32 result, else an ``amp_multicast``; any other operator runs in low precision when an
input already is (and its type inference agrees). Graph outputs in low precision are cast
back to float32. Cast nodes are named ``<input node>[_<output>]_amp_cast_<dtype>``, as MXNet's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...base import PlexnetError
from ...ndarray import NDArray
from ...symbol import Symbol
from ...symbol.graph import mutated_inputs
from ...symbol.node import Entry, Node, topo_sort
from . import oplists

__all__ = ["convert_symbol", "convert_model", "convert_hybrid_block"]

_DTYPE_CODE = {"float16": 2, "bfloat16": 12}
_BF16_REFUSED = ("AMP target_dtype 'bfloat16': numpy (plexnet's array backend) has no bfloat16 dtype, so a graph "
                 "with bfloat16 casts cannot run or be saved; use target_dtype='float16'")
# Operators that name their outputs in MXNet 1.9.1 (FListOutputNames): a cast of their output is
# called <node>_<output name>_amp_cast_..., any other operator's <node>_<index>_amp_cast_...
_NAMED_OUTPUTS = frozenset({
    "Activation", "BatchNorm", "BatchNorm_v1", "BilinearSampler", "Concat", "Convolution", "Convolution_v1",
    "Correlation", "Crop", "Deconvolution", "Dropout", "FullyConnected", "GridGenerator", "GroupNorm",
    "IdentityAttachKLSparseReg", "InstanceNorm", "L2Normalization", "LRN", "LayerNorm", "LeakyReLU",
    "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput", "MakeLoss", "Pad", "Pooling",
    "Pooling_v1", "RNN", "ROIPooling", "SVMOutput", "SequenceLast", "SequenceMask", "SequenceReverse",
    "SliceChannel", "SoftmaxActivation", "SoftmaxOutput", "SpatialTransformer", "SwapAxis", "UpSampling",
    "CTCLoss", "_contrib_CTCLoss", "_contrib_MultiBoxPrior", "_contrib_MultiBoxTarget",
    "_contrib_MultiBoxDetection", "_contrib_Proposal", "_contrib_MultiProposal", "_contrib_DeformableConvolution",
    "_contrib_PSROIPooling", "_contrib_DeformablePSROIPooling", "_contrib_SyncBatchNorm", "_contrib_ROIAlign",
})


class _Pass:
    def __init__(self, target: str, lp_ops: set[str], fp32_ops: set[str], widest_ops: set[str],
                 conditional: dict[str, list[tuple[str, list[str]]]], excluded: set[str]) -> None:
        self.target = target
        self.lp_ops, self.fp32_ops, self.widest_ops = lp_ops, fp32_ops, widest_ops
        self.conditional, self.excluded = conditional, excluded
        self.mirror: dict[int, Node] = {}
        self.lp: dict[tuple[int, int], Entry] = {}
        self.f32: dict[tuple[int, int], Entry] = {}
        self.known_f32: set[tuple[int, int]] = set()

    # -- helpers ----------------------------------------------------------------------------------
    def _mirror_entry(self, e: Entry) -> Entry:
        return Entry(self.mirror[id(e[0])], e[1])

    @staticmethod
    def _suffix(e: Entry) -> str:
        node = e[0]
        if node.op is None:
            return ""
        if node.op in _NAMED_OUTPUTS:
            return "_" + node.prop.list_outputs()[e[1]]
        return f"_{e[1]}"

    def _cast(self, e: Entry, dtype: str) -> Entry:
        name = f"{e[0].name}{self._suffix(e)}_amp_cast_{dtype}"
        return Entry(Node("amp_cast", name, {"dtype": dtype}, [self._mirror_entry(e)]), 0)

    def _keep_input(self, e: Entry) -> Entry:
        key = (id(e[0]), e[1])
        if key in self.f32:
            return self.f32[key]
        if key in self.lp and self.lp[key][0].op != "amp_cast":
            self.f32[key] = self._cast(e, "float32")
            return self.f32[key]
        return self._mirror_entry(e)

    def _keep(self, old: Node) -> list[Entry]:
        if old.op is not None:
            self.known_f32.update((id(old), i) for i in range(old.num_outputs()))
        return [self._keep_input(e) for e in old.inputs]

    def _types(self, old: Node, in_types: list[Any]) -> tuple[list[Any], list[Any]] | None:
        """(input types incl. auxiliary states, output types) by the operator's inference, or
        None where it refuses these input types."""
        try:
            ins, outs, aux = old.prop.infer_type(list(in_types))
        except (PlexnetError, ValueError, TypeError, IndexError, KeyError):
            return None
        ins = [None if t is None else np.dtype(t) for t in ins]
        if any(g is not None and r != np.dtype(g) for g, r in zip(in_types, ins)):
            return None
        return ins + [None if t is None else np.dtype(t) for t in aux], \
            [None if t is None else np.dtype(t) for t in outs]

    def _target_np(self) -> Any:
        # bfloat16 has no numpy dtype: its type inference runs as float16 would (a 16-bit float)
        return np.dtype(np.float16)

    def _try_low(self, old: Node) -> list[Entry] | None:
        nargs = old.num_args()
        if nargs == 0:
            return None
        tgt = self._target_np()
        r = self._types(old, [tgt] + [None] * (nargs - 1))
        if r is None:
            return None
        types, outs = r
        types += [None] * (len(old.inputs) - len(types))
        if any(types[i] == tgt for i in mutated_inputs(old)):
            return None
        inputs = []
        for e, t in zip(old.inputs, types):
            key = (id(e[0]), e[1])
            if t == tgt:
                if key not in self.lp:
                    self.lp[key] = self._cast(e, self.target)
                inputs.append(self.lp[key])
            else:
                inputs.append(self._keep_input(e))
        for i, t in enumerate(outs):
            if t == tgt:
                self.lp[(id(old), i)] = Entry(_PENDING, i)
        return inputs

    def _widest(self, old: Node) -> list[Entry] | None:
        keys = [(id(e[0]), e[1]) for e in old.inputs]
        if not any(k in self.lp for k in keys):
            return None
        if any(k in self.known_f32 and k not in self.lp for k in keys) and not all(k in self.lp for k in keys):
            return None  # a float32 result among the inputs: the op runs in float32
        outs = old.num_outputs()
        if all(k in self.lp for k in keys):
            inputs = [self.lp[k] for k in keys]
        else:
            mc = Node("amp_multicast", f"{old.inputs[0][0].name}{self._suffix(old.inputs[0])}_amp_multicast",
                      {"num_outputs": str(len(keys))}, [self._mirror_entry(e) for e in old.inputs])
            inputs = [Entry(mc, i) for i in range(len(keys))]
        for i in range(outs):
            self.lp[(id(old), i)] = Entry(_PENDING, i)
        return inputs

    def _is_fp32(self, old: Node) -> bool:
        if old.op in self.fp32_ops or old.name in self.excluded:
            return True
        for arg, values in self.conditional.get(old.op or "", []):
            if arg in old.attrs and old.attrs[arg] in values:
                return True
        return False

    # -- the walk ---------------------------------------------------------------------------------
    def run(self, heads: list[Entry]) -> list[Entry]:
        for old in topo_sort(heads):
            if old.op is None:
                self.mirror[id(old)] = Node(None, old.name, dict(old.attrs))
                continue
            inputs: list[Entry] | None
            if self._is_fp32(old):
                inputs = self._keep(old)
            elif old.op in self.lp_ops:
                inputs = self._try_low(old) or self._keep(old)
            elif old.op in self.widest_ops:
                inputs = self._widest(old) or self._keep(old)
            else:
                any_lp = any((id(e[0]), e[1]) in self.lp for e in old.inputs)
                inputs = (self._try_low(old) if any_lp else None) or self._keep(old)
            new = Node(old.op, old.name, dict(old.attrs), inputs, old._prop, old.subgraphs)
            if old.op == "amp_cast" and old.attrs.get("dtype") == self.target:
                self.lp[(id(old.inputs[0][0]), old.inputs[0][1])] = Entry(new, 0)
                self.lp[(id(old), 0)] = Entry(new, 0)
            for k, v in list(self.lp.items()):  # outputs registered before the node existed
                if v[0] is _PENDING and k[0] == id(old):
                    self.lp[k] = Entry(new, v[1])
            self.mirror[id(old)] = new
        outputs = []
        for e in heads:
            key = (id(e[0]), e[1])
            if key in self.lp:
                if key not in self.f32:
                    self.f32[key] = self._cast(e, "float32")
                outputs.append(self.f32[key])
            else:
                outputs.append(self._mirror_entry(e))
        return outputs


_PENDING = Node(None, "<pending>")


def _cast_optional(outputs: list[Entry], target: str, data_names: set[str]) -> None:
    """Store parameters that only feed ``target`` casts in ``target`` (drop those casts)."""
    nodes = topo_sort(outputs)
    consumers: dict[int, list[tuple[Node, int]]] = {}
    for n in nodes:
        for i, e in enumerate(n.inputs):
            if e[0].op is None:
                consumers.setdefault(id(e[0]), []).append((n, i))
    for var in (n for n in nodes if n.op is None and n.name not in data_names):
        uses = consumers.get(id(var), [])
        casts = [n for n, _ in uses if n.op == "amp_cast" and n.attrs.get("dtype") == target]
        if not uses or len(casts) != len(uses):
            continue
        cast_ids = {id(c) for c in casts}
        for n in nodes:
            n.inputs = [Entry(var, 0) if id(e[0]) in cast_ids else e for e in n.inputs]
        var.attrs["__dtype__"] = str(_DTYPE_CODE[target])


def _check_lists(target: str, lp_ops: list[str], fp32_ops: list[str], cond: list, excluded: list[str]) -> None:
    for what, v in (("target_dtype_ops", lp_ops), ("fp32_ops", fp32_ops), ("conditional_fp32_ops", cond),
                    ("excluded_sym_names", excluded)):
        if not isinstance(v, list):
            raise AssertionError(f"{what} should be a list, got {type(v).__name__}")
    for c in cond:
        if not (isinstance(c, (tuple, list)) and len(c) == 3 and isinstance(c[0], str) and isinstance(c[1], str)
                and isinstance(c[2], list)):
            raise AssertionError(f"conditional_fp32_ops should be a list of (str, str, list of str), got {c!r}")
    names = [c[0] for c in cond]
    for a, b, x, y in (("target_dtype_ops", "fp32_ops", lp_ops, fp32_ops),
                       ("target_dtype_ops", "conditional_fp32_ops", lp_ops, names),
                       ("fp32_ops", "conditional_fp32_ops", fp32_ops, names)):
        common = set(x) & set(y)
        if common:
            raise AssertionError(f"Ops cannot be in two or more lists. Common ops in {a} and {b}: {sorted(common)}")
    allowed = set(oplists.list_lp16_ops(target) + oplists.list_fp32_ops(target) + oplists.list_lp16_fp32_ops(target)
                  + [c[0] for c in oplists.list_conditional_fp32_ops(target)])
    illegal = set(lp_ops + fp32_ops + names) - allowed
    if illegal:
        raise AssertionError(f"Op(s) {sorted(illegal)} not in any of amp.list_lp16_ops, amp.list_fp32_ops, "
                             f"amp.list_lp16_fp32_ops, amp.list_conditional_fp32_ops for {target}")


def convert_symbol(sym: Symbol, target_dtype: str = "float16", target_dtype_ops: list[str] | None = None,
                   fp32_ops: list[str] | None = None, conditional_fp32_ops: list | None = None,
                   excluded_sym_names: list[str] | None = None, data_names: list[str] | None = None,
                   cast_optional_params: bool = False) -> Symbol:
    """A copy of the float32 ``sym`` with ``amp_cast`` / ``amp_multicast`` nodes added per the
    op lists (defaults: ``amp.list_*_ops(target_dtype)``). ``data_names``: the inputs that are
    data (default: the inputs without ``__dtype__``); the others are parameters and get
    ``__dtype__`` (``target_dtype`` when ``cast_optional_params`` and only cast copies are read).
    ``'bfloat16'`` is validated as MXNet's, then refused: numpy has no bfloat16."""
    if not isinstance(sym, Symbol):
        raise AssertionError("First argument to convert_symbol should be Symbol")
    if target_dtype not in ("float16", "bfloat16"):
        raise AssertionError(f"Only target_dtype float16 and bfloat16 are supported currently, got {target_dtype!r}")
    lp_ops = target_dtype_ops if target_dtype_ops is not None else oplists.list_lp16_ops(target_dtype)
    f32_ops = fp32_ops if fp32_ops is not None else oplists.list_fp32_ops(target_dtype)
    cond = conditional_fp32_ops if conditional_fp32_ops is not None else oplists.list_conditional_fp32_ops(target_dtype)
    excluded = excluded_sym_names if excluded_sym_names is not None else []
    _check_lists(target_dtype, lp_ops, f32_ops, cond, excluded)
    if target_dtype == "bfloat16":
        raise TypeError(_BF16_REFUSED)
    return Symbol(_convert_graph(sym, target_dtype, lp_ops, f32_ops, cond, excluded, data_names,
                                 cast_optional_params))


def _convert_graph(sym: Symbol, target_dtype: str, lp_ops: list[str], f32_ops: list[str], cond: list,
                   excluded: list[str], data_names: list[str] | None, cast_optional_params: bool) -> list[Entry]:
    """The converted graph's outputs (bfloat16 too: its amp_cast nodes are only not runnable)."""
    cond_map: dict[str, list[tuple[str, list[str]]]] = {}
    for op, arg, values in cond:
        cond_map.setdefault(op, []).append((arg, [str(v) for v in values]))
    inputs = sym.list_inputs()
    if data_names is None:
        attrs = sym.attr_dict()
        data_names = [n for n in inputs if "__dtype__" not in attrs.get(n, {})]
    p = _Pass(target_dtype, set(lp_ops), set(f32_ops), set(oplists.list_widest_type_cast(target_dtype)), cond_map,
              set(excluded))
    outputs = p.run(list(sym._outputs))
    params = set(inputs) - set(data_names)
    for n in topo_sort(outputs):
        if n.op is None and n.name in params:
            n.attrs.setdefault("__dtype__", "0")
    if cast_optional_params:
        _cast_optional(outputs, target_dtype, set(data_names))
    return outputs


def _np_dtype(code: str, name: str) -> Any:
    from ...symbol.node import DTYPE_MX_TO_NP
    if int(code) == _DTYPE_CODE["bfloat16"]:
        raise TypeError(f"amp: parameter {name!r} would be cast to bfloat16, which numpy (plexnet's array backend) "
                        f"has no dtype for; convert with cast_optional_params=False or target_dtype='float16'")
    return DTYPE_MX_TO_NP[int(code)]


def _cast_params(sym: Symbol, params: dict[str, NDArray], names: list[str]) -> None:
    attrs = sym.attr_dict()
    for name in names:
        code = attrs.get(name, {}).get("__dtype__")
        if name in params and code is not None and code != "-1":
            dt = _np_dtype(code, name)
            if params[name].dtype != dt:
                params[name] = params[name].astype(dt)


def convert_model(sym: Symbol, arg_params: dict[str, NDArray], aux_params: dict[str, NDArray],
                  target_dtype: str = "float16", target_dtype_ops: list[str] | None = None,
                  fp32_ops: list[str] | None = None, conditional_fp32_ops: list | None = None,
                  excluded_sym_names: list[str] | None = None,
                  cast_optional_params: bool = False) -> tuple[Symbol, dict, dict]:
    """``convert_symbol`` with the model's parameters as the non-data inputs; returns
    ``(symbol, arg_params, aux_params)`` with the parameters cast to their ``__dtype__``
    (the dicts are updated in place, as MXNet's)."""
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, list):
        raise ValueError("excluded_sym_names must be a list of strings representing the names of the symbols that "
                         f"should not be casted, while received type {type(excluded_sym_names)}")
    if target_dtype not in ("float16", "bfloat16"):
        raise AssertionError(f"Only target_dtype float16 and bfloat16 are supported currently, got {target_dtype!r}")
    if not isinstance(sym, Symbol):
        raise AssertionError("First argument to convert_model should be Symbol")
    if not isinstance(arg_params, dict):
        raise AssertionError("Second argument to convert_model should be a dict of name to ndarray")
    if not isinstance(aux_params, dict):
        raise AssertionError("Third argument to convert_model should be a dict of name to ndarray")
    param_names = set(arg_params) | set(aux_params)
    data_names = [n for n in sym.list_inputs() if n not in param_names]
    out = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    _cast_params(out, arg_params, out.list_arguments())
    _cast_params(out, aux_params, out.list_auxiliary_states())
    return out, arg_params, aux_params


def convert_hybrid_block(block: Any, target_dtype: str = "float16", target_dtype_ops: list[str] | None = None,
                         fp32_ops: list[str] | None = None, conditional_fp32_ops: list | None = None,
                         excluded_sym_names: list[str] | None = None, ctx: Any = None,
                         cast_optional_params: bool = False) -> Any:
    """A SymbolBlock running the hybridized ``block``'s graph converted by ``convert_symbol``,
    holding the block's parameters cast to the converted graph's ``__dtype__``. The block must
    have been hybridized and run once. ``ctx``: where the parameters live (MXNet's default is
    gpu(0); here the block's current context)."""
    from ...gluon.block import HybridBlock
    from ...gluon.symbol_block import SymbolBlock
    if not isinstance(block, HybridBlock):
        raise AssertionError("block input should be a HybridBlock")
    if not block._cached_graph:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this block at least "
                           "once before calling export.")
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                               excluded_sym_names, data_names=[i.name for i in inputs],
                               cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    attrs = converted.attr_dict()
    values: dict[str, NDArray] = {}
    for name, param in block.collect_params().items():
        kind = "arg" if name in arg_names else "aux"
        v = param._reduce()
        code = attrs.get(name, {}).get("__dtype__")
        if code is not None and code != "-1":
            v = v.astype(_np_dtype(code, name))
        values[f"{kind}:{name}"] = v
    ret = SymbolBlock(converted, inputs)
    for name, param in ret.collect_params().items():
        for kind in ("arg", "aux"):
            v = values.get(f"{kind}:{name}")
            if v is not None and param.dtype != v.dtype:
                param.cast(v.dtype)
    if ctx is None:
        ctx = next(iter(values.values())).context if values else None
    ret.collect_params().load_dict(values, ctx=ctx)
    return ret


def convert_bucketing_module(bucketing_mod: Any, target_dtype: str = "float16",
                             target_dtype_ops: list[str] | None = None, fp32_ops: list[str] | None = None,
                             conditional_fp32_ops: list | None = None, excluded_sym_names: list[str] | None = None,
                             cast_optional_params: bool = False) -> Any:
    """A new ``BucketingModule`` whose buckets run the symbols of ``bucketing_mod``'s
    existing buckets converted by ``convert_model`` (parameters of the current bucket, cast
    to the converted graph's ``__dtype__``), as MXNet 1.9.1's. Buckets first used later are
    built by ``sym_gen`` unconverted, as in MXNet. The module must have initialized
    parameters; bind the result before use."""
    from ...module.bucketing_module import BucketingModule
    if not isinstance(bucketing_mod, BucketingModule):
        raise AssertionError("module should be instance of bucketing module")
    if not bucketing_mod._buckets:
        raise AssertionError("Bucketing Module should not be empty")
    if not bucketing_mod.params_initialized:
        raise AssertionError("bucketing_mod params should be initialized for mixed precision conversion")
    cur = bucketing_mod._curr_module
    arg_params = cur._arg_params if cur is not None else None
    aux_params = cur._aux_params if cur is not None else None
    if arg_params is None or aux_params is None:  # parameters live on the executors: gather them
        arg_params, aux_params = bucketing_mod.get_params()
    sym_dict = {}
    for key, mod in bucketing_mod._buckets.items():
        sym_dict[key], arg_params, aux_params = convert_model(
            mod._symbol, arg_params, aux_params, target_dtype=target_dtype, target_dtype_ops=target_dtype_ops,
            fp32_ops=fp32_ops, conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(
        sym_dict, sym_gen=bucketing_mod._sym_gen, arg_params=arg_params, aux_params=aux_params,
        default_bucket_key=bucketing_mod._default_bucket_key, logger=bucketing_mod.logger,
        context=bucketing_mod._context, work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names, state_names=bucketing_mod._state_names,
        group2ctxs=bucketing_mod._group2ctxs, compression_params=bucketing_mod._compression_params)
