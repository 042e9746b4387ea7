"""The JSON of the executed truth tables (model.executed's `to_json`), as the JSON report and SARIF show it."""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:  # only annotations: model.executed imports this module
    from reviewbot.model.executed import DefaultsCall, HarnessKind, Outcome, ReadFrom
    from reviewbot.model.truthtable import Value

__all__ = [
    "HarnessJson",
    "ExecutedJson",
    "SidesJson",
    "PredictedJson",
    "AgreesJson",
    "ExecutedRowJson",
    "ExecutedTableFacts",
    "ExecutedTableJson",
]


class HarnessJson(TypedDict):
    path: str
    module: str
    import_root: str
    owner: str
    kind: HarnessKind
    function: str
    target: str
    keywords: dict[str, str]  # table column -> keyword
    enums: list[str]
    defaults_from: str
    defaults_call: DefaultsCall
    via: str
    given: dict[str, str]
    given_from: str
    call: bool
    sets: list[str]
    args: list[str]
    # the function harness only (kind "function")
    static: NotRequired[str]
    namespaces: NotRequired[dict[str, dict[str, str]]]  # parameter -> attribute -> value source
    fixed: NotRequired[list[str]]
    reads: NotRequired[ReadFrom]
    read_from: NotRequired[str]


class ExecutedJson(TypedDict):
    outcome: Outcome
    value: str
    at: NotRequired[str]  # where it raised, when it did


class SidesJson(TypedDict):
    base: ExecutedJson
    head: ExecutedJson


class PredictedJson(TypedDict):
    base: str | None  # a Python literal; None: no literal outcome
    head: str | None


class AgreesJson(TypedDict):
    base: bool | None  # None: no prediction, or not run
    head: bool | None


class ExecutedRowJson(TypedDict):
    row: int
    inputs: dict[str, Value | None]
    changed: bool
    default: bool
    predicted: PredictedJson
    executed: SidesJson
    agrees: AgreesJson
    table_wrong: bool


class ExecutedTableFacts(TypedDict):
    """An executed table without its generated test file (what SARIF carries)."""

    target: str
    function: str | None
    path: str
    line: int
    harness: HarnessJson | None
    executed: bool
    reason: str
    defaults: SidesJson
    rows: list[ExecutedRowJson]
    agreed: int
    wrong_rows: list[int]
    verified: bool
    fails_on_base: list[int]
    seconds: float


class ExecutedTableJson(ExecutedTableFacts):
    test: str  # the generated pytest file
