"""Records of executed test runs and mutants (what the findings and the report are made from)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewbot.truthtable.junit import TestCase
from reviewbot.truthtable.mutants import Mutant

__all__ = ["TestRun", "MutantResult", "NewTest", "EXIT_STATUS_TEST"]

# The pseudo test id used when the command writes no JUnit XML: the command as a whole.
EXIT_STATUS_TEST = "<exit status of the test command>"


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

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "seconds": self.seconds,
            "tests": {i: c.outcome for i, c in sorted(self.cases.items())},
            "junit_files": self.junit_files,
            "notes": self.notes,
        }


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

    def to_json(self) -> dict[str, Any]:
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


@dataclass(frozen=True)
class NewTest:
    """A test case from a test file the change adds or modifies."""

    id: str
    path: str
    line: int
    text: str  # the line that defines it
