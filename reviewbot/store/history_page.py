"""A PR's round history as the history page shows it (report.history_page), read from the rounds store.

Each round contributes what it stored: its columns, its findings (new, still open, and those it closed:
fixed or not substantiated), and from its JSON report the truth tables, the test run and the notes.
The report is read as stored, never re-computed, so the page shows each round as it was published.
"""

from __future__ import annotations

import json
import logging
from typing import cast

from reviewbot.model.jsonvalue import JSONObject, JSONValue
from reviewbot.model.tests import TestSummary
from reviewbot.report.history_page import PageFinding, PageRound, PrHistory
from reviewbot.report.truth_tables import TruthTableJson
from reviewbot.store.records import FindingRecord, RoundRecord
from reviewbot.store.store import Store

__all__ = ["load_history", "page_round"]

log = logging.getLogger(__name__)


def load_history(store: Store, repository: str, pr: int) -> PrHistory | None:
    """Every recorded round of the PR, oldest first; None when it has none."""
    rounds = []
    for row in store.history(repository, pr):
        record = store.get_round(repository, pr, row.round)
        if record is not None:  # a round removed between the two reads is simply not shown
            rounds.append(page_round(record))
    return PrHistory(repository, pr, tuple(rounds)) if rounds else None


def page_round(record: RoundRecord) -> PageRound:
    """One stored round as a page round."""
    report = _report(record)
    return PageRound(
        index=record.round_index,
        head_sha=record.head_sha,
        base_sha=record.base_sha,
        status=record.status,
        summary=dict(record.summary),
        reviewed_at=record.reviewed_at,
        full_review=record.full_review,
        force_pushed=record.force_pushed,
        findings=tuple(_finding(f) for f in record.findings),
        truth_tables=_tables(report.get("truth_tables")),
        tests=_tests(report.get("tests")),
        notes=_notes(report.get("notes")),
    )


def _finding(f: FindingRecord) -> PageFinding:
    return PageFinding.of(
        fingerprint=f.fingerprint,
        rule=f.rule,
        severity=f.severity,
        path=f.path,
        line=f.line,
        title=f.title,
        state=f.state,
        fixed_in=f.fixed_in,
        data=f.data,
    )


# The stored JSON report is read back as `json.loads` gives it (JSONValue) and each part the page
# shows is checked here, at the boundary, before it gets its shape (report.render.ReportJson's):
# a round stored by an older reviewbot, or edited by hand, loses the part that does not fit, not
# the page.


def _report(record: RoundRecord) -> JSONObject:
    """The round's stored JSON report; a round whose report cannot be read still shows its columns
    and findings (the store keeps them apart)."""
    try:
        doc: JSONValue = json.loads(record.report_json)
    except ValueError as exc:
        log.warning(
            "%s PR #%d round %d: stored JSON report unreadable (%s); shown without truth tables and tests",
            record.repository,
            record.pr,
            record.round_index,
            exc,
        )
        return {}
    return doc if isinstance(doc, dict) else {}


def _objects(value: JSONValue) -> list[JSONObject]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _tables(value: JSONValue) -> tuple[TruthTableJson, ...]:
    """ReportJson's `truth_tables`: the objects of the list."""
    return tuple(cast(TruthTableJson, t) for t in _objects(value))


def _tests(value: JSONValue) -> TestSummary | None:
    """ReportJson's `tests`: an object, else None (the round ran no tests stage)."""
    return cast(TestSummary, value) if isinstance(value, dict) else None


def _notes(value: JSONValue) -> tuple[str, ...]:
    """The messages of ReportJson's `notes`."""
    return tuple(str(n.get("message", "")) for n in _objects(value))
