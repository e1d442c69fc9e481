"""Every distribution of the repository carries the same packaging metadata conventions:
an SPDX license, README as long description, a ``plexnet`` requirement bounded by the
plugin API major version, and project URLs that are identical everywhere and point at
real addresses (none while the project has no public home: docs/toolchain.md)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
DISTS = [ROOT / "pyproject.toml", ROOT / "examples" / "plugin-template" / "pyproject.toml",
         *sorted((ROOT / "plugins").glob("*/pyproject.toml"))]
PLACEHOLDER_HOSTS = ("example.com", "example.org", "example.net", "localhost", "your-org", "TODO")


def _project(path: Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)["project"]


@pytest.mark.parametrize("path", DISTS, ids=lambda p: p.parent.name)
def test_distribution_metadata(path: Path) -> None:
    proj = _project(path)
    assert isinstance(proj.get("license"), str), f"{path}: SPDX license string"
    assert proj.get("readme") == "README.md" and (path.parent / "README.md").is_file()
    if proj["name"] != "plexnet":
        req = [d for d in proj.get("dependencies", []) if d.replace(" ", "").startswith("plexnet>")]
        assert req and "<" in req[0], f"{path}: plexnet requirement bounded by the API major version"


def test_project_urls_are_the_same_everywhere_and_real() -> None:
    urls = {p.parent.name: _project(p).get("urls") for p in DISTS}
    assert len({repr(sorted((u or {}).items())) for u in urls.values()}) == 1, urls
    for u in urls.values():
        for target in (u or {}).values():
            assert target.startswith("https://") and not any(h in target for h in PLACEHOLDER_HOSTS), target


def test_numpy_lower_bound_is_the_tested_one_everywhere() -> None:
    # docs/toolchain.md "numpy versions": numpy 1.23.5 (MXNet 1.9.1's numpy<1.24), 1.24.4,
    # 1.26.4 and 2.x were tested; a distribution asking for less, or more, says otherwise
    bounds = {p.parent.name: d.replace(" ", "") for p in DISTS for d in _project(p).get("dependencies", [])
              if d.startswith("numpy")}
    assert bounds and set(bounds.values()) == {"numpy>=1.23"}, bounds
    assert "`numpy>=1.23`" in (ROOT / "docs" / "toolchain.md").read_text(encoding="utf-8")
