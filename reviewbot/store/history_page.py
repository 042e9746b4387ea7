"""A PR's round history as the history page shows it (report.history_page), read from the rounds store.

Each round contributes what it stored: its columns, its findings (new, still open, and those it closed:
fixed or not substantiated), and from its JSON report the truth tables, the test run and the notes.
The report is read as stored, never re-computed, so the page shows each round as it was published.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from reviewbot.report.history_page import PageFinding, PageRound, PrHistory
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
    doc = _report(record)
    tests = doc.get("tests")
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
        truth_tables=tuple(t for t in doc.get("truth_tables") or () if isinstance(t, Mapping)),
        tests=tests if isinstance(tests, Mapping) else None,
        notes=tuple(str(n.get("message", "")) for n in doc.get("notes") or () if isinstance(n, Mapping)),
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


def _report(record: RoundRecord) -> Mapping[str, Any]:
    """The round's stored JSON report; a round whose report cannot be read still shows its columns
    and findings (the store keeps them apart)."""
    try:
        doc = json.loads(record.report_json)
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
