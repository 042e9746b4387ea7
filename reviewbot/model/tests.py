"""Records of executed test runs and mutants (what the findings and the report are made from)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from reviewbot.model.executed import ExecutedTable

__all__ = [
    "TestCase",
    "Mutant",
    "TestRun",
    "TestRunJson",
    "MutantResult",
    "MutantResultJson",
    "NewTest",
    "ExecutionResults",
    "HeadFailure",
    "TestSummary",
    "EXIT_STATUS_TEST",
]

# The pseudo test id used when the command writes no JUnit XML: the command as a whole.
EXIT_STATUS_TEST = "<exit status of the test command>"


@dataclass(frozen=True)
class TestCase:
    __test__ = False  # not a pytest test class

    id: str  # `classname::name`, or `name` when there is no classname
    outcome: str  # passed | failed | error | skipped
    classname: str = ""
    name: str = ""
    file: str = ""  # the `file` attribute when the runner writes one

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "error")


@dataclass(frozen=True)
class Mutant:
    id: str  # m1, m2, ... in file/line order
    path: str
    line: int  # the branch (guard line, or the write for unguarded ones)
    kind: str  # drop-branch | restore-value | restore-guard
    description: str  # one sentence, constructs in backticks
    covers: tuple[tuple[str, int], ...]  # head writes (path, line) this mutant reverts
    text: str  # the whole mutated file
    problem: str = ""  # non-empty: the mutant cannot be built (and is not run)
    anchor: str = ""  # line-independent: the reverted writes (function, guard, statement)
    reverted: str = ""  # what the mutant does, as a phrase: "`x = false;` removed"

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}:{self.kind}"


class TestRunJson(TypedDict):
    label: str
    exit_code: int | None
    timed_out: bool
    seconds: float
    tests: dict[str, str]  # test id -> outcome
    junit_files: list[str]
    notes: list[str]


@dataclass
class TestRun:
    """One execution of the test command on one tree (the head, or a mutant of it)."""

    __test__ = False  # not a pytest test class

    label: str  # `head` or a mutant id
    exit_code: int | None  # None: killed at the timeout
    timed_out: bool
    seconds: float
    cases: dict[str, TestCase] = field(default_factory=dict)  # from JUnit XML; empty when none written
    junit_files: list[str] = field(default_factory=list)
    output: str = ""  # tail of stdout+stderr
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> list[str]:
        return sorted(i for i, c in self.cases.items() if c.passed)

    @property
    def failed(self) -> list[str]:
        return sorted(i for i, c in self.cases.items() if c.failed)

    def to_json(self) -> TestRunJson:
        return {
            "label": self.label,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "seconds": self.seconds,
            "tests": {i: c.outcome for i, c in sorted(self.cases.items())},
            "junit_files": self.junit_files,
            "notes": self.notes,
        }


class MutantResultJson(TypedDict):
    id: str
    path: str
    line: int
    kind: str
    description: str
    covers: list[str]  # `path:line` of the reverted writes
    status: str
    killed_by: list[str]
    seconds: float
    reason: str


@dataclass
class MutantResult:
    mutant: Mutant
    status: str  # killed | survived | timeout | not_run
    killed_by: tuple[str, ...] = ()
    seconds: float = 0.0
    reason: str = ""  # why it was not run / why it has no verdict
    run: TestRun | None = None

    @property
    def has_verdict(self) -> bool:
        return self.status in ("killed", "survived")

    def to_json(self) -> MutantResultJson:
        m = self.mutant
        return {
            "id": m.id,
            "path": m.path,
            "line": m.line,
            "kind": m.kind,
            "description": m.description,
            "covers": [f"{p}:{n}" for p, n in m.covers],
            "status": self.status,
            "killed_by": list(self.killed_by),
            "seconds": self.seconds,
            "reason": self.reason,
        }


class HeadFailure(TypedDict):
    """Why the test command failed on the unmodified head, as a reader needs to see it."""

    command: str
    exit_code: int | None
    timed_out: bool
    output_tail: str  # the last lines of its output, each cut to a readable length


class TestSummary(TypedDict):
    """The test stage in figures (the report's tests section and the KPI's `tests`).

    The first keys are there whether or not the tests ran; the others once the command ran on the
    head. A dict, in this key order, is what the JSON report and the stored rounds show."""

    ran: int
    passed: int
    failed: int
    seconds: float
    mutants: int
    killed: int
    survived: int
    not_run: int
    sandbox: str | None
    isolation: dict[str, str]  # what the sandbox probe saw inside (execution/sandbox_probe.py)
    reason_if_not_run: str
    head_seconds: NotRequired[float]
    command: NotRequired[str]
    per_test: NotRequired[bool]  # the command wrote JUnit XML: counts are of test cases
    exit_code: NotRequired[int | None]
    timed_out: NotRequired[bool]
    time_budget_s: NotRequired[float]
    head_failure: NotRequired[HeadFailure | None]


@dataclass(frozen=True)
class NewTest:
    """A test case from a test file the change adds or modifies."""

    id: str
    path: str
    line: int
    text: str  # the line that defines it


@dataclass(frozen=True)
class ExecutionResults:
    """What the test stage hands to the rules: the head run, every mutant's verdict and the new tests.

    `ran` is False when the tests did not run (turned off, untrusted author, no sandbox, timed out): rules
    that judge executions then have nothing to say, and the checklist shows their items as not evaluated.
    """

    ran: bool
    command: str = ""
    sandbox: str = ""
    head: TestRun | None = None
    mutants: tuple[MutantResult, ...] = ()
    new_tests: tuple[NewTest, ...] = ()
    # The changed derivations' truth tables run against the code (execution/tables.py); () not run.
    tables: tuple[ExecutedTable, ...] = ()

    def mutant_for(self, path: str, line: int) -> MutantResult | None:
        """The mutant that reverts the write at path:line, if one was built."""
        return next((r for r in self.mutants if (path, line) in r.mutant.covers), None)

    def killed_by(self, path: str, line: int) -> list[str] | None:
        """Tests that fail with this write's branch reverted; [] when it survived; None when unknown."""
        r = self.mutant_for(path, line)
        if r is None or not r.has_verdict:
            return None
        return list(r.killed_by) if r.status == "killed" else []
