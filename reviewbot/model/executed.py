"""A truth table run against the real code: the harness that builds the config, each row's executed value.

`Harness` is how a table's rows are turned into real objects (the owner's constructor with the table's
columns as keyword arguments, or an argument parser's defaults with the columns set as options and the
validation function called; the target read as an attribute); `ExecutedTable` holds, per row, what the
table predicted and what the code did on the head and on the base, and whether its generated test is
a verified sketch (`Verified`). The records hold values; the execution stage builds them
(reviewbot.execution.tables), rules and reports read them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from reviewbot.model.executed_json import (
    ExecutedJson,
    ExecutedRowJson,
    ExecutedTableFacts,
    ExecutedTableJson,
    HarnessJson,
)
from reviewbot.model.truthtable import Value

__all__ = [
    "HarnessKind",
    "DefaultsCall",
    "ReadFrom",
    "Harness",
    "Outcome",
    "Executed",
    "ExecutedRow",
    "ExecutedTable",
    "NOT_RUN",
    "unbuildable",
    "verified_for",
]

# cpp: execution/cpp_harness.py; function: execution/harness_function.py
HarnessKind = Literal["dataclass", "pydantic", "class", "argparse", "cpp", "function"]
# argparse: how the defaults are had, from the module's `defaults_from` function: "parser" returns the
# parser (`get_parser().parse_args([])`), "args" parses the command line itself (`parse_args()`, run
# with no arguments)
DefaultsCall = Literal["", "parser", "args"]
Outcome = Literal["value", "raised", "not_run"]
# the function harness: where the target is read after the call: the return value ("return"), the object
# returned ("returned"), a namespace passed as a parameter ("param"), a local of the function's frame as
# it returns ("local")
ReadFrom = Literal["", "return", "returned", "param", "local"]


@dataclass(frozen=True)
class Harness:
    """How the rows of one table become objects: `module.owner(**{keyword: value})`, then `.target`;
    for "argparse", the parser's defaults, each column set on the namespace (`args.keyword = value`),
    `module.function(args)`, then `args.target`."""

    path: str  # the file of the changed derivation (repository path)
    module: str  # its import path, from the file path (`pkg/config.py` -> `pkg.config`)
    import_root: str  # the directory the import path is relative to ("" the repository root, or `src`)
    owner: str  # the class constructed (argparse: the validation function)
    kind: HarnessKind
    function: str  # where the derivation runs on construction (`__post_init__`, `__init__`, `validate_args`)
    target: str  # the attribute read after construction
    keywords: tuple[tuple[str, str], ...]  # table column -> constructor keyword (argparse: option dest)
    enums: tuple[str, ...] = ()  # enum names the rows use, imported from `module`
    defaults_from: str = ""  # argparse: the function of `module` that gives the defaults
    via: str = ""  # the constructor that calls `function` on `self` ("" when `function` is the constructor)
    # required constructor arguments and the literal values a call in the repository gives them
    given: tuple[tuple[str, str], ...] = ()
    given_from: str = ""  # that call, `path:line`
    defaults_call: DefaultsCall = ""
    # the method harness: `function` is called on the built object (no constructor calls it); `sets`
    # are names set as attributes on the object before the call, `args` names passed to it
    call: bool = False
    sets: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    # the function harness (kind "function"): `owner.function(...)` for a static or class method
    # (`static` names which), `function(...)` for a module function (owner == function); `args` are the
    # parameters the columns give, `namespaces` the parameters passed as `types.SimpleNamespace` with the
    # defaults of the attributes the function reads (param -> ((attribute, value source), ...)); `fixed`
    # columns are attributes of a local the function builds, run only at their known default; the target
    # is read as `reads` says, on the object `read_from` names (`config.special_tokens`, `args`)
    static: str = ""
    namespaces: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    fixed: tuple[str, ...] = ()
    reads: ReadFrom = ""
    read_from: str = ""

    @property
    def called(self) -> bool:
        """The harness calls the changed function itself (a method on the built object, or a function
        with the row's values): a raise on the defaults is no start-up path the project is known to take."""
        return self.call or self.kind == "function"

    @property
    def callable(self) -> str:
        """The function harness's callee as Python (`Owner.method`, `function`)."""
        return f"{self.owner}.{self.function}" if self.static else self.function

    @property
    def construction(self) -> str:
        """The all-defaults build as Python (`Config()`, `validate_args(get_parser().parse_args([]))`,
        `Config().update()`)."""
        if self.kind == "function":
            passed = [f"{p}=SimpleNamespace(...)" for p, _ in self.namespaces]
            return f"{self.callable}({', '.join(passed)})"
        if self.kind == "cpp":  # `given` are the method's arguments
            return f"{self.owner}().{self.function}({', '.join(v for _, v in self.given)})"
        if self.kind != "argparse":
            built = f"{self.owner}({', '.join(f'{k}={v}' for k, v in self.given)})"
            return f"{built}.{self.function}()" if self.call else built
        parsed = "().parse_args([])" if self.defaults_call == "parser" else "()"
        return f"{self.function}({self.defaults_from}{parsed})"

    def to_json(self) -> HarnessJson:
        out: HarnessJson = {
            "path": self.path,
            "module": self.module,
            "import_root": self.import_root,
            "owner": self.owner,
            "kind": self.kind,
            "function": self.function,
            "target": self.target,
            "keywords": dict(self.keywords),
            "enums": list(self.enums),
            "defaults_from": self.defaults_from,
            "defaults_call": self.defaults_call,
            "via": self.via,
            "given": dict(self.given),
            "given_from": self.given_from,
            "call": self.call,
            "sets": list(self.sets),
            "args": list(self.args),
        }
        if self.kind == "function":
            out["static"] = self.static
            out["namespaces"] = {p: dict(attrs) for p, attrs in self.namespaces}
            out["fixed"] = list(self.fixed)
            out["reads"] = self.reads
            out["read_from"] = self.read_from
        return out


@dataclass(frozen=True)
class Executed:
    """One case run on one revision: the target's value (as Python source), or the exception's last line."""

    outcome: Outcome
    value: str  # `False`, `Mode.FAST`, `'x'`; for "raised" `ValueError: ...`; for "not_run" why
    at: str = ""  # "raised": where, `path:line` of the innermost frame (relative to the checkout)

    def line_in(self, path: str) -> int | None:
        """The line it raised at when that is in `path`."""
        where, _, line = self.at.rpartition(":")
        return int(line) if where == path and line.isdigit() else None

    def to_json(self) -> ExecutedJson:
        out: ExecutedJson = {"outcome": self.outcome, "value": self.value}
        if self.at:
            out["at"] = self.at
        return out


NOT_RUN = Executed("not_run", "not run")

# `TypeError: __init__() missing 1 required positional argument: 'x'`, `... required keyword-only
# argument`, `... takes 1 positional argument but 2 were given`: the call did not fit the signature
_SIGNATURE = ("required positional argument", "required keyword-only argument", "positional argument but")


def unbuildable(raised: str) -> bool:
    """An exception line that says the build itself did not fit the constructor's signature."""
    return raised.startswith("TypeError") and any(s in raised for s in _SIGNATURE)


@dataclass(frozen=True)
class ExecutedRow:
    """One row of the table: its inputs, the predicted outcome and the executed one on each revision."""

    index: int  # the row's position in TruthTable.rows
    inputs: Mapping[str, Value | None]
    changed: bool
    default: bool
    predicted_head: str | None  # a Python literal; None: the table's outcome is no literal (an expression)
    predicted_base: str | None
    head: Executed
    base: Executed

    @staticmethod
    def _agrees(predicted: str | None, executed: Executed) -> bool | None:
        if predicted is None or executed.outcome == "not_run":
            return None
        return executed.outcome == "value" and executed.value == predicted

    @property
    def agrees_head(self) -> bool | None:
        """Whether the head ran as the table predicted (None: no prediction or not run)."""
        return self._agrees(self.predicted_head, self.head)

    @property
    def agrees_base(self) -> bool | None:
        return self._agrees(self.predicted_base, self.base)

    @property
    def wrong(self) -> bool:
        """The table predicted this row wrongly on the head or on the base."""
        return self.agrees_head is False or self.agrees_base is False

    def to_json(self) -> ExecutedRowJson:
        return {
            "row": self.index,
            "inputs": dict(self.inputs),
            "changed": self.changed,
            "default": self.default,
            "predicted": {"base": self.predicted_base, "head": self.predicted_head},
            "executed": {"base": self.base.to_json(), "head": self.head.to_json()},
            "agrees": {"base": self.agrees_base, "head": self.agrees_head},
            "table_wrong": self.wrong,
        }


@dataclass(frozen=True)
class ExecutedTable:
    """A truth table run on the head and the base through its harness (or why it was not)."""

    target: str
    function: str | None
    path: str
    line: int
    harness: Harness | None  # None: no construction path was found (`reason` says why); no claim is made
    reason: str = ""  # why the table was not executed ("" when it was)
    rows: tuple[ExecutedRow, ...] = ()
    defaults_head: Executed = NOT_RUN  # `Owner()` with every default, the target read
    defaults_base: Executed = NOT_RUN
    test_code: str = ""  # the generated pytest file
    seconds: float = 0.0

    @property
    def ran(self) -> bool:
        return self.harness is not None and not self.reason

    @property
    def wrong_rows(self) -> tuple[ExecutedRow, ...]:
        return tuple(r for r in self.rows if r.wrong)

    @property
    def defaults_raise(self) -> bool:
        """The all-defaults construction raised on the head: the configuration nobody sets cannot be
        built. Not so when the build lacked arguments (a `TypeError` for a missing argument says the
        harness did not know how to build it, not that the code rejects its defaults), nor for the
        method and the function harnesses (a method or a function called on the defaults is no start-up
        path the project is known to take: its raise is shown as the row's executed value, never a
        defaults finding)."""
        h = self.harness
        return (
            self.defaults_head.outcome == "raised"
            and h is not None
            and not h.called
            and not unbuildable(self.defaults_head.value)
        )

    @property
    def fails_on_base(self) -> tuple[int, ...]:
        """Rows whose assertion fails on the base: the base gave (or raised) other than the head's value."""
        return tuple(
            r.index
            for r in self.rows
            if r.predicted_head is not None
            and r.base.outcome != "not_run"
            and not (r.base.outcome == "value" and r.base.value == r.predicted_head)
        )

    @property
    def verified(self) -> bool:
        """Its generated test is a proven sketch: run in the sandbox, it passes on the head (every row
        built, every asserted row as predicted, the defaults built) and fails on the base."""
        asserted = [r for r in self.rows if r.predicted_head is not None]
        return (
            self.ran
            and bool(asserted)
            and all(r.head.outcome == "value" for r in self.rows)
            and all(r.agrees_head is True for r in asserted)
            and self.defaults_head.outcome == "value"
            and bool(self.fails_on_base)
        )

    def facts_json(self) -> ExecutedTableFacts:
        """What `to_json` gives but the generated test file (what SARIF carries)."""
        return {
            "target": self.target,
            "function": self.function,
            "path": self.path,
            "line": self.line,
            "harness": self.harness.to_json() if self.harness is not None else None,
            "executed": self.ran,
            "reason": self.reason,
            "defaults": {"base": self.defaults_base.to_json(), "head": self.defaults_head.to_json()},
            "rows": [r.to_json() for r in self.rows],
            "agreed": sum(1 for r in self.rows if r.agrees_head is True and r.agrees_base is not False),
            "wrong_rows": [r.index for r in self.wrong_rows],
            "verified": self.verified,
            "fails_on_base": list(self.fails_on_base),
            "seconds": self.seconds,
        }

    def to_json(self) -> ExecutedTableJson:
        return {**self.facts_json(), "test": self.test_code}


def verified_for(
    tables: Sequence[ExecutedTable], path: str, function: str | None, target: str
) -> ExecutedTable | None:
    """The executed table of the derivation of `target` in `function` of `path` when its generated test
    is verified (passes on the head, fails on the base); None otherwise."""
    return next(
        (t for t in tables if (t.path, t.function, t.target) == (path, function, target) and t.verified),
        None,
    )
