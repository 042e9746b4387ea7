"""Render a Review: markdown (report.comment, en/zh), JSON, SARIF."""

from __future__ import annotations

import json
from typing import NotRequired, TypedDict

from reviewbot import __version__
from reviewbot.model.executed_json import ExecutedTableJson
from reviewbot.model.finding import FindingJson
from reviewbot.model.kpi import Kpi
from reviewbot.model.review import ChecklistItemResult, Review, RuleReachJson
from reviewbot.model.round import RoundRowJson
from reviewbot.model.tests import TestSummary
from reviewbot.report.comment import BUDGET, GITHUB_LIMIT, render_finding, render_markdown
from reviewbot.report.sarif import render_sarif
from reviewbot.report.templating import LANGS
from reviewbot.report.truth_tables import TruthTableJson, table_json

__all__ = [
    "render_markdown",
    "render_finding",
    "render_json",
    "ReportJson",
    "stored_json",
    "render_sarif",
    "LANGS",
    "BUDGET",
    "GITHUB_LIMIT",
]


class ToolJson(TypedDict):
    name: str
    version: str


class ChecklistItemJson(TypedDict):
    id: str
    section: str
    label: str
    failed: bool
    evaluated: bool
    reason: NotRequired[str]  # why not evaluated, when a rule abstained (the tests not running: none)
    findings: list[str]  # fingerprints


class ChecklistJson(TypedDict):
    failed: int
    total: int
    items: list[ChecklistItemJson]


class NoteJson(TypedDict):
    reason: str  # SkipReason's value
    message: str
    path: str | None


class ReportJson(TypedDict):
    """The JSON report (`--format json`), also kept by the rounds store as the round's `report_json`."""

    tool: ToolJson
    status: str
    round: int
    repository: str | None
    pr: int | None
    base_sha: str
    head_sha: str
    merge_base: str
    reviewed_at: str
    summary: dict[str, int]  # open findings per severity
    findings: list[FindingJson]
    fixed: list[FindingJson]
    checklist: ChecklistJson
    strengths: list[str]
    notes: list[NoteJson]
    truth_tables: list[TruthTableJson]
    executed_tables: list[ExecutedTableJson]
    tests: TestSummary | None
    reach: list[RuleReachJson]
    history: list[RoundRowJson]
    kpi: Kpi


def render_json(review: Review) -> ReportJson:
    return {
        "tool": {"name": "reviewbot", "version": __version__},
        "status": review.status.value,
        "round": review.round.round_index,
        "repository": review.round.repository or None,
        "pr": review.round.pr,
        "base_sha": review.base_sha,
        "head_sha": review.head_sha,
        "merge_base": review.merge_base,
        "reviewed_at": review.reviewed_at,
        "summary": review.summary(),
        "findings": [f.to_json() for f in review.findings],
        "fixed": [f.to_json() for f in review.round.fixed],
        "checklist": {
            "failed": review.checklist.failed,
            "total": review.checklist.total,
            "items": [_checklist_item(i) for i in review.checklist.items],
        },
        "strengths": [str(s) for s in review.strengths],
        "notes": [{"reason": n.reason.value, "message": n.message, "path": n.path} for n in review.notes],
        "truth_tables": [table_json(t) for t in review.truth_tables],
        "executed_tables": [t.to_json() for t in review.executed_tables],
        "tests": review.tests,
        "reach": [r.to_json() for r in review.reach],
        "history": [r.to_json() for r in review.round.history],
        "kpi": review.kpi,
    }


def stored_json(doc: ReportJson) -> str:
    """The JSON document as the rounds store keeps it (and as a round's report size is measured)."""
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _checklist_item(i: ChecklistItemResult) -> ChecklistItemJson:
    item: ChecklistItemJson = {
        "id": i.id,
        "section": i.section,
        "label": i.label,
        "failed": i.failed,
        "evaluated": i.evaluated,
        "findings": list(i.findings),
    }
    if i.reason:
        item["reason"] = i.reason
    return item
