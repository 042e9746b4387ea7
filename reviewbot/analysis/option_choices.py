"""argparse options whose default is not one of their `choices` (pure).

argparse checks `choices` only against what the command line passes, never against `default`: an
option declared `choices=["mxfp4", "bf16"], default="default"` starts every launch with a value the
command line can neither give nor give back, and code written against the choices (`if precision ==
"mxfp4": ... elif precision == "bf16": ... else: raise`) meets a value none of its branches expects
(sglang 0374304a2, its default taken from the `ServerArgs` field `Literal["default", "bf16"] =
"default"`).

Read with the standard `ast` on the changed Python files. The default is a literal, or a field of a class
of the same file (`default=ServerArgs.x` where `ServerArgs` declares `x: str = "default"`, or
`x = field(default="default")`); a string default goes through `type=int` / `type=float` first, as
argparse does. Reported when the change adds or edits the option's call or the field's line, and the
base did not already have the same mismatch.

Not judged: `None` and `""` defaults (the usual "not set" sentinels), options with `nargs` or an
`action` (lists and flags), positional and `required=True` options (their default is never used), a
string default another `type=` converts (`str.lower`, a project's parser), choices that are not all
literals (an enum, a function's result), and defaults that are not resolved to a literal.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reviewbot.analysis.pyast import Texts, changed_python, python_tree
from reviewbot.analysis.sides import Side

__all__ = ["ChoicesMiss", "choices_misses"]

_UNSET = (None, "")
_CONVERT = {"int": int, "float": float}


@dataclass(frozen=True)
class ChoicesMiss:
    path: str
    line: int  # the `default=` keyword's line
    flag: str
    default: str  # repr of the default's value
    choices: tuple[str, ...]  # repr of each choice
    default_text: str  # the `default=` line as written (stripped)
    choices_text: str  # the `choices=` line as written (stripped)
    choices_line: int
    field_line: int = 0  # where a class field gives the default (0: a literal at the call)
    field_text: str = ""


def _field_defaults(tree: ast.Module) -> dict[tuple[str, str], tuple[object, int]]:
    """{(class, field): (literal default, line)} of the classes of a module."""
    out: dict[tuple[str, str], tuple[object, int]] = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for st in cls.body:
            target: ast.expr | None = st.target if isinstance(st, ast.AnnAssign) else None
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                target = st.targets[0]
            value = getattr(st, "value", None)
            if not isinstance(target, ast.Name) or value is None:
                continue
            if (
                isinstance(value, ast.Call)
                and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field"
            ):
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            if isinstance(value, ast.Constant):
                out[(cls.name, target.id)] = (value.value, st.lineno)
    return out


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


@dataclass(frozen=True)
class _Found:
    call: ast.Call
    flag: str
    default: object
    choices: tuple[object, ...]
    field_line: int


def _checked(call: ast.Call) -> tuple[str, tuple[object, ...], ast.expr] | None:
    """(first option string, literal choices, default expression) of an `add_argument` call whose
    default is used and compared with nothing: an optional, not required, single-valued option."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "add_argument":
        return None
    if _keyword(call, "nargs") or _keyword(call, "action"):
        return None
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    choices, default, required = (
        _keyword(call, "choices"),
        _keyword(call, "default"),
        _keyword(call, "required"),
    )
    if not flags or not flags[0].startswith("-") or default is None:
        return None  # a positional option: its default is never used
    if isinstance(required, ast.Constant) and required.value is True:
        return None
    if not isinstance(choices, ast.List | ast.Tuple | ast.Set) or not choices.elts:
        return None
    if not all(isinstance(e, ast.Constant) for e in choices.elts):
        return None
    return flags[0], tuple(e.value for e in choices.elts if isinstance(e, ast.Constant)), default


_UNKNOWN = object()


def _typed(value: object, typ: ast.expr | None) -> object:
    """The default as argparse stores it: a string default goes through `type` (int/float/str known)."""
    if not isinstance(value, str) or typ is None:
        return value
    name = typ.id if isinstance(typ, ast.Name) else ""
    if name == "str":
        return value
    convert = _CONVERT.get(name)
    if convert is None:
        return _UNKNOWN
    try:
        return convert(value)
    except ValueError:
        return _UNKNOWN


def _misses(tree: ast.Module) -> Iterator[_Found]:
    fields = _field_defaults(tree)
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        got = _checked(call)
        if got is None:
            continue
        flag, options, default = got
        value, field_line = _resolve(default, fields)
        if field_line < 0 or value in _UNSET:
            continue
        value = _typed(value, _keyword(call, "type"))
        if value is not _UNKNOWN and value not in options:
            yield _Found(call, flag, value, options, field_line)


def _resolve(default: ast.expr, fields: dict[tuple[str, str], tuple[object, int]]) -> tuple[object, int]:
    """(value, the field's line; 0 for a literal) of a default; line -1 when it is not known."""
    if isinstance(default, ast.Constant):
        return default.value, 0
    if isinstance(default, ast.Attribute) and isinstance(default.value, ast.Name):
        got = fields.get((default.value.id, default.attr))
        if got is not None:
            return got
    return None, -1


def choices_misses(changed: Iterable[Side], texts: Texts) -> list[ChoicesMiss]:
    out: list[ChoicesMiss] = []
    for s, base_text, head_text, head in changed_python(changed, texts):
        base = python_tree(base_text)
        before = {(f.flag, repr(f.default)) for f in _misses(base)} if base is not None else set()
        lines = head_text.split("\n")
        for f in _misses(head):
            call = set(range(f.call.lineno, (f.call.end_lineno or f.call.lineno) + 1))
            touched = s.added & (call | {f.field_line})
            if not touched or (f.flag, repr(f.default)) in before:
                continue
            default, choices = _keyword(f.call, "default"), _keyword(f.call, "choices")
            assert default is not None and choices is not None
            out.append(
                ChoicesMiss(
                    s.path, default.lineno, f.flag, repr(f.default), tuple(map(repr, f.choices)),
                    lines[default.lineno - 1].strip(), lines[choices.lineno - 1].strip(), choices.lineno,
                    f.field_line, lines[f.field_line - 1].strip() if f.field_line else "",
                )
            )  # fmt: skip
    return out
