"""Cases of the CSR graph operators of ``nd.contrib`` (getnnz, edge_id, dgl_*), run on MXNet
1.9.1 by fixtures/gen_dgl_fixtures.py and on plexnet by test_dgl_graph.py.

Each case is an expression evaluated with ``mx``, ``np`` and the graphs of ``graphs(mx)``.
Deterministic operators are recorded whole. The samplers are recorded where no choice is
random (``num_neighbor`` at least every vertex's degree): their valid parts are then
MXNet's exactly; the padding after the vertex count is undefined in MXNet (left
uninitialised) and is not recorded.
"""
from __future__ import annotations

from typing import Any

import numpy as np

# a 4-vertex directed graph, edge ids 1..7 (row = source, column = neighbour)
G4 = ([1, 2, 3, 4, 5, 6, 7], [0, 3, 0, 2, 1, 1, 2], [0, 2, 4, 5, 7], (4, 4))
# MXNet's docstring graph: the complete 5-vertex graph without loops, edge ids 1..20
K5 = (list(range(1, 21)), [1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3], [0, 4, 8, 12, 16, 20], (5, 5))
# a 7-vertex path-like graph with an isolated vertex (6) and unsorted columns in row 2
P7 = ([10, 11, 12, 13, 14, 15, 16, 17], [1, 0, 3, 1, 4, 2, 5, 4], [0, 1, 3, 5, 6, 8, 8, 8], (7, 7))


def graphs(mx: Any) -> dict[str, Any]:
    sp = mx.nd.sparse
    out = {}
    for name, (d, i, p, shape) in (("g4", G4), ("k5", K5), ("p7", P7)):
        out[name] = sp.csr_matrix((np.array(d, np.int64), np.array(i, np.int64), np.array(p, np.int64)),
                                  shape=shape, dtype=np.int64)
    d, i, p, shape = G4
    out["g4f"] = sp.csr_matrix((np.array(d, np.float32), np.array(i, np.int64), np.array(p, np.int64)), shape=shape)
    out["rect"] = sp.csr_matrix((np.array([1., 2., 3.], np.float32), np.array([0, 4, 2], np.int64),
                                 np.array([0, 2, 2, 3], np.int64)), shape=(3, 5))
    out["prob5"] = mx.nd.array([0.9, 0.8, 0.2, 0.4, 0.1], dtype=np.float32)
    out["prob7"] = mx.nd.array([0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.6], dtype=np.float32)
    return out


def ids(mx: Any, values: list[int]) -> Any:
    return mx.nd.array(values, dtype=np.int64)


# name -> expression; deterministic, recorded whole
EXACT = {
    "getnnz_total": "mx.nd.contrib.getnnz(g['g4'])",
    "getnnz_total_float": "mx.nd.contrib.getnnz(g['g4f'])",
    "getnnz_rows": "mx.nd.contrib.getnnz(g['g4'], axis=1)",
    "getnnz_rows_rect": "mx.nd.contrib.getnnz(g['rect'], axis=1)",
    "edge_id": "mx.nd.contrib.edge_id(g['g4'], ids(mx, [0, 0, 1, 1, 2, 3, 3]), ids(mx, [0, 1, 2, 3, 1, 2, 0]))",
    "edge_id_float": "mx.nd.contrib.edge_id(g['g4f'], ids(mx, [0, 1, 3]), ids(mx, [3, 3, 1]))",
    "edge_id_float_uv": "mx.nd.contrib.edge_id(g['g4f'], mx.nd.array([0, 1]), mx.nd.array([0, 2]))",
    "edge_id_unsorted_row": "mx.nd.contrib.edge_id(g['p7'], ids(mx, [2, 2, 2, 4, 6]), ids(mx, [0, 3, 1, 5, 6]))",
    "adjacency": "mx.nd.contrib.dgl_adjacency(g['g4'])",
    "adjacency_float": "mx.nd.contrib.dgl_adjacency(g['g4f'])",
    "subgraph_map": "mx.nd.contrib.dgl_subgraph(g['g4'], ids(mx, [0, 1, 2]), return_mapping=True)",
    "subgraph_nomap": "mx.nd.contrib.dgl_subgraph(g['g4'], ids(mx, [1, 2, 3]), return_mapping=False)",
    "subgraph_two_map": "mx.nd.contrib.dgl_subgraph(g['k5'], ids(mx, [0, 2, 4]), ids(mx, [1, 3]), "
                        "return_mapping=True)",
    "subgraph_two_nomap": "mx.nd.contrib.dgl_subgraph(g['p7'], ids(mx, [1, 2, 3, 4]), ids(mx, [6]), "
                          "return_mapping=False)",
    "subgraph_unsorted_cols": "mx.nd.contrib.dgl_subgraph(g['p7'], ids(mx, [0, 1, 2, 3, 4, 5, 6]), "
                              "return_mapping=True)",
    "compact_hand": "mx.nd.contrib.dgl_graph_compact(mx.nd.sparse.csr_matrix((ids(mx, [7, 8, 9]), ids(mx, [3, 0, 3]), "
                    "ids(mx, [0, 2, 2, 3, 3])), shape=(4, 5), dtype=np.int64), ids(mx, [0, 3, 4, -1, 2]), "
                    "graph_sizes=(2,), return_mapping=False)",
}

# samplers with no random choice (num_neighbor >= every degree) and compaction of their output
SAMPLES = {
    "uniform_k5_1hop": "mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g['k5'], ids(mx, [0]), num_args=2, num_hops=1, "
                       "num_neighbor=4, max_num_vertices=6)",
    "uniform_p7_2hop": "mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g['p7'], ids(mx, [0]), num_args=2, num_hops=2, "
                       "num_neighbor=3, max_num_vertices=7)",
    "uniform_p7_3hop_two": "mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g['p7'], ids(mx, [0]), ids(mx, [3, 6]), "
                           "num_args=3, num_hops=3, num_neighbor=2, max_num_vertices=7)",
    "uniform_p7_truncated": "mx.nd.contrib.dgl_csr_neighbor_uniform_sample(g['p7'], ids(mx, [2]), num_args=2, "
                            "num_hops=3, num_neighbor=2, max_num_vertices=3)",
    "nonuniform_p7_2hop": "mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(g['p7'], g['prob7'], ids(mx, [0, 4]), "
                          "num_args=3, num_hops=2, num_neighbor=2, max_num_vertices=7)",
    "nonuniform_k5_all": "mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(g['k5'], g['prob5'], ids(mx, [1]), "
                         "num_args=3, num_hops=1, num_neighbor=4, max_num_vertices=5)",
}

# dgl_graph_compact of a sample: (sampler case, return_mapping)
COMPACTS = {"compact_k5": ("uniform_k5_1hop", True), "compact_p7": ("uniform_p7_2hop", False),
            "compact_p7_two": ("uniform_p7_3hop_two", True)}


def describe(mx: Any, res: Any, valid: int | None = None) -> Any:
    """JSON form of a result; ``valid``: keep only the first entries of 1-D dense outputs
    (the samplers' padding is undefined in MXNet) and the first rows of CSR outputs."""
    if isinstance(res, (list, tuple)):
        return {"list": [describe(mx, r, valid) for r in res]}
    out: dict[str, Any] = {"stype": res.stype, "shape": list(res.shape), "dtype": np.dtype(res.dtype).name}
    if res.stype == "csr":
        ptr = res.indptr.asnumpy().tolist()
        nnz = ptr[-1] if ptr else 0  # MXNet 1.9.1 leaves dgl_graph_compact's mapping unallocated
        out.update(indptr=ptr, indices=res.indices.asnumpy().tolist()[:nnz], data=res.data.asnumpy().tolist()[:nnz])
    else:
        out["value"] = res.asnumpy().tolist()
    return out


def sample_parts(mx: Any, outs: list[Any], nonuniform: bool) -> dict[str, Any]:
    """A sampler's outputs split by group, each cut to its valid part (the count)."""
    groups = 4 if nonuniform else 3
    k = len(outs) // groups
    res: dict[str, Any] = {"num_outputs": len(outs), "graphs": []}
    for j in range(k):
        vid = outs[j].asnumpy()
        n = int(vid[-1])
        sub = outs[k + j]
        ptr = sub.indptr.asnumpy()
        one = {"count": n, "vertices": vid[:n].tolist(), "ids_shape": list(outs[j].shape),
               "ids_dtype": np.dtype(outs[j].dtype).name, "csr": describe(mx, sub),
               "layers": outs[(groups - 1) * k + j].asnumpy()[:n].tolist(),
               "layers_shape": list(outs[(groups - 1) * k + j].shape), "rows_after_count": ptr[n:].tolist()}
        if nonuniform:
            one["prob"] = outs[2 * k + j].asnumpy()[:n].tolist()
            one["prob_dtype"] = np.dtype(outs[2 * k + j].dtype).name
        res["graphs"].append(one)
    return res


def compact_expr(outs: list[Any], nonuniform: bool) -> tuple[list[Any], list[int]]:
    """The arguments of dgl_graph_compact for a sampler's outputs: graphs, vertex arrays, sizes."""
    groups = 4 if nonuniform else 3
    k = len(outs) // groups
    sizes = [int(outs[j].asnumpy()[-1]) for j in range(k)]
    return list(outs[k:2 * k]) + list(outs[:k]), sizes


def run_all(mx: Any) -> dict[str, Any]:
    g = graphs(mx)
    env = {"mx": mx, "np": np, "g": g, "ids": ids}
    rec: dict[str, Any] = {"exact": {}, "samples": {}, "compacts": {}}
    for name, expr in EXACT.items():
        try:
            rec["exact"][name] = describe(mx, eval(expr, env))
        except Exception as e:  # MXNet refuses: recorded, plexnet must refuse too
            rec["exact"][name] = {"error": type(e).__name__, "message": str(e).strip().splitlines()[-1][:200]}
    sampled = {}
    for name, expr in SAMPLES.items():
        outs = eval(expr, env)
        sampled[name] = outs
        rec["samples"][name] = sample_parts(mx, outs, "non_uniform" in expr)
    for name, (src, mapping) in COMPACTS.items():
        args, sizes = compact_expr(sampled[src], "non_uniform" in SAMPLES[src])
        rec["compacts"][name] = describe(mx, mx.nd.contrib.dgl_graph_compact(
            *args, graph_sizes=tuple(sizes), return_mapping=mapping))
    return rec
