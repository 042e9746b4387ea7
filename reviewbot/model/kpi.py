"""The KPI of a round: what it looked at, what it found and what it cost, in figures.

The review core writes the figures every round has (`review.verdict.kpi_stage`); later stages add
theirs: the pipeline the suppressed findings, the test stage and the stage timings, the rounds the
recheck counts, a GitHub round its API figures. It stays a dict (a TypedDict): its keys are shown in
the order the stages added them in the JSON report and the stored rounds, and the comment shows them
sorted (`report.comment.compact_kpi`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

from reviewbot.model.executed import ExecutedTable
from reviewbot.model.tests import TestSummary

__all__ = [
    "Kpi",
    "Recheck",
    "FileCounts",
    "IndexCounts",
    "CacheCounts",
    "ExecutedCounts",
    "SuppressedJson",
    "executed_counts",
    "no_recheck",
]


class Recheck(TypedDict):
    """The previous round's open findings, rechecked: how each one stands now."""

    fixed: int
    still_open: int
    cannot_substantiate: int
    fail: int  # carried over unverified: the recheck could not run


def no_recheck() -> Recheck:
    """A first round's recheck: nothing before it."""
    return {"fixed": 0, "still_open": 0, "cannot_substantiate": 0, "fail": 0}


class FileCounts(TypedDict):
    changed: int
    analysed: int
    skipped: int


class IndexCounts(TypedDict):
    """The repository index of the round: files scanned, parsed, and test files among them."""

    scanned: int
    parsed: int
    tests: int


class CacheCounts(TypedDict):
    """Parses the facts cache answered (hits) and had to make (misses) this round."""

    hits: int
    misses: int


class ExecutedCounts(TypedDict):
    """The truth tables run against the code (execution/tables.py)."""

    tables: int  # seen
    executed: int
    rows: int  # run on the head
    agreed: int  # as the table predicted on the head, and not against it on the base
    wrong: int
    defaults_raise: int  # the all-defaults construction raised on the head


def executed_counts(tables: Sequence[ExecutedTable]) -> ExecutedCounts:
    """Tables seen and executed, rows run on the head, agreed and wrong, defaults raising."""
    ran = [t for t in tables if t.ran]
    rows = [r for t in ran for r in t.rows if r.head.outcome != "not_run"]
    return {
        "tables": len(tables),
        "executed": len(ran),
        "rows": len(rows),
        "agreed": sum(1 for r in rows if r.agrees_head is True and r.agrees_base is not False),
        "wrong": sum(1 for r in rows if r.wrong),
        "defaults_raise": sum(1 for t in ran if t.defaults_raise),
    }


class SuppressedJson(TypedDict):
    """A finding a `reviewbot: ignore[rule] reason` comment took out (review.suppress)."""

    rule: str
    severity: str
    path: str
    line: int
    fingerprint: str
    suppressed_at: int  # the line of the comment
    reason: str


class Kpi(TypedDict):
    diff_truncated: bool
    patch_bytes: int
    coverage: float  # the share of the change that was analysed (review.verdict)
    full_files: int
    delta_files: int  # changed since the previous round's head (all changed files in a full review)
    new_findings: int
    merged: int  # findings folded into another with the same fingerprint
    recheck: Recheck
    blocking: int
    blocking_on_unchanged: int  # blocking findings on lines this round's delta did not touch
    round_index: int
    checks_run: int
    checks_failed: int
    derivations: int
    files: FileCounts
    index: IndexCounts
    # Added by the pipeline after the core's figures:
    suppressed: NotRequired[int]  # findings taken out by `reviewbot: ignore[rule] reason` comments
    suppressed_findings: NotRequired[list[SuppressedJson]]
    tests: NotRequired[TestSummary]
    executed_tables: NotRequired[ExecutedCounts]
    timings_ms: NotRequired[dict[str, float]]  # stage -> milliseconds
    facts_cache: NotRequired[CacheCounts]
    # By the rounds (review.rounds):
    dismissed: NotRequired[int]
    moved: NotRequired[int]  # earlier findings found again at another line
    # By a GitHub round (github.sink); API writes as planned, since the report is written before posting:
    api_calls: NotRequired[int]
    api_reads: NotRequired[int]
    api_writes: NotRequired[int]
    api_auth_calls: NotRequired[int]
    code_source: NotRequired[str]  # review.round.CodeOrigin's value
    partial_clone: NotRequired[bool]
    bot_login: NotRequired[str]
