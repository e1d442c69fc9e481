"""MkDocs hook: the migration guide's support table, generated from the code at build time.

``<!-- support-table -->`` in a page is replaced by a table of MXNet 1.9.1's public Python
API (``docs/data/mxnet-1.9.1-api.json``, the names of the mxnet 1.9.1 wheel, as
``/work/shared/tools/api_coverage.py`` uses them) against what ``import plexnet`` exposes
in the build environment: per namespace, how many names exist and which are missing.
``<!-- plugin-table -->`` becomes the plugins that were loaded, with what they registered.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REF = Path(__file__).resolve().parent.parent / "data" / "mxnet-1.9.1-api.json"
CLASSES = {"NDArray": "nd.NDArray", "Symbol": "sym.Symbol", "Executor": "executor.Executor",
           "Module": "mod.Module", "KVStore": "kv.KVStore"}


def _resolve(lib: Any, dotted: str) -> Any:
    obj = lib
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - a missing or failing attribute is "not there"
            return None
    return obj


def _has(obj: Any, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:  # noqa: BLE001
        return False


def coverage() -> dict[str, dict[str, Any]]:
    """``{namespace: {"have": n, "total": n, "missing": [...]}}`` for the installed plexnet."""
    import plexnet
    api = json.loads(REF.read_text())["api"]
    rows = {}
    for ns, names in api.items():
        if ns == "registered_operators_public":
            obj = _resolve(plexnet, "nd")
        elif ns in CLASSES:
            obj = _resolve(plexnet, CLASSES[ns])
        else:
            obj = plexnet if ns == "mx" else _resolve(plexnet, ns[3:])
        present = [n for n in names if obj is not None and _has(obj, n)]
        rows[ns] = {"have": len(present), "total": len(names), "missing": [n for n in names if n not in present]}
    return rows


def support_table() -> str:
    rows = coverage()
    have = sum(r["have"] for r in rows.values())
    total = sum(r["total"] for r in rows.values())
    out = [f"Generated when these pages were built, from the installed plexnet and its plugins: "
           f"**{have} of {total} names ({100.0 * have / total:.1f} %)** of MXNet 1.9.1's public Python API "
           f"exist. A name counts when the attribute exists; the tests show whether it behaves like MXNet's.",
           "", "| namespace | present | of | % | missing |", "|---|---:|---:|---:|---|"]
    for ns, r in rows.items():
        pct = 100.0 * r["have"] / r["total"] if r["total"] else 100.0
        miss = r["missing"]
        shown = ", ".join(f"`{m}`" for m in miss[:12]) + (f" and {len(miss) - 12} more" if len(miss) > 12 else "")
        label = "operators (`mx.nd.*`)" if ns == "registered_operators_public" else f"`{ns}`"
        out.append(f"| {label} | {r['have']} | {r['total']} | {pct:.0f} | {shown or '-'} |")
    return "\n".join(out) + "\n"


def plugin_table() -> str:
    from plexnet.plugins import get_manager
    out = ["| plugin | distribution | status | registered |", "|---|---|---|---|"]
    for r in get_manager().records.values():
        reg = "; ".join(f"{k}: {len(v)}" for k, v in r.registered.items()) or "-"
        out.append(f"| `{r.name}` | {r.distribution or 'built-in'} | {r.status} | {reg} |")
    return "\n".join(out) + "\n"


def cycles_table() -> str:
    """The import cycles left in core, from tools/count_cycles.py (grimp)."""
    import importlib.util
    import grimp
    path = Path(__file__).resolve().parents[2] / "tools" / "count_cycles.py"
    spec = importlib.util.spec_from_file_location("count_cycles", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    graph = grimp.build_graph("plexnet", exclude_type_checking_imports=True)
    cycles = mod.components(graph, set(graph.modules))
    if not cycles:
        return "No import cycle is left in core.\n"
    out = [f"{len(cycles)} import cycle(s) are left in core when these pages were built:", "",
           "| modules | one import per module inside the cycle |", "|---|---|"]
    for comp in cycles:
        inner = set(comp)
        edges = []
        for m in comp:
            for imp in sorted(graph.find_modules_directly_imported_by(m) & inner)[:1]:
                edges.append(f"`{m}` -> `{imp}`")
        out.append(f"| {len(comp)}: {', '.join(f'`{m}`' for m in comp)} | {'<br>'.join(edges)} |")
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if "<!-- cycles-table -->" in markdown:
        markdown = markdown.replace("<!-- cycles-table -->", cycles_table())
    if "<!-- support-table -->" in markdown:
        markdown = markdown.replace("<!-- support-table -->", support_table())
    if "<!-- plugin-table -->" in markdown:
        markdown = markdown.replace("<!-- plugin-table -->", plugin_table())
    return markdown
