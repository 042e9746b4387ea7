"""What the rounds store keeps: a round and its findings (plain records).

A line of a PR's history read back from the store is a `model.round.RoundRow` (`Store.history`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from reviewbot.model.finding import Dismissal, Finding, Location, Severity
from reviewbot.model.kpi import Kpi
from reviewbot.model.messages import LANGS
from reviewbot.model.review import Review
from reviewbot.model.round import OPEN_STATES, FindingState
from reviewbot.model.stored_finding import Exact, Sentences, StoredFinding

__all__ = ["FindingRecord", "StoredFinding", "RoundRecord"]


@dataclass(frozen=True)
class FindingRecord:
    """One finding of one round as stored: the columns a query needs plus the whole finding."""

    fingerprint: str
    rule: str
    severity: str
    path: str
    line: int
    title: str
    anchor: str
    state: str
    fixed_in: str | None
    data: StoredFinding

    @classmethod
    def from_finding(cls, f: Finding) -> FindingRecord:
        # to_json is the public shape; these fields are needed to rebuild the Finding exactly.
        exact: Exact = {
            "anchor": f.anchor,
            "suggestion_lang": f.suggestion_lang,
            "replacement": f.replacement,
            "related": [[loc.path, loc.line, loc.text] for loc in f.related],
        }
        if f.texts:
            exact["localized"] = {lang: _sentences(f.localized(lang)) for lang in LANGS if lang != "en"}
        data: StoredFinding = {**f.to_json(), **exact}
        return cls(
            f.fingerprint,
            f.rule,
            f.severity.value,
            f.path,
            f.line,
            f.title,
            f.anchor,
            f.state,
            f.fixed_in,
            data,
        )

    def to_finding(self) -> Finding:
        d = self.data
        finding = Finding(
            rule=self.rule,
            severity=Severity(self.severity),
            path=self.path,
            line=self.line,
            title=self.title,
            anchor=self.anchor,
            evidence=tuple(d.get("evidence", ())),
            suggestion=d.get("suggestion", ""),
            suggestion_code=d.get("suggestion_code", ""),
            suggestion_lang=d.get("suggestion_lang", ""),
            replacement=d.get("replacement"),
            checklist=tuple(d.get("checklist", ())),
            extra=tuple((str(k), str(v)) for k, v in dict(d.get("extra", {})).items()),
            state=FindingState(self.state),
            fixed_in=self.fixed_in,
            related=tuple(Location(str(p), int(n), str(t)) for p, n, t in d.get("related", ())),
            dismissal=Dismissal.from_json(d.get("dismissal")),
        )
        # Identity is the stored fingerprint, even if a later reviewbot computes them differently.
        if finding.fingerprint != self.fingerprint:
            finding = finding.with_(fingerprint_override=self.fingerprint)
        return finding


def _sentences(f: Finding) -> Sentences:
    return {"title": f.title, "evidence": list(f.evidence), "suggestion": f.suggestion}


@dataclass(frozen=True)
class RoundRecord:
    """One round of a pull request as the store keeps it: what was reviewed, the outcome, the
    findings and the rendered report.

    Made of a rendered review (`from_review`: the local and the GitHub sink, via
    store.round_history.save_review) and by the store when it reads a round back (`Store.get_round`,
    `latest_round`, `round_for_head`, `save_round`). Read by the next round (its open findings, via
    store.round_history), `reviewbot rounds --round K` (its stored report), the history page
    (store.history_page) and `reviewbot dismiss`."""

    repository: str
    pr: int
    round_index: int
    base_sha: str
    head_sha: str
    merge_base: str
    previous_head: str | None
    reviewed_at: str
    status: str
    summary: Mapping[str, int]
    kpi: Kpi
    full_review: bool
    force_pushed: bool
    report_markdown: str
    report_json: str
    findings: tuple[FindingRecord, ...] = ()
    id: int | None = None  # set once stored
    created_at: datetime | None = None  # set once stored: when the round was first recorded

    @property
    def open_findings(self) -> list[Finding]:
        """The findings the next round must recheck."""
        return [r.to_finding() for r in self.findings if r.state in OPEN_STATES]

    @classmethod
    def from_review(
        cls, review: Review, *, repository: str, pr: int, report_markdown: str, report_json: str
    ) -> RoundRecord:
        """The record of a review whose `round` was filled by review.rounds."""
        closed = [*review.round.fixed, *review.round.cannot_substantiate]
        return cls(
            repository=repository,
            pr=pr,
            round_index=review.round.round_index,
            base_sha=review.base_sha,
            head_sha=review.head_sha,
            merge_base=review.merge_base,
            previous_head=review.round.previous_head,
            reviewed_at=review.reviewed_at,
            status=review.status.value,
            summary=review.summary(),
            kpi=review.kpi,
            full_review=review.round.full_review,
            force_pushed=review.round.force_pushed,
            report_markdown=report_markdown,
            report_json=report_json,
            findings=tuple(FindingRecord.from_finding(f) for f in [*review.findings, *closed]),
        )
