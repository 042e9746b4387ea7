"""Truth tables as the report shows them: an outcome's cell text, the executed rows beside the predicted
ones, and the JSON report's table documents.

The records (model.truthtable) hold outcomes as values; here they become text: `keeps input` for an
outcome that keeps the incoming value, C++'s `true`/`false` for the canonical `True`/`False` of C++
code, the value expression otherwise. A derivation whose table ran in the sandbox (model.executed) is
shown once, as its executed table: each row's predicted outcome and what the code gave on the base and
the head, the rows the prediction got wrong and the rows that could not be built marked
(`ShownTable`, `executed_rows`). The JSON shape is the one the report and the stored rounds have
always had (`inputs` are the columns, `input` the incoming-value column's name); the JSON keeps the
executed tables apart (`executed_tables`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from reviewbot.lang.facts import Lang
from reviewbot.model.executed import Executed, ExecutedRow, ExecutedTable
from reviewbot.model.truthtable import Outcome, Row, TruthTable, Value, Variable

__all__ = [
    "KEEPS_INPUT",
    "ExecutedCells",
    "RowJson",
    "ShownTable",
    "TruthTableJson",
    "Unbuilt",
    "VariableJson",
    "Wrong",
    "executed_counts",
    "executed_rows",
    "ran_on_base",
    "shown",
    "shown_tables",
    "table_json",
    "tables_counts",
]

KEEPS_INPUT = "keeps input"
_BOOLS = ("True", "False")


def shown(outcome: Outcome, lang: str) -> str:
    """The cell text of an outcome of code in `lang` (also the `outcome(lang)` template filter)."""
    if outcome.kind == "input":
        return KEEPS_INPUT
    if lang == Lang.CPP and outcome.text in _BOOLS:
        return outcome.text.lower()
    return outcome.text


class VariableJson(TypedDict):
    name: str
    kind: str
    values: list[Value]
    enum: str | None
    input: bool
    default: Value | None
    default_from: str


class RowJson(TypedDict):
    inputs: dict[str, Value | None]
    base: str
    head: str
    changed: bool
    default: bool


class TruthTableJson(TypedDict):
    target: str
    function: str | None
    path: str
    line: int
    atoms: list[str]
    inputs: list[VariableJson]  # the columns
    input: str | None  # the incoming-value column's name
    rows: list[RowJson]
    row_count: int
    changed_rows: int
    truncated: bool
    note: str


def _variable_json(v: Variable) -> VariableJson:
    return {
        "name": v.name,
        "kind": v.kind,
        "values": list(v.values),
        "enum": v.enum,
        "input": v.is_input,
        "default": v.default,
        "default_from": v.default_from,
    }


def _row_json(row: Row, lang: str) -> RowJson:
    return {
        "inputs": dict(row.inputs),
        "base": shown(row.base, lang),
        "head": shown(row.head, lang),
        "changed": row.changed,
        "default": row.default,
    }


def table_json(table: TruthTable) -> TruthTableJson:
    """The table's document in the JSON report (and so in the rounds store's `report_json`)."""
    return {
        "target": table.target,
        "function": table.function,
        "path": table.path,
        "line": table.line,
        "atoms": list(table.atoms),
        "inputs": [_variable_json(v) for v in table.variables],
        "input": table.input,
        "rows": [_row_json(r, table.lang) for r in table.rows],
        "row_count": table.row_count,
        "changed_rows": table.changed_rows,
        "truncated": table.truncated,
        "note": table.note,
    }


def executed_counts(table: ExecutedTable) -> dict[str, int]:
    """What the tests section says of a table run in the sandbox: its rows, the rows whose executed values
    were the predicted ones (on the head, and on the base where it ran) and the rows the table got wrong
    (the `executed_counts` template filter; the same counts as the JSON's `agreed` and `wrong_rows`)."""
    agreed = sum(1 for r in table.rows if r.agrees_head is True and r.agrees_base is not False)
    return {"rows": len(table.rows), "agreed": agreed, "wrong": len(table.wrong_rows)}


def tables_counts(tables: Sequence[ExecutedTable]) -> dict[str, int]:
    """What the tests section says of the tables run in the sandbox, together (each table shows its own
    rows): how many ran, their rows, the rows as predicted, the rows the tables got wrong, the verified
    generated tests (the `tables_counts` template filter)."""
    ran = [t for t in tables if t.ran]
    each = [executed_counts(t) for t in ran]
    return {
        "tables": len(ran),
        "rows": sum(n["rows"] for n in each),
        "agreed": sum(n["agreed"] for n in each),
        "wrong": sum(n["wrong"] for n in each),
        "verified": sum(1 for t in ran if t.verified),
    }


@dataclass(frozen=True)
class ShownTable:
    """One derivation's table in the markdown: the predicted table, and the same table run in the sandbox
    when it ran (then the report shows the executed table in its place, never both)."""

    table: TruthTable
    executed: ExecutedTable | None = None

    @property
    def path(self) -> str:
        return self.table.path

    @property
    def line(self) -> int:
        return self.table.line


def shown_tables(tables: Sequence[TruthTable], executed: Sequence[ExecutedTable]) -> list[ShownTable]:
    """Each table with its executed table when that one ran (same file, function, target and line)."""
    ran = {(e.path, e.function, e.target, e.line): e for e in executed if e.ran}
    return [ShownTable(t, ran.get((t.path, t.function, t.target, t.line))) for t in tables]


_VALUE = 80  # characters of an executed value or exception line in a cell (the JSON has it whole)
_WHY = 160  # characters of why a row was not built
# how the execution stage starts its reason for a build that did not fit the signature (the mark says it)
_UNBUILT = "could not be built: "


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value(text: str, lang: str) -> str:
    """A Python literal as the table spells it in `lang` (C++'s `true` for `True`)."""
    return text.lower() if lang == Lang.CPP and text in _BOOLS else _clip(text, _VALUE)


def _ran(e: Executed, lang: str) -> str:
    if e.outcome == "value":
        return _value(e.value, lang)
    if e.outcome == "raised":
        return _clip(f"raises {e.value}", _VALUE)
    return ""


@dataclass(frozen=True)
class Wrong:
    """A side on which the row ran otherwise than the table predicted."""

    side: str  # "base" | "head"
    predicted: str
    ran: str


@dataclass(frozen=True)
class Unbuilt:
    """A side on which the row could not be built or run, and why."""

    side: str
    why: str


@dataclass(frozen=True)
class ExecutedCells:
    """One row of an executed table as shown: the predicted row and what ran on each side ("": nothing ran)."""

    row: Row
    run: bool  # among the rows run (a large table runs its default and changed rows only)
    base: str
    head: str
    wrong: tuple[Wrong, ...] = ()
    unbuilt: tuple[Unbuilt, ...] = ()


def _key(inputs: Mapping[str, Value | None]) -> tuple[tuple[str, Value | None], ...]:
    return tuple(sorted(inputs.items()))


def ran_on_base(executed: ExecutedTable) -> bool:
    """Some row ran on the base (else its column says nothing: the base had no test command)."""
    return any(r.base.outcome != "not_run" for r in executed.rows)


def _cells(row: Row, e: ExecutedRow, lang: str, base_ran: bool) -> ExecutedCells:
    sides = (("base", e.predicted_base, e.base), ("head", e.predicted_head, e.head))
    wrong = tuple(
        Wrong(side, _value(predicted, lang), _ran(got, lang) or got.value)
        for side, predicted, got in sides
        if predicted is not None and (e.agrees_base if side == "base" else e.agrees_head) is False
    )
    unbuilt = tuple(
        Unbuilt(side, _clip(got.value.removeprefix(_UNBUILT), _WHY))
        for side, _, got in sides
        if got.outcome == "not_run" and (side == "head" or base_ran)
    )
    return ExecutedCells(row, True, _ran(e.base, lang), _ran(e.head, lang), wrong, unbuilt)


def executed_rows(shown_table: ShownTable) -> list[ExecutedCells]:
    """The rows of the table (as the report shows them: a shortened table keeps its first and changed
    rows) with what each ran as on the base and the head. Rows are matched by their inputs, not their
    position: the stored report shortens long tables (report.shrink)."""
    table, executed = shown_table.table, shown_table.executed
    ran = {_key(r.inputs): r for r in executed.rows} if executed is not None else {}
    base_ran = executed is not None and ran_on_base(executed)
    out: list[ExecutedCells] = []
    for row in table.rows:
        e = ran.get(_key(row.inputs))
        out.append(ExecutedCells(row, False, "", "") if e is None else _cells(row, e, table.lang, base_ran))
    return out
