"""Packaging hygiene: the runtime dependencies are exactly what the package imports at run time,
and the Python floor is the one its imports need (tomllib: 3.11)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement (`PyYAML>=6` -> `pyyaml`)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _runtime_imports() -> set[str]:
    """Top-level modules imported by reviewbot outside `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()
    for path in (ROOT / "reviewbot").rglob("*.py"):
        if "data" in path.relative_to(ROOT / "reviewbot").parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body
            for n in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "reviewbot"}


def test_runtime_dependencies_are_exactly_the_imported_distributions() -> None:
    owners = packages_distributions()
    imported = {_name(owners[m][0]) for m in _runtime_imports()}
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert declared == imported


def test_test_only_packages_stay_out_of_the_runtime_dependencies() -> None:
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert "httpx" not in declared
    assert "httpx" in {_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]}


def test_the_python_floor_is_the_one_the_imports_need() -> None:
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py311"
    assert PYPROJECT["tool"]["mypy"]["python_version"] == "3.11"
