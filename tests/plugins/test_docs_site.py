"""The docs site's generated parts: the migration guide's support table comes from the
code (the installed plexnet against MXNet 1.9.1's names), not from hand-written text."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _hook():
    spec = importlib.util.spec_from_file_location("support_table", ROOT / "docs" / "hooks" / "support_table.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_migration_guide_has_the_generated_table() -> None:
    text = (ROOT / "docs" / "migration.md").read_text()
    assert "<!-- support-table -->" in text
    out = _hook().on_page_markdown(text, None, None, None)
    assert "<!-- support-table -->" not in out
    assert "| `mx.nd` |" in out and "| `NDArray` |" in out and "of MXNet 1.9.1's public Python API" in out


def test_coverage_counts_what_exists() -> None:
    rows = _hook().coverage()
    assert rows["mx"]["have"] > 0 and rows["mx"]["total"] >= rows["mx"]["have"]
    assert "cpu" not in rows["mx"]["missing"] and "waitall" not in rows["mx"]["missing"]


def test_every_nav_page_exists() -> None:
    import re
    nav = re.findall(r":\s*([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    assert nav and all((ROOT / "docs" / p).exists() for p in nav), [p for p in nav if not (ROOT / "docs" / p).exists()]
