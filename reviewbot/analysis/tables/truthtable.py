"""Truth tables of changed derivations (pure: facts in, model.truthtable records out).

For each changed target (grouped by target, file and function) the guards of every write of the target
at base and head give the atoms; the atoms give input variables (one per enum-compared operand, one per
boolean atom, plus the target's incoming value when an outcome can keep it). Every assignment of the
variables is a row; the row's base and head outcome come from replaying the function's writes of the
target in source order. The records are values: report.truth_tables spells them out.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.tables.columns import BOOLS, ENUM_CONST, finished
from reviewbot.lang.facts import AssignKind, Assignment, FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred
from reviewbot.model.truthtable import OTHER, Outcome, Row, TruthTable, Value, Variable, VariableKind

__all__ = [
    "MAX_ROWS",
    "OTHER",
    "Variable",
    "Outcome",
    "build_truth_tables",
    "truth_table",
    "written",
]

MAX_ROWS = 2**10
# Beyond MAX_ROWS only changed rows are kept; this bounds the rows we even look at to find them.
_MAX_SCAN = 2**16

_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
_CONST = re.compile(r"^(True|False|None|-?\d+(\.\d*)?[fFuUlL]*|\"[^\"]*\"|'[^']*')$")
# One row's column values (None: a column fixed at a default it does not have, in a truncated table).
_Inputs = dict[str, Value | None]


def _comparison(atom: Atom) -> tuple[str, str, str] | None:
    parts = atom.text.split(" ")
    if len(parts) == 3 and parts[1] in _COMPARE_OPS:
        return parts[0], parts[1], parts[2]
    return None


def _enum_side(left: str, right: str, index: RepoIndex) -> tuple[str, str, str] | None:
    """(operand, enum name, member) when one side of `left == right` is an enum constant."""
    for const, other in ((left, right), (right, left)):
        m = ENUM_CONST.match(const)
        if not m or ENUM_CONST.match(other):
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

    def _var(self, name: str, kind: VariableKind, enum: str | None = None) -> Variable:
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
                if lit in BOOLS and other not in BOOLS:
                    self._var(other, "bool")
                    want = BOOLS[lit] if op == "==" else not BOOLS[lit]
                    self.meaning[atom.text] = (other, "is", want)
                    return
            side = _enum_side(left, right, self.index)
            if side is not None:
                operand, enum, member = side
                v = self._var(operand, "enum", enum)
                if member not in v.values:
                    self.vars[operand] = replace(v, values=(*v.values, member))
                self.meaning[atom.text] = (operand, op, member)
                return
        name = atom.text
        self._var(name, "bool")
        self.meaning[atom.text] = (name, "is", True)

    def compiled(self, p: Pred | None) -> _Test:
        """`p` as a function of a row, with the atoms' meanings as they are now. A table evaluates
        every guard on up to 2^16 rows: walking the predicate tree for each cost minutes."""
        if p is None:
            return _always
        if isinstance(p, Atom):
            name, how, want = self.meaning[p.text]
            if how == "is":
                truth = bool(want)
                return lambda row: bool(row[name]) is truth
            if how == "==":
                return lambda row: bool(row[name] == want)
            return lambda row: bool(row[name] != want)
        if isinstance(p, Not):
            inner = self.compiled(p.arg)
            return lambda row: not inner(row)
        if isinstance(p, And | Or):
            parts = [self.compiled(a) for a in p.args]
            return functools.reduce(_both if isinstance(p, And) else _either, parts) if parts else _empty(p)
        raise TypeError(f"not a predicate: {p!r}")


def _both(left: _Test, right: _Test) -> _Test:
    return lambda row: left(row) and right(row)  # short-circuits as all() did


def _either(left: _Test, right: _Test) -> _Test:
    return lambda row: left(row) or right(row)


def _empty(p: Pred) -> _Test:
    truth = isinstance(p, And)  # all(()) is True, any(()) is False
    return lambda row: truth


_Test = Callable[[_Inputs], bool]


def _always(row: _Inputs) -> bool:
    return True


def _is_const(value: str) -> bool:
    return bool(_CONST.match(value) or ENUM_CONST.match(value))


@functools.lru_cache(maxsize=4096)
def written(value: str) -> Outcome:
    """The outcome of a plain write of `value`: a constant or an expression."""
    return Outcome("const" if _is_const(value) else "expr", value)


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
        start = Outcome("const" if _is_const(first.value) else "input", first.value)
        return _Revision(tuple(assigns[1:]), start)
    return _Revision(tuple(assigns), Outcome("input", target))


def _replay(rev: _Revision, tests: tuple[_Test, ...], row: _Inputs) -> Outcome:
    """The outcome of one row; `tests[i]` is `rev.writes[i]`'s guard (`_Vars.compiled`)."""
    out = rev.start
    for a, holds in zip(rev.writes, tests, strict=True):
        if not holds(row):
            continue
        if a.kind is AssignKind.AUGMENTED:
            prior = "input" if out.kind == "input" else out.text
            out = Outcome("expr", f"{prior} {a.text}".strip())
        else:
            out = written(a.value)
    return out


def _resolve(o: Outcome, input_var: str | None, vs: _Vars, row: _Inputs) -> object:
    """The comparable value of an outcome: row values for the incoming value and for boolean atoms."""
    if o.kind == "input":
        if o.text == input_var or (input_var is not None and o.text in vs.input_names):
            return row.get(input_var, ("input",))
        return ("expr", o.text)
    if o.kind == "const":
        return BOOLS.get(o.text, o.text)
    meaning = vs.meaning.get(o.text)
    if meaning is not None and meaning[1] == "is" and meaning[0] in row:
        return bool(row[meaning[0]]) == meaning[2]
    return ("expr", o.text)


def _rows(variables: list[Variable], fixed: _Inputs) -> Iterator[_Inputs]:
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
) -> TruthTable:
    """The truth table of one target in one function; `derivations` all share target, path and function."""
    first = min((d.head for d in derivations), key=lambda a: a.line)
    target, lang = first.target, first.lang
    head = _revision(_ordered([*head_assignments, *(d.head for d in derivations)]), target)
    base = _revision(_ordered(b for d in derivations for b in d.base), target)
    input_name = head.start.text if head.start.kind == "input" else None
    input_names = {target} | {r.start.text for r in (head, base) if r.start.kind == "input"}
    vs = _guard_vars(index, (head, base), input_names, input_name)
    variables = [finished(v, index, lang) for v in vs.vars.values()]

    base_tests = tuple(vs.compiled(a.guard) for a in base.writes)
    head_tests = tuple(vs.compiled(a.guard) for a in head.writes)

    def outcomes(row: _Inputs) -> tuple[Outcome, Outcome]:
        return _replay(base, base_tests, row), _replay(head, head_tests, row)

    guard_reads_input = any(name == input_name for name, _, _ in vs.meaning.values())
    # A guard that tests the incoming value needs it as a boolean column, whatever the writes assign.
    bool_target = guard_reads_input or any(a.value in BOOLS for r in (head, base) for a in r.writes)
    keeps = input_name is not None and (guard_reads_input or _some_keeps(variables, outcomes))
    if keeps and input_name is not None and bool_target:
        variables.append(finished(Variable(name=input_name, kind="bool", is_input=True), index, lang))

    total = 1
    for v in variables:
        total *= len(v.values)
    truncated = total > max_rows
    fixed, note = _capped(derivations, vs, variables, input_name, total, max_rows) if truncated else ({}, "")
    rows, note = _table_rows(variables, fixed, outcomes, vs, input_name, truncated, note)
    return TruthTable(
        target=target,
        function=first.function,
        path=first.path,
        line=first.guard_line or first.line,
        lang=lang,
        atoms=tuple(sorted(vs.meaning)),
        variables=tuple(variables),
        input=input_name if keeps else None,
        rows=tuple(rows),
        row_count=total,
        truncated=truncated,
        note=note.strip(),
    )


def _some_keeps(variables: list[Variable], outcomes: Callable[[_Inputs], tuple[Outcome, Outcome]]) -> bool:
    """Some row (of the first `_MAX_SCAN`) keeps the incoming value at base or head."""
    return any(
        o.kind == "input" for row in itertools.islice(_rows(variables, {}), _MAX_SCAN) for o in outcomes(row)
    )


def _guard_vars(
    index: RepoIndex, revisions: tuple[_Revision, _Revision], input_names: set[str], input_name: str | None
) -> _Vars:
    """The variables of the two revisions' guards, in atom order."""
    vs = _Vars(index, input_names)
    guards = [a.guard for r in revisions for a in r.writes if a.guard is not None]
    for g in guards:
        for atom in sorted(g.atoms()):
            vs.add_atom(atom)
    # A guard that reads the target (or its incoming value) is about the input column.
    for text, (name, how, want) in list(vs.meaning.items()):
        if name in input_names and input_name is not None:
            vs.vars.pop(name, None)
            vs.meaning[text] = (input_name, how, want)
    return vs


def _capped(
    derivations: list[ChangedDerivation],
    vs: _Vars,
    variables: list[Variable],
    input_name: str | None,
    total: int,
    max_rows: int,
) -> tuple[_Inputs, str]:
    """Over the cap: the variables no changed guard reads are fixed at their defaults; and the note."""
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
    fixed: _Inputs = {v.name: v.default for v in variables if v.name not in relevant}
    note = (
        f"{total} rows exceed the cap of {max_rows}: showing only the rows the change touches"
        + (f", with {', '.join(sorted(fixed))} at their defaults" if fixed else "")
        + "."
    )
    return fixed, note


def _table_rows(
    variables: list[Variable],
    fixed: _Inputs,
    outcomes: Callable[[_Inputs], tuple[Outcome, Outcome]],
    vs: _Vars,
    input_name: str | None,
    truncated: bool,
    note: str,
) -> tuple[list[Row], str]:
    """The rows (a truncated table keeps the changed ones), at most `_MAX_SCAN` scanned; and the note."""
    default_row = {v.name: v.default for v in variables}
    has_default = all(v.default is not None for v in variables)
    rows: list[Row] = []
    for scanned, row in enumerate(_rows(variables, fixed)):
        if scanned >= _MAX_SCAN:
            note += f" Stopped after {_MAX_SCAN} rows."
            break
        b, h = outcomes(row)
        changed = _resolve(b, input_name, vs, row) != _resolve(h, input_name, vs, row)
        if truncated and not changed:
            continue
        rows.append(Row(dict(row), b, h, changed, has_default and row == default_row))
    return rows, note


def build_truth_tables(
    derivations: list[ChangedDerivation],
    head_facts: dict[str, FileFacts],
    index: RepoIndex,
    max_rows: int = MAX_ROWS,
) -> list[TruthTable]:
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
    return sorted(tables, key=lambda t: (t.path, t.line, t.target))
