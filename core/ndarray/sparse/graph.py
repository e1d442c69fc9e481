"""MXNet 1.9.1's CSR graph operators of ``nd.contrib`` (``src/operator/contrib/dgl_graph.cc``
and ``nnz.cc``): ``getnnz``, ``edge_id``, ``dgl_adjacency``, ``dgl_subgraph``,
``dgl_csr_neighbor_uniform_sample``, ``dgl_csr_neighbor_non_uniform_sample`` and
``dgl_graph_compact``.

A graph is a square CSRNDArray adjacency matrix whose values are edge ids (row = source
vertex, column = neighbour). The outputs' structure depends on the values, so every
function waits for its inputs and computes on the host with numpy (as the other
value-dependent sparse operators, docs/sparse.md), then wraps the result. The samplers
draw one seed from plexnet's random state (``mx.random.seed``: the resource manager's
generator of the CPU, drawn inside an engine operation) and sample with a numpy generator
made from it, so a seeded program samples the same subgraphs run after run (MXNet's
kernels seed from the clock).

Errors name the operator, the argument and the shapes involved; MXNet aborts the process
on several of these inputs (an unsorted vertex list, a float graph for ``dgl_subgraph``).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...base import ShapeError
from ...context import Context
from ..ndarray import NDArray
from . import kernels as K
from .base import BaseSparseNDArray, CSRNDArray, host, nd_from_host, new_csr

__all__ = ["getnnz", "edge_id", "dgl_adjacency", "dgl_subgraph", "dgl_csr_neighbor_uniform_sample",
           "dgl_csr_neighbor_non_uniform_sample", "dgl_graph_compact"]

_Csr = tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]


# -- argument checks -------------------------------------------------------------------------------
def _describe(a: Any) -> str:
    if isinstance(a, NDArray):
        return f"{a.stype} array of shape {tuple(a.shape)}"
    return type(a).__name__


def _csr(op: str, arg: str, a: Any, square: bool = False, edge_ids: bool = False) -> _Csr:
    """The host compact arrays of the CSR argument ``arg`` of ``op`` (after pending writes);
    ``edge_ids``: the values must be int64 edge ids (MXNet's dgl_* operators check it)."""
    if not isinstance(a, CSRNDArray):
        raise TypeError(f"{op}: {arg} must be a CSRNDArray (stype 'csr'), got a {_describe(a)}")
    if edge_ids and np.dtype(a.dtype) != np.int64:
        raise TypeError(f"{op}: {arg} must hold int64 edge ids, got dtype {np.dtype(a.dtype).name} "
                        f"(shape {tuple(a.shape)})")
    shape = (int(a.shape[0]), int(a.shape[1]))
    if square and shape[0] != shape[1]:
        raise ShapeError(f"{op}: {arg} must be a square adjacency matrix, got shape {shape}")
    return host(a.data), host(a.indices).astype(K.IDX, copy=False), host(a.indptr).astype(K.IDX, copy=False), shape


def _vector(op: str, arg: str, a: Any) -> np.ndarray:
    """A dense 1-D argument on the host."""
    if not isinstance(a, NDArray) or isinstance(a, BaseSparseNDArray):
        raise TypeError(f"{op}: {arg} must be a dense 1-D NDArray, got a {_describe(a)}")
    if a.ndim != 1:
        raise ShapeError(f"{op}: {arg} must be 1-D, got shape {tuple(a.shape)}")
    return host(a)


def _vertex_ids(op: str, arg: str, a: Any, nvert: int, graph_shape: tuple[int, int],
                int64: bool = False) -> np.ndarray:
    """A 1-D array of vertex ids in ``[0, nvert)`` as int64 (``int64``: it must be int64 already)."""
    v = _vector(op, arg, a)
    if int64 and v.dtype != np.int64:
        raise TypeError(f"{op}: {arg} must be an int64 array of vertex ids, got dtype {v.dtype.name} "
                        f"(shape {tuple(a.shape)})")
    if v.size and np.issubdtype(v.dtype, np.floating) and not np.array_equal(v, np.floor(v)):
        raise ValueError(f"{op}: {arg} must hold integer vertex ids, got {v.dtype} values that are not integers")
    ids = v.astype(K.IDX)
    bad = (ids < 0) | (ids >= nvert)
    if bad.any():
        raise IndexError(f"{op}: {arg} (shape {tuple(a.shape)}) holds vertex id {int(ids[bad][0])}, out of range "
                         f"[0, {nvert}) for the graph of shape {graph_shape}")
    return ids


def _check_num_args(op: str, num_args: Any, given: int) -> None:
    if num_args is not None and int(num_args) != given:
        raise ValueError(f"{op}: num_args={num_args} but {given} array arguments were given")


def _no_out(op: str, out: Any) -> None:
    if out is not None:
        raise ValueError(f"{op}: out= is not supported (the output's sparsity structure depends on the values)")


def _single_or_list(outs: list[NDArray]) -> Any:
    # MXNet's front end returns the array itself for a one-output call, else a list
    return outs[0] if len(outs) == 1 else outs


def _place_dense(res: NDArray, out: NDArray | None) -> NDArray:
    if out is None:
        return res
    out[:] = res
    return out


# -- deterministic operators -----------------------------------------------------------------------
def getnnz(data: Any = None, axis: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The number of stored values of the CSRNDArray ``data`` (explicit zeros included), int64:
    ``axis=None`` the total as a 1-element array, ``axis=1`` one count per row, ``axis=0``
    one count per column (MXNet 1.9.1 refuses axis=0: "not supported yet")."""
    op = "getnnz"
    vals, indices, indptr, shape = _csr(op, "data", data)
    if axis == "None":
        axis = None
    if axis is not None and axis not in (0, 1):
        raise ValueError(f"{op}: unexpected value for axis ({axis!r}); candidates are None, 0 and 1")
    if axis is None:
        res = np.array([int(indptr[-1]) if indptr.size else 0], K.IDX)
    elif axis == 1:
        res = np.diff(indptr).astype(K.IDX)
    else:
        nnz = int(indptr[-1]) if indptr.size else 0
        res = np.bincount(indices[:nnz], minlength=shape[1]).astype(K.IDX)
    return _place_dense(nd_from_host(res, data.context), out)


def edge_id(data: Any = None, u: Any = None, v: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """``out[i] = data[u[i], v[i]]`` when the CSR adjacency ``data`` stores that entry (its
    value, the edge id), else -1; in ``data``'s dtype. ``u`` and ``v`` are 1-D of one length."""
    op = "edge_id"
    vals, indices, indptr, shape = _csr(op, "data", data)
    uu = _vertex_ids(op, "u", u, shape[0], shape)
    vv = _vertex_ids(op, "v", v, shape[1], shape)
    if uu.shape != vv.shape:
        raise ShapeError(f"{op}: u and v must have the same shape, got {tuple(u.shape)} and {tuple(v.shape)}")
    nnz = int(indptr[-1]) if indptr.size else 0
    # the first stored entry of each (row, col) key, found by a sorted search
    keys = K.csr_keys(indices[:nnz], indptr, shape[1])
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    want = uu * shape[1] + vv
    pos = np.searchsorted(sorted_keys, want)
    hit = pos < sorted_keys.size
    hit[hit] = sorted_keys[pos[hit]] == want[hit]
    res = np.full(uu.shape, -1, dtype=vals.dtype)
    res[hit] = vals[order[pos[hit]]]
    return _place_dense(nd_from_host(res, data.context), out)


def dgl_adjacency(data: Any = None, out: Any = None, **kwargs: Any) -> CSRNDArray:
    """The adjacency matrix of the CSR graph ``data``: the same structure, float32 ones."""
    op = "dgl_adjacency"
    _no_out(op, out)
    vals, indices, indptr, shape = _csr(op, "data", data, edge_ids=True)
    nnz = int(indptr[-1]) if indptr.size else 0
    return new_csr(np.ones(nnz, np.float32), indices[:nnz], indptr, shape, data.context)


def dgl_subgraph(graph: Any = None, *data: Any, return_mapping: Any = None, num_args: Any = None,
                 out: Any = None, **kwargs: Any) -> Any:
    """The subgraphs of ``graph`` induced by each sorted 1-D array of vertex ids in ``data``.

    Subgraph k is a (n_k, n_k) CSR whose rows/columns are the positions of the vertices in
    the k-th array and whose values are new edge ids 0, 1, ... in row order (each row's
    entries in the input's order). With ``return_mapping=True`` a second CSR per array has
    the same structure and the original edge ids as values. Outputs: the subgraphs, then
    the mappings; one output alone is returned as itself."""
    op = "dgl_subgraph"
    _no_out(op, out)
    if return_mapping is None:
        raise ValueError(f"{op}: return_mapping is required (True or False)")
    if not data:
        raise ValueError(f"{op}: at least one array of vertex ids is required after the graph")
    _check_num_args(op, num_args, 1 + len(data))
    vals, indices, indptr, shape = _csr(op, "graph", graph, square=True, edge_ids=True)
    subs: list[NDArray] = []
    maps: list[NDArray] = []
    for k, arr in enumerate(data):
        vid = _vertex_ids(op, f"data[{k}]", arr, shape[0], shape, int64=True)
        if vid.size > 1 and (np.diff(vid) <= 0).any():
            raise ValueError(f"{op}: data[{k}] (shape {tuple(arr.shape)}) must be sorted in ascending order "
                             f"without repeats (the input vertex list has to be sorted)")
        new_of = np.full(shape[1], -1, K.IDX)
        new_of[vid] = np.arange(vid.size, dtype=K.IDX)
        starts, ends = indptr[vid], indptr[vid + 1]
        counts = ends - starts
        # every entry of the chosen rows, in row order then input order
        pos = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()), dtype=K.IDX)
        cols = new_of[indices[pos]]
        keep = cols >= 0
        row_of = np.repeat(np.arange(vid.size, dtype=K.IDX), counts)[keep]
        sub_ptr = np.zeros(vid.size + 1, K.IDX)
        np.cumsum(np.bincount(row_of, minlength=vid.size), out=sub_ptr[1:])
        nnz = int(keep.sum())
        sub_shape = (int(vid.size), int(vid.size))
        subs.append(new_csr(np.arange(nnz, dtype=K.IDX), cols[keep], sub_ptr, sub_shape, graph.context))
        if return_mapping:
            maps.append(new_csr(vals[pos[keep]], cols[keep], sub_ptr, sub_shape, graph.context))
    return _single_or_list(subs + maps)


def dgl_graph_compact(*graph_data: Any, return_mapping: Any = None, graph_sizes: Any = None, num_args: Any = None,
                      out: Any = None, **kwargs: Any) -> Any:
    """Compact sampled subgraphs: ``graph_data`` is k sub-CSRs (as the samplers return them:
    one row per sampled vertex, original vertex ids as columns) followed by their k vertex
    id arrays; ``graph_sizes`` the k vertex counts. Graph i becomes a (n_i, n_i) CSR of its
    first n_i rows with columns renumbered to positions in its vertex array and values new
    edge ids 0, 1, ... (entries kept in input order); with ``return_mapping=True`` a second
    CSR per graph holds the original edge ids. Outputs: the compact graphs, then the mappings."""
    op = "dgl_graph_compact"
    _no_out(op, out)
    if return_mapping is None:
        raise ValueError(f"{op}: return_mapping is required (True or False)")
    if graph_sizes is None:
        raise ValueError(f"{op}: graph_sizes is required (one vertex count per graph)")
    if not graph_data or len(graph_data) % 2:
        raise ValueError(f"{op}: graph_data must be k graphs followed by their k vertex id arrays, "
                         f"got {len(graph_data)} arrays")
    _check_num_args(op, num_args, len(graph_data))
    num = len(graph_data) // 2
    # MXNet parses the parameter's text: a number, a sequence or a numpy array (the sampler's
    # out[0][-1].asnumpy(), shape (1,), in its test_dgl_graph) all give the counts
    sizes = [int(s) for s in np.asarray(graph_sizes).ravel()]
    if len(sizes) != num:
        raise ValueError(f"{op}: graph_sizes has {len(sizes)} entries for {num} graphs")
    outs: list[NDArray] = []
    maps: list[NDArray] = []
    for i in range(num):
        g = graph_data[i]
        vals, indices, indptr, shape = _csr(op, f"graph_data[{i}]", g, edge_ids=True)
        n = sizes[i]
        vid_arg = graph_data[num + i]
        vid = _vector(op, f"graph_data[{num + i}]", vid_arg)
        if vid.dtype != np.int64:
            raise TypeError(f"{op}: graph_data[{num + i}] must be an int64 array of vertex ids, got dtype "
                            f"{vid.dtype.name} (shape {tuple(vid_arg.shape)})")
        if not 0 <= n <= min(shape[0], vid.size):
            raise ShapeError(f"{op}: graph_sizes[{i}]={n} must be within the rows of graph_data[{i}] (shape {shape}) "
                             f"and the ids of graph_data[{num + i}] (shape {tuple(vid_arg.shape)})")
        ids = vid[:n]
        order = np.argsort(ids, kind="stable")
        nnz = int(indptr[n])
        cols = indices[int(indptr[0]):nnz] if n else indices[:0]
        at = np.searchsorted(ids[order], cols) if n else np.zeros(0, K.IDX)
        found = at < n
        found[found] = ids[order][at[found]] == cols[found]
        if not found.all():
            raise ValueError(f"{op}: graph_data[{i}] has an edge to vertex {int(cols[~found][0])}, which is not "
                             f"among the first graph_sizes[{i}]={n} ids of graph_data[{num + i}]")
        new_cols = order[at].astype(K.IDX)
        ptr = indptr[:n + 1] - indptr[0]
        m = new_cols.size
        outs.append(new_csr(np.arange(m, dtype=K.IDX), new_cols, ptr, (n, n), g.context))
        if return_mapping:
            maps.append(new_csr(vals[int(indptr[0]):nnz], new_cols, ptr, (n, n), g.context))
    return _single_or_list(outs + maps)


# -- neighbourhood sampling ------------------------------------------------------------------------
def _sampling_rng(ctx: Context, op: str) -> np.random.Generator:
    """A numpy generator seeded by one draw from plexnet's random state (the CPU generator
    of the resource manager, drawn in an engine operation that mutates its variable)."""
    from ... import engine as _engine_mod
    from ...engine.base import FnProperty
    from ...resource import ResourceRequest, get as _resources
    cpu = ctx if ctx.device_type == "cpu" else Context("cpu", 0)
    res = _resources().request(cpu, ResourceRequest(ResourceRequest.kRandom))
    box: list[int] = []

    def draw(_rctx: Any) -> None:
        box.append(int(res.get_random().integers(0, 2 ** 63 - 1)))

    eng = _engine_mod.get()
    eng.push_sync(draw, cpu, (), (res.var,), FnProperty.NORMAL, 0, op)
    eng.wait_for_var(res.var)
    return np.random.default_rng(box[0])


def _pick(rng: np.random.Generator, n: int, k: int, weights: np.ndarray | None) -> np.ndarray:
    """``k`` of ``n`` positions without replacement (uniform, or by ``weights``), ascending."""
    if n <= k:
        return np.arange(n)
    if weights is None:
        return np.sort(rng.choice(n, size=k, replace=False))
    w = np.clip(weights.astype(np.float64), 0.0, None)
    positive = np.flatnonzero(w > 0)
    if positive.size <= k:  # too few with weight: all of them, the rest uniformly among the others
        rest = np.setdiff1d(np.arange(n), positive)
        extra = rng.choice(rest, size=k - positive.size, replace=False)
        return np.sort(np.concatenate([positive, extra]))
    return np.sort(rng.choice(n, size=k, replace=False, p=w / w.sum()))


def _sample_one(graph: _Csr, seeds: np.ndarray, prob: np.ndarray | None, num_hops: int, num_neighbor: int,
                max_num_vertices: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MXNet's ``SampleSubgraph``: a BFS from ``seeds`` taking up to ``num_neighbor`` neighbours
    of each vertex above layer ``num_hops`` until ``max_num_vertices`` vertices are collected.
    Returns sorted vertex ids, their layers, and the sub-CSR (data, indices, indptr)."""
    vals, indices, indptr, _ = graph
    layer_of: dict[int, int] = {}
    queue: list[int] = []
    for s in seeds.tolist():
        if s not in layer_of:
            layer_of[s] = 0
            queue.append(s)
    picked: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    idx = 0
    while idx < len(queue) and len(layer_of) < max_num_vertices:
        dst = queue[idx]
        level = layer_of[dst]
        idx += 1
        if level >= num_hops:
            continue
        lo, hi = int(indptr[dst]), int(indptr[dst + 1])
        cols = indices[lo:hi]
        sel = _pick(rng, hi - lo, num_neighbor, None if prob is None else prob[cols])
        picked[dst] = (cols[sel], vals[lo:hi][sel])
        # as MXNet: the edges stay even where the neighbour no longer fits in the vertex set
        for c in cols[sel].tolist():
            if len(layer_of) >= max_num_vertices:
                break
            if c not in layer_of:
                layer_of[c] = level + 1
                queue.append(c)
    verts = np.array(sorted(layer_of), dtype=K.IDX)
    layers = np.array([layer_of[int(x)] for x in verts], dtype=K.IDX)
    sub_ptr = np.zeros(max_num_vertices + 1, K.IDX)
    cols_out: list[np.ndarray] = []
    vals_out: list[np.ndarray] = []
    for i, vx in enumerate(verts.tolist()):
        c, v = picked.get(vx, (indices[:0], vals[:0]))
        cols_out.append(c)
        vals_out.append(v)
        sub_ptr[i + 1] = sub_ptr[i] + c.size
    sub_ptr[verts.size + 1:] = sub_ptr[verts.size]
    sub_cols = np.concatenate(cols_out) if cols_out else indices[:0]
    sub_vals = np.concatenate(vals_out) if vals_out else vals[:0]
    return verts, layers, sub_vals, sub_cols, sub_ptr


def _sample(op: str, csr_matrix: Any, probability: Any, seed_arrays: Sequence[Any], num_hops: Any,
            num_neighbor: Any, max_num_vertices: Any) -> list[NDArray]:
    graph = _csr(op, "csr_matrix", csr_matrix, square=True, edge_ids=True)
    shape = graph[3]
    hops, nbr, maxv = int(num_hops), int(num_neighbor), int(max_num_vertices)
    if hops < 0 or nbr < 0 or maxv < 1:
        raise ValueError(f"{op}: num_hops ({hops}) and num_neighbor ({nbr}) must be >= 0 and "
                         f"max_num_vertices ({maxv}) >= 1")
    if not seed_arrays:
        raise ValueError(f"{op}: at least one array of seed vertices is required")
    prob = None
    if probability is not None:
        prob = _vector(op, "probability", probability).astype(np.float32)
        if prob.shape[0] != shape[0]:
            raise ShapeError(f"{op}: probability must have one entry per vertex ({shape[0]}), "
                             f"got shape {tuple(probability.shape)}")
    ctx = csr_matrix.context
    rng = _sampling_rng(ctx, op)
    ids_out, csr_out, prob_out, layer_out = [], [], [], []
    for k, arr in enumerate(seed_arrays):
        seeds = _vertex_ids(op, f"seed_arrays[{k}]", arr, shape[0], shape, int64=True)
        if seeds.size > maxv:
            raise ValueError(f"{op}: seed_arrays[{k}] (shape {tuple(arr.shape)}) has more seeds than "
                             f"max_num_vertices={maxv}")
        verts, layers, sv, sc, sp = _sample_one(graph, seeds, prob, hops, nbr, maxv, rng)
        n = verts.size
        ids = np.full(maxv + 1, -1, K.IDX)
        ids[:n] = verts
        ids[maxv] = n
        lay = np.full(maxv, -1, K.IDX)
        lay[:n] = layers
        ids_out.append(nd_from_host(ids, ctx))
        csr_out.append(new_csr(sv, sc, sp, (maxv, shape[1]), ctx, dtype=graph[0].dtype))
        layer_out.append(nd_from_host(lay, ctx))
        if prob is not None:
            p = np.zeros(maxv, np.float32)
            p[:n] = prob[verts]
            prob_out.append(nd_from_host(p, ctx))
    return ids_out + csr_out + prob_out + layer_out


def dgl_csr_neighbor_uniform_sample(csr_matrix: Any = None, *seed_arrays: Any, num_args: Any = None,
                                    num_hops: Any = 1, num_neighbor: Any = 2, max_num_vertices: Any = 100,
                                    out: Any = None, **kwargs: Any) -> list[NDArray]:
    """Sample a neighbourhood of each seed array from the CSR graph ``csr_matrix``, picking up
    to ``num_neighbor`` neighbours of a vertex uniformly without replacement, ``num_hops``
    layers deep, at most ``max_num_vertices`` vertices.

    Outputs, one of each per seed array, in three groups: the sampled vertex ids (sorted,
    padded with -1 to ``max_num_vertices``, then the count: length ``max_num_vertices + 1``),
    the sampled edges as a (``max_num_vertices``, vertices) CSR (row i: the picked
    neighbours of the i-th sampled vertex, original edge ids as values), and each sampled
    vertex's layer (padded with -1)."""
    op = "dgl_csr_neighbor_uniform_sample"
    _no_out(op, out)
    _check_num_args(op, num_args, 1 + len(seed_arrays))
    return _sample(op, csr_matrix, None, seed_arrays, num_hops, num_neighbor, max_num_vertices)


def dgl_csr_neighbor_non_uniform_sample(csr_matrix: Any = None, probability: Any = None, *seed_arrays: Any,
                                        num_args: Any = None, num_hops: Any = 1, num_neighbor: Any = 2,
                                        max_num_vertices: Any = 100, out: Any = None, **kwargs: Any
                                        ) -> list[NDArray]:
    """``dgl_csr_neighbor_uniform_sample`` with neighbours picked without replacement in
    proportion to ``probability`` (one weight per vertex). A fourth group of outputs,
    between the graphs and the layers, holds the probability of each sampled vertex
    (float32, padded with 0)."""
    op = "dgl_csr_neighbor_non_uniform_sample"
    _no_out(op, out)
    if probability is None:
        raise ValueError(f"{op}: probability is required")
    _check_num_args(op, num_args, 2 + len(seed_arrays))
    return _sample(op, csr_matrix, probability, seed_arrays, num_hops, num_neighbor, max_num_vertices)
