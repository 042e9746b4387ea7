"""The import path of a changed Python file: the root directory to put on `sys.path` and the dotted module."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

__all__ = ["lifted", "module_of"]

_IDENT = re.compile(r"^[A-Za-z_]\w*$")


def _package_root(parts: list[str], packages: Collection[str]) -> int:
    """How many leading directories of `parts` (a file's path) lie above its topmost package (the
    outermost directory with an `__init__.py`; namespace directories between are fine)."""
    for k in range(len(parts) - 1):
        if "/".join(parts[: k + 1]) in packages:
            return k
    return 0


def module_of(path: str, packages: Collection[str] | None = None) -> tuple[str, str] | None:
    """(import root, dotted module) of a Python file path; None when the path is no importable module.

    `packages`: the directories of the revision that hold an `__init__.py`; the import root is then
    the directory above the file's topmost package (`python/sglang/srt/x.py` -> `python`). Without
    them, or for a file outside any package, it is `src` for a file under `src/`, else the root.
    `python/sglang/srt/configs/x.py` with `python/sglang/__init__.py` and no `srt/__init__.py` still
    imports as `sglang.srt.configs.x` (a namespace directory between two packages)."""
    if not path.endswith(".py"):
        return None
    parts = path[: -len(".py")].split("/")
    root = ""
    skip = _package_root(parts, packages) if packages else 0
    if skip:
        root, parts = "/".join(parts[:skip]), parts[skip:]
    elif len(parts) > 1 and parts[0] == "src":
        root, parts = "src", parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(_IDENT.match(p) for p in parts):
        return None
    return root, ".".join(parts)


def _imported(tree: ast.Module) -> set[str]:
    """The absolute module names the file imports."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            out.add(n.module)
    return out


def lifted(located: tuple[str, str], tree: ast.Module) -> tuple[str, str]:
    """The import root raised to the directories above the topmost package (namespace directories
    without `__init__.py`) that the module itself names: `megatron/training/arguments.py` with no
    `megatron/__init__.py` imports as `megatron.training.arguments` when it writes `from ..core import
    x` (its relative imports climb past `training`) or `from megatron.training.utils import y` (it
    imports modules through `megatron`): imported as `training.arguments`, its package would load
    twice under two names and its relative imports would fail."""
    root, module = located
    above = root.split("/") if root else []
    level = max((n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)
    short = level - module.count(".")  # the dots a relative import climbs past the module's packages
    names = _imported(tree)
    for k in range(1, len(above) + 1):
        spelled = ".".join(above[-k:])
        if any(n.startswith(spelled + ".") for n in names):
            short = max(short, k)
    if short <= 0 or short > len(above) or not all(_IDENT.match(d) for d in above[-short:]):
        return located
    return "/".join(above[:-short]), ".".join([*above[-short:], module])
