"""Hand-built findings and reviews over real git changes, for testing rounds before the core runs."""

from __future__ import annotations

from reviewbot.model.change import ChangeSet, Note
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import ChecklistResult, Review, Status

CONFIG = "src/config.cc"


def finding(
    rule: str,
    anchor: str,
    line: int,
    severity: Severity = Severity.P2,
    path: str = CONFIG,
    title: str | None = None,
    evidence: tuple[str, ...] = (),
) -> Finding:
    return Finding(
        rule=rule,
        severity=severity,
        path=path,
        line=line,
        title=title or f"`{rule}` fires on `{anchor}`",
        anchor=anchor,
        evidence=evidence,
        suggestion="do the right thing",
    )


def review_of(
    change: ChangeSet, findings: list[Finding], notes: list[Note] | None = None, status: Status | None = None
) -> Review:
    """What the core would return for `change` with these findings (status by the core's rule)."""
    if status is None:
        status = Status.BLOCKING if any(f.blocking for f in findings) else Status.LGTM
    return Review(
        status=status,
        base_sha=change.base_sha,
        head_sha=change.head_sha,
        merge_base=change.merge_base,
        reviewed_at="2026-01-01 00:00 UTC",
        findings=findings,
        checklist=ChecklistResult(),
        strengths=[],
        notes=list(change.notes) + list(notes or []),
        kpi={"merged": 0, "coverage": change.coverage, "full_files": len(change.files)},
    )
