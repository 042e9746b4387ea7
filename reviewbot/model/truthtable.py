"""The truth table of a changed derivation: typed records (built by analysis.tables.truthtable, shown by report).

A table has one input column (`Variable`) per enum-compared operand, per boolean atom and, when an
outcome can keep it, for the target's incoming value; a `Row` per assignment of the columns, with what
the target holds at base and at head (`Outcome`). The records hold values, not text: how an outcome is
spelled in a cell (`keeps input`, C++ `false`) is report's business (report.truth_tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["OTHER", "Value", "VariableKind", "OutcomeKind", "Variable", "Outcome", "Row", "TruthTable"]

OTHER = "<other>"  # an enum column's value for every member no guard names

Value = bool | str  # a boolean column's value, or an enum column's member name (or OTHER)
VariableKind = Literal["enum", "bool"]
OutcomeKind = Literal["input", "const", "expr"]


@dataclass(frozen=True)
class Variable:
    """One input column of a table."""

    name: str  # operand, atom text or incoming-value expression
    kind: VariableKind
    values: tuple[Value, ...] = ()
    enum: str | None = None
    is_input: bool = False  # the target's incoming value
    default: Value | None = None
    default_from: str = ""  # `path:line`, "enum first member" or "bool default"


@dataclass(frozen=True)
class Outcome:
    """What the target holds at the end of the function for one row."""

    kind: OutcomeKind  # "input" (keeps its incoming value) | "const" | "expr"
    text: str  # the value expression (canonical); for "input" the incoming-value expression


@dataclass(frozen=True)
class Row:
    """One assignment of the input columns and the target's outcome at base and at head."""

    # column name -> value, every column of the table (None: a column a truncated table fixes at its
    # default when it has none)
    inputs: Mapping[str, Value | None]
    base: Outcome
    head: Outcome
    changed: bool  # base and head differ in this row
    default: bool  # every column at its default


@dataclass(frozen=True)
class TruthTable:
    """The truth table of one target in one function."""

    target: str
    function: str | None
    path: str
    line: int  # the guard's line (else the write's) of the first changed write
    lang: str  # the code's language (`cpp`, `python`): how its outcomes are spelled
    atoms: tuple[str, ...]  # the guards' atoms, sorted
    variables: tuple[Variable, ...]
    input: str | None  # the incoming-value expression when an outcome can keep it
    rows: tuple[Row, ...]
    row_count: int  # every assignment of the columns (more than `rows` when truncated)
    truncated: bool  # over the cap: only the rows the change touches
    note: str = ""

    @property
    def changed_rows(self) -> int:
        return sum(1 for r in self.rows if r.changed)
