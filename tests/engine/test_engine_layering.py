"""The engine sits at the bottom of the core: it imports nothing above it (not even
inside functions), and its modules stay small (issue 12)."""
from __future__ import annotations

import ast
from pathlib import Path

import plexnet.engine

ENGINE_DIR = Path(plexnet.engine.__file__).parent
#: what the engine may import from the rest of plexnet
ALLOWED = {"plexnet.base", "plexnet.context"}


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every plexnet module ``path`` imports, anywhere in the file."""
    pkg = "plexnet.engine"
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.rsplit(".", node.level - 1)[0] if node.level > 1 else pkg
                mod = f"{base}.{node.module}" if node.module else base
                names = [mod] if node.module else [f"{base}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
            found += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(ln, n) for ln, n in found if n == "plexnet" or n.startswith("plexnet.")]


def test_engine_imports_only_base_and_context() -> None:
    bad = [f"{p.name}:{ln}: {mod}" for p in sorted(ENGINE_DIR.glob("*.py")) for ln, mod in _imports(p)
           if not (mod.startswith("plexnet.engine") or mod in ALLOWED)]
    assert not bad, "the engine imports upward:\n" + "\n".join(bad)


def test_engine_modules_are_small() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in ENGINE_DIR.glob("*.py")}
    assert max(sizes.values()) < 500, sizes


def test_layering_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from ..backends import get_backend\nfrom . import base\n"
                     "def f():\n    from .. import profiler\n    import plexnet.ndarray\n")
    assert [m for _, m in _imports(probe)] == ["plexnet.backends", "plexnet.engine.base",
                                               "plexnet.profiler", "plexnet.ndarray"]
