"""The method harness: a derivation in a method no constructor calls, run by calling that method.

`ModelConfig().update_common()`, `EngineArgs()._set_default_args()`: the changed derivation runs in a
method the project calls on a built object. The object is built as the constructor path builds it
(every default, or the required arguments a call in the repository gives as literals); each column
is then set the way the method reads it: a constructor keyword when the constructor takes it, else
an attribute the class itself assigns (`self.x = ...`, or a declared field) set on the built object,
else a parameter of the method passed to the call. The method is called, and the target read off the
object afterwards (`self.x`). A method that is static, a class method, a property, async, or takes a
parameter no column gives and that has no default is not called: the reason says which.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["MethodPlan", "assigned", "method_plan"]

_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_NOT_CALLED = {"staticmethod", "classmethod", "property", "cached_property", "abstractmethod"}


@dataclass(frozen=True)
class MethodPlan:
    """How the columns of a table reach a method's run: keywords, attributes set, arguments passed."""

    keywords: tuple[tuple[str, str], ...]  # column -> name (a constructor keyword, attribute or argument)
    sets: tuple[str, ...]  # names set as attributes on the built object before the call
    args: tuple[str, ...]  # names passed to the method as keyword arguments


def assigned(cls: ast.ClassDef) -> set[str]:
    """Attributes the class assigns on `self` in any of its methods, and those its body declares."""
    out = {s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    out |= {t.id for s in cls.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                out.add(t.attr)
    return out


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | str:
    node = next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name),
        None,
    )
    if node is None:
        return f"`{cls.name}.{name}` is not defined in the class body"
    if isinstance(node, ast.AsyncFunctionDef):
        return f"`{cls.name}.{name}` is async: only plain methods are called"
    decorators = {ast.unparse(d).rsplit(".", 1)[-1] for d in node.decorator_list}
    odd = sorted(decorators & _NOT_CALLED)
    if odd:
        return f"`{cls.name}.{name}` is a {odd[0]}: only methods called on a built object are run"
    return node


def _params(fn: ast.FunctionDef) -> tuple[list[str], set[str]]:
    """The method's keyword-passable parameters (after `self`), and those without a default."""
    a = fn.args
    positional = a.args[1:]
    optional = len(a.defaults)
    required = {p.arg for p in positional[: len(positional) - optional]}
    required |= {k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None}
    return [p.arg for p in (*positional, *a.kwonlyargs)], required


def _place(column: str, taken: set[str], assigned: set[str], params: list[str]) -> tuple[str, str] | None:
    """Where a column goes: ("keyword" | "set" | "arg", name), or None when it cannot be set."""
    on_self = column.startswith("self.")
    name = column.removeprefix("self.")
    if not _IDENT.match(name):
        return None
    if not on_self and name in params:
        return "arg", name
    if name in taken:
        return "keyword", name
    if name in assigned:
        return "set", name
    return None


def method_plan(
    cls: ast.ClassDef, method: str, columns: list[str], target: str, taken: list[str]
) -> MethodPlan | str:
    """The plan that runs `cls.method` with the table's `columns` and reads `target`, or why none."""
    fn = _method(cls, method)
    if isinstance(fn, str):
        return fn
    if fn.args.posonlyargs:
        return f"`{cls.name}.{method}` takes positional-only parameters"
    on_self = assigned(cls)
    attr = target.removeprefix("self.")
    if not _IDENT.match(attr) or attr not in on_self:
        return f"the target `{target}` is no attribute `{cls.name}` assigns: it cannot be read after the call"
    params, required = _params(fn)
    keywords: list[tuple[str, str]] = []
    sets: list[str] = []
    args: list[str] = []
    for column in columns:
        placed = _place(column, set(taken), on_self, params)
        if placed is None:
            return f"the column `{column}` cannot be set on `{cls.name}` before calling `{method}`"
        where, name = placed
        keywords.append((column, name))
        if where == "set" and name not in sets:
            sets.append(name)
        elif where == "arg" and name not in args:
            args.append(name)
    if required:
        shown = ", ".join(f"`{m}`" for m in sorted(required)[:3])
        return (
            f"`{cls.name}.{method}` requires {shown} (no default): the all-defaults call "
            f"`{cls.name}(...).{method}()` has nothing to pass"
        )
    return MethodPlan(tuple(keywords), tuple(sets), tuple(args))
