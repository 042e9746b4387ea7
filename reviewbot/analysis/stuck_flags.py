"""Command-line switches the command line cannot turn off (pure): argparse `store_true` with a true default.

`add_argument("--metrics.rank_0_only", default=True, action="store_true")`: the option stores `True`
when given and the default is already `True`, so the value is `True` for every launch. Passing it
changes nothing and no spelling turns it off; the code it gates always runs (`store_false` with a
false default is the mirror image: always `False`). Read with the standard `ast` on the changed
Python files (`analysis.pyast`), reported only when the head adds the call and the base did not
already have the same stuck option.

Not stuck: another `add_argument` of the module that writes the same destination (`--no-x` with
`dest="x", action="store_false"`), a default that is not the literal bool (`default=None`, a name), a
`BooleanOptionalAction`, a parser whose `set_defaults` names the destination.

Also here, the option that parses its value with `bool` (`add_argument("--onnx-safe", type=bool)`):
`bool("False")` and `bool("0")` are `True`, so `--onnx-safe false` turns it on and only an empty
string turns it off. Not when the action takes no value (`BooleanOptionalAction`, `store_true`, where
`type` is never applied).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reviewbot.analysis.pyast import Texts, changed_python, python_tree
from reviewbot.analysis.sides import Side

__all__ = ["BoolTyped", "StuckFlag", "bool_typed", "stuck_flags"]

_STORE = {"store_true": True, "store_false": False}


@dataclass(frozen=True)
class StuckFlag:
    path: str
    line: int  # the `default=` keyword's line: where the fix goes
    flag: str  # the first option string, as written
    dest: str  # argparse's destination
    value: bool  # what the option always holds
    action: str  # "store_true" / "store_false"
    quoted: tuple[tuple[int, str], ...]  # (line, text as written) of the option string, default and action


@dataclass(frozen=True)
class _Option:
    call: ast.Call
    flag: str
    dest: str
    action: str | None
    default: ast.expr | None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _options(tree: ast.Module) -> Iterator[_Option]:
    """Every `<parser>.add_argument("--x", ...)` call with its destination, as argparse derives it: an
    explicit `dest=`, else the first long option string without its dashes, `-` read as `_`."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not flags or not flags[0].startswith("-"):
            continue  # a positional argument: always given
        dest = _keyword(node, "dest")
        if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
            name = dest.value
        else:
            long = next((f for f in flags if f.startswith("--")), flags[0])
            name = long.lstrip("-").replace("-", "_")
        action = _keyword(node, "action")
        act = action.value if isinstance(action, ast.Constant) and isinstance(action.value, str) else None
        yield _Option(node, flags[0], name, act, _keyword(node, "default"))


@dataclass(frozen=True)
class BoolTyped:
    path: str
    line: int  # the `type=bool` keyword's line
    flag: str
    dest: str
    quoted: tuple[tuple[int, str], ...]  # (line, text as written) of the option string and `type=bool`


def _bool_typed(tree: ast.Module) -> list[_Option]:
    out = []
    for o in _options(tree):
        typ = _keyword(o.call, "type")
        if isinstance(typ, ast.Name) and typ.id == "bool" and o.action in (None, "store", "append"):
            action = _keyword(o.call, "action")
            if action is None or isinstance(
                action, ast.Constant
            ):  # `argparse.BooleanOptionalAction`: no value
                out.append(o)
    return out


def bool_typed(changed: Iterable[Side], texts: Texts) -> Iterator[BoolTyped]:
    """The `type=bool` options the change adds (or adds `type=bool` to)."""
    for s, base_text, head_text, head in changed_python(changed, texts):
        base = python_tree(base_text)
        before = {o.flag for o in _bool_typed(base)} if base is not None else set()
        lines = head_text.split("\n")
        for o in _bool_typed(head):
            call = range(o.call.lineno, (o.call.end_lineno or o.call.lineno) + 1)
            typ = _keyword(o.call, "type")
            if o.flag in before or typ is None or not s.added.intersection(call):
                continue
            numbers = sorted({o.call.args[0].lineno, typ.lineno})
            quoted = tuple((n, lines[n - 1].strip()) for n in numbers)
            yield BoolTyped(s.path, typ.lineno, o.flag, o.dest, quoted)


def _set_defaults(tree: ast.Module) -> set[str]:
    """Destinations a `set_defaults(x=...)` call of the module names: their default comes from there."""
    return {
        k.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "set_defaults"
        for k in node.keywords
        if k.arg
    }


def _stuck(tree: ast.Module) -> list[tuple[_Option, str, int]]:
    """(option, its store action, the default's line) of each option whose default is what it stores."""
    options = list(_options(tree))
    writers: dict[str, int] = {}
    for o in options:
        writers[o.dest] = writers.get(o.dest, 0) + 1
    defaults = _set_defaults(tree)
    return [
        (o, o.action, o.default.lineno)
        for o in options
        if o.action in _STORE
        and isinstance(o.default, ast.Constant)
        and o.default.value is _STORE[o.action]
        and writers[o.dest] == 1
        and o.dest not in defaults
    ]


def stuck_flags(changed: Iterable[Side], texts: Texts) -> Iterator[StuckFlag]:
    for s, base_text, head_text, head in changed_python(changed, texts):
        base = python_tree(base_text)
        before = {(o.flag, action) for o, action, _ in _stuck(base)} if base is not None else set()
        for o, action, line in _stuck(head):
            call = range(o.call.lineno, (o.call.end_lineno or o.call.lineno) + 1)
            if (o.flag, action) in before or not s.added.intersection(call):
                continue  # the base already had it stuck, or the change did not touch the call
            yield StuckFlag(
                path=s.path,
                line=line,
                flag=o.flag,
                dest=o.dest,
                value=_STORE[action],
                action=action,
                quoted=_quote(head_text, o),
            )


def _quote(text: str, o: _Option) -> tuple[tuple[int, str], ...]:
    """The lines that hold the option string, its default and its action, as written (indentation
    aside): a one-line call is one line."""
    parts = [o.call.args[0], o.default, _keyword(o.call, "action")]
    numbers = sorted({p.lineno for p in parts if p is not None})
    lines = text.split("\n")  # as `ast` and git count lines (not at form feeds)
    return tuple((n, lines[n - 1].strip()) for n in numbers)
