"""The outcome of one review: what the report, the rounds store and the publisher consume."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TypedDict

from reviewbot.model.budget import DEFAULT_BUDGET, RoundBudget
from reviewbot.model.change import Note
from reviewbot.model.executed import ExecutedTable
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.kpi import Kpi, Recheck, no_recheck
from reviewbot.model.messages import Message
from reviewbot.model.round import RoundRow
from reviewbot.model.tests import TestSummary
from reviewbot.model.truthtable import TruthTable

__all__ = [
    "Status",
    "ChecklistItemResult",
    "ChecklistResult",
    "RoundInfo",
    "RuleReach",
    "RuleReachJson",
    "Review",
]


class Status(str, Enum):
    BLOCKING = "BLOCKING"
    LGTM = "LGTM"
    INCOMPLETE = "INCOMPLETE"
    NO_CHANGE = "NO_CHANGE"  # base and head do not differ: nothing was reviewed


@dataclass(frozen=True)
class ChecklistItemResult:
    id: str  # e.g. `6.1-tests-focused`
    section: str  # e.g. `General Principles Checklist`
    label: str  # e.g. `[6.1] Tests — new logic has a focused unit test`
    failed: bool
    findings: tuple[str, ...] = ()  # fingerprints of the findings that failed it
    evaluated: bool = True  # False: every rule of the item needs a stage that did not run (tests)
    reason: str = ""  # why not evaluated, when it is not the tests not running (rendered text)


@dataclass
class ChecklistResult:
    items: list[ChecklistItemResult] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def failed(self) -> int:
        return sum(1 for i in self.items if i.failed)


@dataclass
class RoundInfo:
    """Where this review sits in the history of a PR: its index, how it was diffed, what it closed.

    Filled by review.rounds.apply_round (the defaults: a one-off run with no PR). Read by the report
    (its history table and fixed section), the marker (report.marker.State.from_review), the stored
    record (store.records.RoundRecord.from_review) and the next round (`PreviousRound.of`)."""

    repository: str = ""
    pr: int | None = None
    round_index: int = 1
    full_review: bool = True
    force_pushed: bool = False
    previous_head: str | None = None
    fixed: list[Finding] = field(default_factory=list)  # earlier findings fixed in this round
    # earlier findings whose file is gone with no recognisable successor (see review.rounds)
    cannot_substantiate: list[Finding] = field(default_factory=list)
    recheck: Recheck = field(default_factory=no_recheck)
    history: list[RoundRow] = field(default_factory=list)  # every round up to this one, oldest first


class RuleReachJson(TypedDict):
    target: str
    path: str
    line: int
    sentence: str
    fires_at_default: bool | None
    models: list[str]


@dataclass(frozen=True)
class RuleReach:
    """How far a changed guarded rule reaches (analysis.reach), as the JSON report lists it."""

    target: str  # the derived field, e.g. `config.need_rope_kv_cache`
    path: str
    line: int
    sentence: str  # the configurations it fires for and the model configs that reach it, in words
    fires_at_default: bool | None  # True: every guard input at its default makes it fire
    models: tuple[str, ...] = ()  # `Bert (rtp_llm/models/bert.py:6; task_type DENSE_EMBEDDING)`

    def to_json(self) -> RuleReachJson:
        return {
            "target": self.target,
            "path": self.path,
            "line": self.line,
            "sentence": self.sentence,
            "fires_at_default": self.fires_at_default,
            "models": list(self.models),
        }


@dataclass
class Review:
    status: Status
    base_sha: str
    head_sha: str
    merge_base: str
    reviewed_at: str  # ISO 8601, UTC
    findings: list[Finding]
    checklist: ChecklistResult
    strengths: list[Message | str]  # catalogue messages (plain text from older stored rounds)
    notes: list[Note]
    kpi: Kpi
    truth_tables: list[TruthTable] = field(default_factory=list)
    executed_tables: list[ExecutedTable] = field(default_factory=list)  # the tables run (execution/tables.py)
    tests: TestSummary | None = None  # executed tests and mutants (test stage), None = not run
    round: RoundInfo = field(default_factory=RoundInfo)
    reach: list[RuleReach] = field(default_factory=list)  # how far each changed rule reaches
    budget: RoundBudget = DEFAULT_BUDGET  # the bounds the round ran under (its report's size among them)
    # Rules this round did not run (disabled, or opt-in and not enabled): an earlier finding of one is
    # closed as not substantiated by the round, never called fixed.
    rules_off: tuple[str, ...] = ()

    def summary(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Severity}
        for f in self.findings:
            counts[f.severity.value] += 1
        return counts

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.blocking]
