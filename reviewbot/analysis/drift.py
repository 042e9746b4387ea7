"""Two copies of one default or derivation that disagree after the change (pure).

- Environment parsing: a changed read of a switch parses it into a bool differently from another read
  of the same switch in the project's source (`== "1"` here, `bool(int(...))` there), so some value an
  operator sets (`true`, `2`) means on in one place and off (or an error) in the other. Both parses
  must give bools and be evaluable (`analysis.envs.parse`); reads in tests and vendored trees do not count,
  nor a test that is the other's exact complement (`· == "1"` here, `· != "1"` there).
- One switch tested two ways in the same function, where one of the tests is constant
  (`envs.X is True` next to `envs.X.get()`, see `analysis.constant_guards`): set, the two tests pick
  different branches.
- Field defaults: the same field of two config owners (a C++ member and the Python field bound to it,
  two dataclasses, an argument dataclass and the config it builds), linked (one's default reads the
  other's, a binding, or a write that copies one into the other), agreed before the change and
  disagree after it. A reference `Owner.field` counts as the value it reads.
- A command-line option the change adds with another plain default than the config field of the same
  name (`analysis.option_drift`: arguments copied into config dataclasses by field name).

Copies that agree, or one copy reading the other at the head, are not drift.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from reviewbot.analysis.constant_guards import OS_ACCESSORS, ConstantGuard, ConstantKind
from reviewbot.analysis.defaults.changes import DefaultChange, DefaultKind
from reviewbot.analysis.envs.parse import SAMPLES, Outcome, Result, evaluate, same_literal
from reviewbot.analysis.envs.switches import complementary, head_readers, unset_value
from reviewbot.analysis.option_drift import option_copies
from reviewbot.analysis.sides import Side
from reviewbot.lang.facts import EnvRead, FieldDefault
from reviewbot.lang.index import RepoIndex, is_test_path

__all__ = ["DriftKind", "Drift", "env_drifts", "switch_drifts", "default_drifts", "option_drifts"]


class DriftKind(str, Enum):
    ENV = "env"
    SWITCH = "switch"
    DEFAULT = "default"
    OPTION = "option"  # an added command-line option and the config field it is copied into


@dataclass(frozen=True)
class Drift:
    kind: DriftKind
    name: str  # the variable or `Owner.field`
    field: str  # the variable or the bare field
    path: str
    line: int
    here: str  # this copy (parse or value)
    there: str  # the other copy
    there_path: str
    there_line: int
    sample: str = ""  # ENV: a value set on which they disagree
    here_gives: str = ""
    there_gives: str = ""
    was: str = ""  # DEFAULT: the value both had at the base
    also: tuple[str, ...] = ()  # DEFAULT: further fields of the same two owners that drift the same way


# --- environment parses --------------------------------------------------------------------------------


def _gives(e: EnvRead, sample: str | None) -> Result:
    return unset_value(e) if sample is None else evaluate(e.parse, sample)


def _boolish(r: Result) -> bool:
    return r.outcome is Outcome.RAISES or (r.outcome is Outcome.VALUE and isinstance(r.value, bool))


def _disagreement(a: EnvRead, b: EnvRead) -> tuple[str, Result, Result] | None:
    """The first value set (or unset) on which two bool parses of one switch differ."""
    pairs = [(s, _gives(a, s), _gives(b, s)) for s in (*SAMPLES, None)]
    if any(not (_boolish(x) and _boolish(y)) for _, x, y in pairs):
        return None  # not both bool switches, or not evaluable: nothing to say
    for s, x, y in pairs:
        if x != y:
            return ("unset" if s is None else s, x, y)
    return None


def env_drifts(sides: list[Side], index: RepoIndex) -> list[Drift]:
    out: list[Drift] = []
    for s in sides:
        if s.head_facts is None:
            continue
        for e in sorted(s.head_facts.env_reads, key=lambda e: (e.line, e.name, e.parse)):
            if e.line not in s.added or e.accessor not in OS_ACCESSORS or not e.parse:
                continue
            others = [
                o
                for o in head_readers(e.name, index, sides)
                if o.accessor in OS_ACCESSORS and o.parse and o.path != e.path and not is_test_path(o.path)
            ]
            for o in others:
                if complementary(e, o):
                    continue  # `· == "1"` here, `· != "1"` there: the same reading, tested from the other side
                found = _disagreement(e, o)
                if found is None:
                    continue
                sample, x, y = found
                out.append(
                    Drift(
                        DriftKind.ENV, e.name, e.name, e.path, e.line, e.written or e.parse, o.written or o.parse,
                        o.path, o.line,
                        sample=sample, here_gives=x.shown(), there_gives=y.shown(),
                    )
                )  # fmt: skip
                break
    return out


# --- one switch tested two ways --------------------------------------------------------------------------


def switch_drifts(sides: list[Side], constants: list[ConstantGuard]) -> list[Drift]:
    """Live tests of a switch that a constant test of the same switch contradicts in the same function."""
    out: list[Drift] = []
    by_path = {s.path: s for s in sides}
    for c in constants:
        s = by_path.get(c.path)
        if c.kind is not ConstantKind.ENV_OBJECT or s is None or s.head_facts is None:
            continue
        for e in sorted(s.head_facts.env_reads, key=lambda e: e.line):
            if (
                e.name == c.name
                and e.line != c.line
                and (e.function or "") == c.function
                and e.line in s.added
                and e.parse.replace(" ", "") == c.bound.replace(" ", "")
            ):
                out.append(
                    Drift(
                        DriftKind.SWITCH,
                        c.name,
                        c.name,
                        e.path,
                        e.line,
                        e.written or e.parse,
                        c.read,
                        c.path,
                        c.line,
                    )
                )
    return out


# --- field defaults ------------------------------------------------------------------------------------

_REFERENCE = re.compile(r"^([A-Z]\w*)\.(\w+)$")


def _resolve(value: str, index: RepoIndex, depth: int = 0) -> str:
    """`Owner.field` -> that owner's default for the field (followed a few steps); the value otherwise."""
    m = _REFERENCE.match(value)
    if m is None or depth > 3:
        return value
    owner, field = m.groups()
    found = [d for d in index.defaults(field) if d.owner == owner]
    return _resolve(found[0].value, index, depth + 1) if len(found) == 1 else value


def _bare(field: str) -> str:
    return field.rstrip("_")


def _copies(c: DefaultChange, index: RepoIndex) -> list[FieldDefault]:
    """Defaults of the same field on other config owners (C++ `x_` and Python `x` alike)."""
    family = index.family(c.owner)
    names = {c.field, _bare(c.field), _bare(c.field) + "_"}
    out = [
        d
        for n in sorted(names)
        for d in index.defaults(n)
        if d.owner not in family and d.owner != c.owner and not is_test_path(d.path) and not index.is_excluded(d.path)
        and index.is_config_owner(d.owner)
    ]  # fmt: skip
    return sorted(set(out), key=lambda d: (d.path, d.line))


def _reads(value: str, owner: str, index: RepoIndex) -> bool:
    """`value` is a reference to a field of `owner` (or of its family)."""
    m = _REFERENCE.match(value)
    return m is not None and m.group(1) in index.family(owner) | {owner}


def _linked(c: DefaultChange, d: FieldDefault, base_other: str, index: RepoIndex) -> bool:
    """The two copies are one setting: one reads the other, a binding joins them, or code copies one
    into the other."""
    if _reads(base_other, c.owner, index) or _reads(c.old, d.owner, index):
        return True
    if any(_bare(b.member) == _bare(c.field) or b.name == _bare(c.field) for b in index.bindings_of(d.owner)):
        return True
    return any(
        _bare(b.member) == _bare(c.field) or b.name == _bare(c.field) for b in index.bindings_of(c.owner)
    )


def default_drifts(changes: list[DefaultChange], index: RepoIndex) -> list[Drift]:
    """Pairs of linked field defaults that agreed at the base and disagree at the head. One finding per
    pair, on the copy that lost a `None` sentinel the other keeps, else on the changed copy."""
    fields = [c for c in changes if c.kind is DefaultKind.FIELD and c.owner]
    changed = {(c.owner, c.field): c for c in fields}
    out: dict[tuple[str, ...], Drift] = {}
    for c in fields:
        for d in _copies(c, index):
            other = changed.get((d.owner, d.field))
            base_other = other.old if other is not None else d.value
            if not _linked(c, d, base_other, index):
                continue
            was_here, was_there = _resolve(c.old, index), _resolve(base_other, index)
            if _reads(base_other, c.owner, index) or _reads(c.old, d.owner, index):
                was_there = was_here  # one read the other: they agreed by construction
            if not same_literal(was_here, was_there):
                continue
            now_here, now_there = _resolve(c.new, index), _resolve(d.value, index)
            if same_literal(now_here, now_there) or _REFERENCE.match(now_here) or _REFERENCE.match(now_there):
                continue
            key = tuple(sorted([f"{c.owner}.{c.field}", f"{d.owner}.{d.field}"]))
            if now_here == "None" and other is not None:
                continue  # reported from the other copy, which lost the sentinel
            out.setdefault(
                key,
                Drift(
                    DriftKind.DEFAULT, f"{c.owner}.{c.field}", c.field, c.path, c.line, c.new, d.value,
                    d.path, d.line, here_gives=now_here, there_gives=f"{d.owner}.{d.field}", was=was_here,
                ),
            )  # fmt: skip
    return _grouped([out[k] for k in sorted(out)])


def _grouped(drifts: list[Drift]) -> list[Drift]:
    """One finding per pair of owners (sibling fields that drift together are one change), on the first
    field by line; the others are named in `also`."""
    groups: dict[tuple[str, str, str], list[Drift]] = {}
    for d in drifts:
        owner = d.name.rsplit(".", 1)[0]
        other = d.there_gives.rsplit(".", 1)[0]
        groups.setdefault((d.path, owner, other), []).append(d)
    out: list[Drift] = []
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda d: (d.line, d.field))
        first = members[0]
        out.append(replace(first, also=tuple(d.field for d in members[1:])))
    return out


def option_drifts(sides: list[Side], index: RepoIndex, texts: Mapping[str, str | None]) -> list[Drift]:
    """An added option and the config field it is copied into, with two different plain defaults
    (`texts`: the head texts of the changed files, by path)."""
    return [
        Drift(DriftKind.OPTION, name, name, s.path, line, default, f.value, f.path, f.line,
              here_gives=default, there_gives=f"{f.owner}.{f.field}")
        for s, name, default, line, f in option_copies(sides, index, texts)
    ]  # fmt: skip
