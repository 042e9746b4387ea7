"""Truth tables as the report shows them: an outcome's cell text and the JSON report's table documents.

The records (model.truthtable) hold outcomes as values; here they become text: `keeps input` for an
outcome that keeps the incoming value, C++'s `true`/`false` for the canonical `True`/`False` of C++
code, the value expression otherwise. The JSON shape is the one the report and the stored rounds have
always had (`inputs` are the columns, `input` the incoming-value column's name).
"""

from __future__ import annotations

from typing import TypedDict

from reviewbot.lang.facts import Lang
from reviewbot.model.executed import ExecutedTable
from reviewbot.model.truthtable import Outcome, Row, TruthTable, Value, Variable

__all__ = [
    "KEEPS_INPUT",
    "RowJson",
    "TruthTableJson",
    "VariableJson",
    "executed_counts",
    "shown",
    "table_json",
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
