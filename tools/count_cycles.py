"""Count import cycles inside plexnet's core with grimp (CI runs this; exit 1 if any).

A cycle is a strongly connected component of the module import graph with more than
one module (every import counts: module level, in functions, under TYPE_CHECKING is
excluded since it never runs). A package's ``__init__`` importing its own submodules
and those importing siblings through the package is the usual shape of a cycle, so
each component is printed with one import chain through it to show where to cut.

    python tools/count_cycles.py [-v] [--max N]

``--max N`` fails only when there are more than N cycles (a ratchet while the last ones
are being removed; the goal is 0).
"""
from __future__ import annotations

import sys

import grimp


def components(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Tarjan's strongly connected components of the import graph over ``modules``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & modules)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt) & modules))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    graph = grimp.build_graph("plexnet", exclude_type_checking_imports=True)
    cycles = components(graph, set(graph.modules))
    print(f"import cycles in plexnet: {len(cycles)}")
    for comp in cycles:
        print(f"- {len(comp)} modules: {', '.join(comp)}")
        if "-v" in argv:
            for m in comp:
                for imp in sorted(graph.find_modules_directly_imported_by(m) & set(comp)):
                    for d in graph.get_import_details(importer=m, imported=imp):
                        print(f"    {m}:{d['line_number']} -> {imp}   ({d['line_contents']})")
    limit = int(argv[argv.index("--max") + 1]) if "--max" in argv else 0
    if len(cycles) > limit:
        print(f"FAIL: more than {limit} import cycle(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
