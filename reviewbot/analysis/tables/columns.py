"""The columns of a truth table: every value a variable can take and the default it starts from."""

from __future__ import annotations

import re
from dataclasses import replace

from reviewbot.lang.facts import Lang
from reviewbot.lang.index import RepoIndex
from reviewbot.model.truthtable import OTHER, Value, Variable

__all__ = ["BOOLS", "ENUM_CONST", "finished"]

ENUM_CONST = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Z]\w*)\.([A-Za-z_]\w*)$")
BOOLS = {"True": True, "False": False}
_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _field_of(expr: str) -> str | None:
    return expr.rsplit(".", 1)[-1] if _PATH.match(expr) else None


def _with_default(v: Variable, index: RepoIndex, lang: Lang) -> Variable:
    """`v` with its default: the field's declared default, else the enum's first member or False."""
    field_name = _field_of(v.name)
    found = index.defaults(field_name) if field_name else []
    found = sorted(found, key=lambda d: (d.lang is not lang, d.path, d.line))
    if v.kind == "enum":
        for d in found:
            m = ENUM_CONST.match(d.value)
            if m and (v.enum is None or m.group(1) == v.enum):
                default = m.group(2) if m.group(2) in v.values else OTHER
                return replace(v, default=default, default_from=f"{d.path}:{d.line}")
        members = index.enum_members(v.enum or "")
        if members:
            default = members[0] if members[0] in v.values else OTHER
            return replace(v, default=default, default_from=f"enum first member ({v.enum}.{members[0]})")
        return v
    for d in found:
        if d.value in BOOLS:
            return replace(v, default=BOOLS[d.value], default_from=f"{d.path}:{d.line}")
    return replace(v, default=False, default_from="bool default")


def _with_domain(v: Variable, index: RepoIndex) -> Variable:
    """`v` with every value it can take: both booleans, or the enum's members in declaration order
    (members the index does not know after them) plus OTHER when some member is left out."""
    if v.kind == "bool":
        return replace(v, values=(True, False))
    values: list[Value] = list(v.values)
    members: tuple[Value, ...] = index.enum_members(v.enum or "")
    if members:
        values = [m for m in members if m in values] + [m for m in values if m not in members]
    if not members or len(set(members) - set(values)) > 0:
        values.append(OTHER)
    return replace(v, values=tuple(values))


def finished(v: Variable, index: RepoIndex, lang: Lang) -> Variable:
    """`v` with its domain and its default."""
    return _with_default(_with_domain(v, index), index, lang)
