"""Probes of optional packages that raise when the package is missing (pure).

`importlib.util.find_spec("mooncake.engine")` looks like a safe "is it installed?" test, but for a
dotted name Python imports the parent package first (the standard library documents it: "If the name
is for a submodule (contains a dot), the parent module is automatically imported"), so where
`mooncake` is not installed the probe raises `ModuleNotFoundError` instead of returning `None`. Read
with the standard `ast` on the added lines of the changed Python files (`analysis.pyast`).

Not a probe that can raise: an undotted name (`find_spec("mooncake")` returns `None`), one inside a
`try` that catches `ImportError`, `ModuleNotFoundError`, `Exception` or everything (or a `with
contextlib.suppress(...)` of one of those), a parent of the
standard library, the project's own top-level package, or a package the same module imports at its
top level without a guard (it is installed wherever the module runs at all). Not judged: a probe
after a check that can stop it: an earlier operand of the same `and`/`or` (`has_flashinfer() and
find_spec("flashinfer.comm")`), an earlier `if ...: return` / `raise` in the function. A module
named for the package (`utils/flashinfer.py`) is judged like any other: a wrapper for an optional
package is where its probes must not raise.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reviewbot.analysis.pyast import Texts, changed_python
from reviewbot.analysis.sides import Side

__all__ = ["RaisingProbe", "own_packages", "raising_probes"]

_CATCHES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


@dataclass(frozen=True)
class RaisingProbe:
    path: str
    line: int
    module: str  # the dotted name probed (`mooncake.engine`)
    parent: str  # the top-level package imported first (`mooncake`)
    text: str  # the probing line, as written (indentation aside)
    function: str  # the enclosing function, qualified by its class ("" at module level)
    field: str  # the first attribute the guarded branch assigns (`self.x = ...`), or ""


def _is_find_spec(func: ast.expr, aliases: set[str], modules: set[str]) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "find_spec" and ast.unparse(func.value) in modules
    return isinstance(func, ast.Name) and func.id in aliases


def _find_spec_aliases(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to `find_spec` (`from importlib.util import find_spec [as x]`) and to the module
    `importlib.util` (`import importlib.util [as iu]`, `from importlib import util [as u]`)."""
    names: set[str] = set()
    modules = {"importlib.util"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "importlib.util":
            names.update(a.asname or a.name for a in node.names if a.name == "find_spec")
        elif isinstance(node, ast.ImportFrom) and node.module == "importlib":
            modules.update(a.asname or a.name for a in node.names if a.name == "util")
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.name == "importlib.util" and a.asname)
    return names, modules


def _probed(node: ast.AST, finder: _Finder) -> set[str]:
    """Top-level packages a condition probes (`find_spec("mooncake")`, `find_spec("a.b")` -> `a`)."""
    return {
        c.args[0].value.split(".")[0]
        for c in ast.walk(node)
        if isinstance(c, ast.Call)
        and c.args
        and isinstance(c.args[0], ast.Constant)
        and isinstance(c.args[0].value, str)
        and _is_find_spec(c.func, finder.aliases, finder.modules)
    }


def _top_level_imports(tree: ast.Module) -> set[str]:
    """Top-level packages the module imports unconditionally (module-level `import`/`from`)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def _catches_import_errors(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(n).split(".")[-1] in _CATCHES for n in names)


def _suppresses_import_errors(item: ast.withitem) -> bool:
    """`with contextlib.suppress(ImportError):` (or `suppress(ModuleNotFoundError, ...)`): a probe
    raising inside it is swallowed like in a `try`."""
    call = item.context_expr
    return (
        isinstance(call, ast.Call)
        and ast.unparse(call.func).split(".")[-1] == "suppress"
        and any(ast.unparse(a).split(".")[-1] in _CATCHES for a in call.args)
    )


def _exits(node: ast.If) -> bool:
    """An `if` whose branch leaves the function (`if not has_x(): return False`, `... raise`)."""
    return bool(node.body) and isinstance(node.body[-1], ast.Return | ast.Raise)


class _Finder(ast.NodeVisitor):
    """Walks the module, keeping the enclosing function and whether something guards the probe: a `try`
    that catches import errors, an earlier operand of the same `and` (`has_x() and find_spec("x.y")`),
    or an earlier early exit of the function (`if not has_x(): return False`)."""

    def __init__(self, aliases: tuple[set[str], set[str]]) -> None:
        self.aliases, self.modules = aliases
        self.checked: list[set[str]] = []  # packages an enclosing `if` / conditional probes
        self.function: list[str] = []
        self.bodies: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.guarded = 0
        self.found: list[tuple[ast.Call, str, str]] = []  # (call, name, function)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # Decorators and defaults run where the function is defined, not in it: a probe there belongs
        # to the enclosing scope, and no early exit of the function stops it.
        for outside in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if outside is not None:
                self.visit(outside)
        self.function.append(node.name)
        self.bodies.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.bodies.pop()
        self.function.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If | ast.IfExp) -> None:
        """`if find_spec("mooncake") is not None: find_spec("mooncake.engine")`: both branches of a
        condition that probes the parent are guarded (the suggestion's own shape)."""
        self.visit(node.test)
        self.checked.append(_probed(node.test, self))
        for part in (node.body, node.orelse):
            for child in part if isinstance(part, list) else [part]:
                self.visit(child)
        self.checked.pop()

    visit_IfExp = visit_If

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.function.append(node.name)  # `ServerArgs.__post_init__`: the qualified name
        self.generic_visit(node)
        self.function.pop()

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        guarded = any(_catches_import_errors(h) for h in node.handlers)
        self.guarded += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guarded -= guarded
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try  # `except* ImportError`

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        guarded = any(_suppresses_import_errors(item) for item in node.items)
        for item in node.items:
            self.visit(item)
        self.guarded += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guarded -= guarded

    visit_AsyncWith = visit_With

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self.visit(node.values[0])
        self.guarded += 1  # the later operands run only when the earlier ones let them
        for value in node.values[1:]:
            self.visit(value)
        self.guarded -= 1

    def _exited_before(self, line: int) -> bool:
        """An earlier `if ...: return` in the function, not the one the probe sits in."""
        body = self.bodies[-1] if self.bodies else None
        return body is not None and any(
            isinstance(n, ast.If) and (n.end_lineno or n.lineno) < line and _exits(n) for n in ast.walk(body)
        )

    def visit_Call(self, node: ast.Call) -> None:
        arg = node.args[0] if node.args else None
        if (
            not self.guarded
            and _is_find_spec(node.func, self.aliases, self.modules)
            and isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and "." in arg.value
            and not arg.value.startswith(".")  # relative to a package argument: the project's own
            and not any(arg.value.split(".")[0] in c for c in self.checked)
            and not self._exited_before(node.lineno)
        ):
            self.found.append((node, arg.value, ".".join(self.function)))
        self.generic_visit(node)


def _assigned_field(tree: ast.Module, line: int) -> str:
    """The first `self.x` / `obj.x` an `if` on this line assigns in its branches: the setting decided."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.lineno == line:
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        if isinstance(t, ast.Attribute):
                            return t.attr
    return ""


def own_packages(paths: Iterable[str]) -> frozenset[str]:
    """The repository's top-level Python packages: folders with an `__init__.py` none of whose ancestors
    has one (`python/sglang/__init__.py` -> `sglang`); a sub-package's name
    (`sglang/srt/disaggregation/mooncake`) is not one, as `import mooncake` never finds it."""
    inits = {path.rsplit("/", 1)[0] if "/" in path else "" for path in paths if path.endswith("__init__.py")}

    def ancestors(d: str) -> Iterator[str]:
        while "/" in d:
            d = d.rsplit("/", 1)[0]
            yield d

    return frozenset(d.rsplit("/", 1)[-1] for d in inits if d and not any(a in inits for a in ancestors(d)))


def raising_probes(changed: Iterable[Side], texts: Texts, own: frozenset[str]) -> Iterator[RaisingProbe]:
    """Unguarded `find_spec` calls of a dotted name on added lines whose parent is an optional package.
    `own`: the repository's top-level package names (its own code is always importable)."""
    for s, _, head_text, tree in changed_python(changed, texts):
        finder = _Finder(_find_spec_aliases(tree))
        finder.visit(tree)
        required = _top_level_imports(tree)
        lines = head_text.split("\n")  # as `ast` and git count lines (not at form feeds)
        for call, name, function in finder.found:
            parent = name.split(".")[0]
            if call.lineno not in s.added or parent in required or parent in own:
                continue
            if parent in sys.stdlib_module_names:
                continue
            yield RaisingProbe(
                path=s.path,
                line=call.lineno,
                module=name,
                parent=parent,
                text=lines[call.lineno - 1].strip(),
                function=function,
                field=_assigned_field(tree, call.lineno),
            )
