"""Truth tables of changed derivations (pure: facts in, dicts out).

For each changed target (grouped by target, file and function) the guards of every write of the target
at base and head give the atoms; the atoms give input variables (one per enum-compared operand, one per
boolean atom, plus the target's incoming value when an outcome can keep it). Every assignment of the
variables is a row; the row's base and head outcome come from replaying the function's writes of the
target in source order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.lang.facts import AssignKind, Assignment, FileFacts, Lang
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred

__all__ = [
    "MAX_ROWS",
    "OTHER",
    "Variable",
    "Outcome",
    "build_truth_tables",
    "truth_table",
]

MAX_ROWS = 2**10
OTHER = "<other>"
# Beyond MAX_ROWS only changed rows are kept; this bounds the rows we even look at to find them.
_MAX_SCAN = 2**16

_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
_ENUM_CONST = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Z]\w*)\.([A-Za-z_]\w*)$")
_CONST = re.compile(r"^(True|False|None|-?\d+(\.\d*)?[fFuUlL]*|\"[^\"]*\"|'[^']*')$")
_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_BOOLS = {"True": True, "False": False}

Value = Any  # bool for boolean variables, member name (or OTHER) for enum variables


@dataclass
class Variable:
    """One input column of a table."""

    name: str  # operand, atom text or incoming-value expression
    kind: str  # "enum" | "bool"
    values: list[Value] = field(default_factory=list)
    enum: str | None = None
    is_input: bool = False  # the target's incoming value
    default: Value | None = None
    default_from: str = ""  # `path:line`, "enum first member" or "bool default"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "values": list(self.values),
            "enum": self.enum,
            "input": self.is_input,
            "default": self.default,
            "default_from": self.default_from,
        }


@dataclass(frozen=True)
class Outcome:
    """What the target holds at the end of the function for one row."""

    kind: str  # "input" (keeps its incoming value) | "const" | "expr"
    text: str  # the value expression (canonical); for "input" the incoming-value expression

    def show(self, lang: Lang) -> str:
        if self.kind == "input":
            return "keeps input"
        if lang is Lang.CPP and self.text in _BOOLS:
            return self.text.lower()
        return self.text


def _comparison(atom: Atom) -> tuple[str, str, str] | None:
    parts = atom.text.split(" ")
    if len(parts) == 3 and parts[1] in _COMPARE_OPS:
        return parts[0], parts[1], parts[2]
    return None


def _enum_side(left: str, right: str, index: RepoIndex) -> tuple[str, str, str] | None:
    """(operand, enum name, member) when one side of `left == right` is an enum constant."""
    for const, other in ((left, right), (right, left)):
        m = _ENUM_CONST.match(const)
        if not m or _ENUM_CONST.match(other):
            continue
        enum, member = m.group(1), m.group(2)
        members = index.enum_members(enum)
        if not members or member in members:
            return other, enum, member
    return None


class _Vars:
    """Maps atoms to variables and evaluates predicates under a row."""

    def __init__(self, index: RepoIndex, input_names: set[str]) -> None:
        self.index = index
        self.input_names = input_names
        self.vars: dict[str, Variable] = {}
        # atom text -> (variable name, how to evaluate)
        self.meaning: dict[str, tuple[str, str, Value]] = {}

    def _var(self, name: str, kind: str, enum: str | None = None) -> Variable:
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = Variable(name=name, kind=kind, enum=enum)
        return v

    def add_atom(self, atom: Atom) -> None:
        if atom.text in self.meaning:
            return
        cmp = _comparison(atom)
        if cmp is not None and cmp[1] in ("==", "!="):
            left, op, right = cmp
            for lit, other in ((left, right), (right, left)):
                if lit in _BOOLS and other not in _BOOLS:
                    self._var(other, "bool")
                    want = _BOOLS[lit] if op == "==" else not _BOOLS[lit]
                    self.meaning[atom.text] = (other, "is", want)
                    return
            side = _enum_side(left, right, self.index)
            if side is not None:
                operand, enum, member = side
                v = self._var(operand, "enum", enum)
                if member not in v.values:
                    v.values.append(member)
                self.meaning[atom.text] = (operand, op, member)
                return
        name = atom.text
        self._var(name, "bool")
        self.meaning[atom.text] = (name, "is", True)

    def eval(self, p: Pred | None, row: dict[str, Value]) -> bool:
        if p is None:
            return True
        if isinstance(p, Atom):
            name, how, want = self.meaning[p.text]
            got = row[name]
            if how == "is":
                return bool(got) is bool(want)
            return bool(got == want) if how == "==" else bool(got != want)
        if isinstance(p, Not):
            return not self.eval(p.arg, row)
        if isinstance(p, And):
            return all(self.eval(a, row) for a in p.args)
        if isinstance(p, Or):
            return any(self.eval(a, row) for a in p.args)
        raise TypeError(f"not a predicate: {p!r}")


def _is_const(value: str) -> bool:
    return bool(_CONST.match(value) or _ENUM_CONST.match(value))


def _ordered(assigns: Iterable[Assignment]) -> list[Assignment]:
    seen: dict[tuple[int, str, str], Assignment] = {}
    for a in assigns:
        if a.kind is AssignKind.BINDING:
            continue
        key = (a.line, a.guard.key if a.guard is not None else "", a.value)
        seen.setdefault(key, a)
    return [seen[k] for k in sorted(seen)]


@dataclass(frozen=True)
class _Revision:
    writes: tuple[Assignment, ...]  # after the incoming-value copy, in source order
    start: Outcome  # the target's value before `writes`


def _revision(assigns: list[Assignment], target: str) -> _Revision:
    """Split off a leading unconditional copy: it defines the incoming value rather than an outcome."""
    if assigns and assigns[0].guard is None and assigns[0].kind is not AssignKind.AUGMENTED:
        first = assigns[0]
        kind = "const" if _is_const(first.value) else "input"
        return _Revision(tuple(assigns[1:]), Outcome(kind, first.value))
    return _Revision(tuple(assigns), Outcome("input", target))


def _replay(rev: _Revision, vs: _Vars, row: dict[str, Value]) -> Outcome:
    out = rev.start
    for a in rev.writes:
        if not vs.eval(a.guard, row):
            continue
        if a.kind is AssignKind.AUGMENTED:
            prior = "input" if out.kind == "input" else out.text
            out = Outcome("expr", f"{prior} {a.text}".strip())
        else:
            out = Outcome("const" if _is_const(a.value) else "expr", a.value)
    return out


def _resolve(o: Outcome, input_var: str | None, vs: _Vars, row: dict[str, Value]) -> Value:
    """The comparable value of an outcome: row values for the incoming value and for boolean atoms."""
    if o.kind == "input":
        if o.text == input_var or (input_var is not None and o.text in vs.input_names):
            return row.get(input_var, ("input",))
        return ("expr", o.text)
    if o.kind == "const":
        return _BOOLS.get(o.text, o.text)
    meaning = vs.meaning.get(o.text)
    if meaning is not None and meaning[1] == "is" and meaning[0] in row:
        return bool(row[meaning[0]]) == meaning[2]
    return ("expr", o.text)


def _field_of(expr: str) -> str | None:
    return expr.rsplit(".", 1)[-1] if _PATH.match(expr) else None


def _set_default(v: Variable, index: RepoIndex, lang: Lang) -> None:
    field_name = _field_of(v.name)
    found = index.defaults(field_name) if field_name else []
    found = sorted(found, key=lambda d: (d.lang is not lang, d.path, d.line))
    if v.kind == "enum":
        for d in found:
            m = _ENUM_CONST.match(d.value)
            if m and (v.enum is None or m.group(1) == v.enum):
                v.default = m.group(2) if m.group(2) in v.values else OTHER
                v.default_from = f"{d.path}:{d.line}"
                return
        members = index.enum_members(v.enum or "")
        if members:
            v.default = members[0] if members[0] in v.values else OTHER
            v.default_from = f"enum first member ({v.enum}.{members[0]})"
        return
    for d in found:
        if d.value in _BOOLS:
            v.default = _BOOLS[d.value]
            v.default_from = f"{d.path}:{d.line}"
            return
    v.default = False
    v.default_from = "bool default"


def _finish_domain(v: Variable, index: RepoIndex) -> None:
    if v.kind == "bool":
        v.values = [True, False]
        return
    members = index.enum_members(v.enum or "")
    if members:
        v.values = [m for m in members if m in v.values] + [m for m in v.values if m not in members]
    if not members or len(set(members) - set(v.values)) > 0:
        v.values.append(OTHER)


def _rows(variables: list[Variable], fixed: dict[str, Value]) -> Iterator[dict[str, Value]]:
    free = [v for v in variables if v.name not in fixed]
    for combo in itertools.product(*(v.values for v in free)):
        row = dict(fixed)
        row.update({v.name: c for v, c in zip(free, combo, strict=True)})
        yield row


def truth_table(
    derivations: list[ChangedDerivation],
    head_assignments: list[Assignment],
    index: RepoIndex,
    max_rows: int = MAX_ROWS,
) -> dict[str, Any]:
    """The truth table of one target in one function; `derivations` all share target, path and function."""
    first = min((d.head for d in derivations), key=lambda a: a.line)
    target, lang = first.target, first.lang
    head = _revision(_ordered([*head_assignments, *(d.head for d in derivations)]), target)
    base = _revision(_ordered(b for d in derivations for b in d.base), target)
    input_name = head.start.text if head.start.kind == "input" else None
    input_names = {target} | {r.start.text for r in (head, base) if r.start.kind == "input"}

    vs = _Vars(index, input_names)
    guards = [a.guard for r in (head, base) for a in r.writes if a.guard is not None]
    for g in guards:
        for atom in sorted(g.atoms()):
            vs.add_atom(atom)
    # A guard that reads the target (or its incoming value) is about the input column.
    for text, (name, how, want) in list(vs.meaning.items()):
        if name in input_names and input_name is not None:
            vs.vars.pop(name, None)
            vs.meaning[text] = (input_name, how, want)
    variables = list(vs.vars.values())
    for v in variables:
        _finish_domain(v, index)
        _set_default(v, index, lang)

    def outcomes(row: dict[str, Value]) -> tuple[Outcome, Outcome]:
        return _replay(base, vs, row), _replay(head, vs, row)

    guard_reads_input = any(name == input_name for name, _, _ in vs.meaning.values())
    # A guard that tests the incoming value needs it as a boolean column, whatever the writes assign.
    bool_target = guard_reads_input or any(a.value in _BOOLS for r in (head, base) for a in r.writes)
    keeps = input_name is not None and (
        guard_reads_input
        or any(
            o.kind == "input"
            for row in itertools.islice(_rows(variables, {}), _MAX_SCAN)
            for o in outcomes(row)
        )
    )
    if keeps and input_name is not None:
        iv = Variable(name=input_name, kind="bool" if bool_target else "symbolic", is_input=True)
        if iv.kind == "bool":
            _finish_domain(iv, index)
            _set_default(iv, index, lang)
            variables.append(iv)

    total = 1
    for v in variables:
        total *= len(v.values)
    fixed: dict[str, Value] = {}
    note = ""
    truncated = total > max_rows
    if truncated:
        touched = {
            a.text
            for d in derivations
            for g in (d.head.guard, *(b.guard for b in d.base))
            if g
            for a in g.atoms()
        }
        relevant = {vs.meaning[t][0] for t in touched if t in vs.meaning} | (
            {input_name} if input_name else set()
        )
        fixed = {v.name: v.default for v in variables if v.name not in relevant}
        note = (
            f"{total} rows exceed the cap of {max_rows}: showing only the rows the change touches"
            + (f", with {', '.join(sorted(fixed))} at their defaults" if fixed else "")
            + "."
        )

    default_row = {v.name: v.default for v in variables}
    has_default = all(v.default is not None for v in variables)
    rows: list[dict[str, Any]] = []
    for scanned, row in enumerate(_rows(variables, fixed)):
        if scanned >= _MAX_SCAN:
            note += f" Stopped after {_MAX_SCAN} rows."
            break
        b, h = outcomes(row)
        changed = _resolve(b, input_name, vs, row) != _resolve(h, input_name, vs, row)
        if truncated and not changed:
            continue
        rows.append(
            {
                "inputs": dict(row),
                "base": b.show(lang),
                "head": h.show(lang),
                "changed": changed,
                "default": has_default and row == default_row,
            }
        )
    return {
        "target": target,
        "function": first.function,
        "path": first.path,
        "line": first.guard_line or first.line,
        "atoms": sorted(vs.meaning),
        "inputs": [v.to_json() for v in variables],
        "input": input_name if keeps else None,
        "rows": rows,
        "row_count": total,
        "changed_rows": sum(1 for r in rows if r["changed"]),
        "truncated": truncated,
        "note": note.strip(),
    }


def build_truth_tables(
    derivations: list[ChangedDerivation],
    head_facts: dict[str, FileFacts],
    index: RepoIndex,
    max_rows: int = MAX_ROWS,
) -> list[dict[str, Any]]:
    """One table per (target, path, function) among the changed derivations, in file/line order."""
    groups: dict[tuple[str, str, str], list[ChangedDerivation]] = {}
    for d in derivations:
        groups.setdefault((d.head.path, d.head.function or "", d.head.target), []).append(d)
    tables = []
    for (path, function, target), group in groups.items():
        facts = head_facts.get(path)
        same = [
            a
            for a in (facts.assignments if facts else ())
            if a.target == target and (a.function or "") == function
        ]
        tables.append(truth_table(group, same, index, max_rows))
    return sorted(tables, key=lambda t: (t["path"], t["line"], t["target"]))
