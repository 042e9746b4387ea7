"""Where the names a Python module imports come from, in the repository (pure)."""

from __future__ import annotations

import ast
import posixpath

__all__ = ["Imported", "imports_of", "module_paths"]

Imported = tuple[str, int, str]  # (module as written, relative level, the name in that module)


def imports_of(tree: ast.Module) -> dict[str, Imported]:
    """Local name -> where `from module import name [as local]` takes it (imports inside functions too)."""
    return {
        (a.asname or a.name): (node.module or "", node.level, a.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for a in node.names
    }


def module_paths(importer: str, dotted: str, level: int) -> tuple[str, ...]:
    """The repository paths module `dotted` can be at, imported from file `importer` (`level` > 0: a
    relative import, counted from the importer's package)."""
    if not dotted:
        return ()
    base = posixpath.dirname(importer)
    for _ in range(max(level - 1, 0)):
        base = posixpath.dirname(base)
    parts = dotted.split(".")
    stem = posixpath.join(base, *parts) if level else posixpath.join(*parts)
    return (f"{stem}.py", f"{stem}/__init__.py")
