"""The round-history page's content: a PR's rounds as plain records, read from what each round stored.

The rounds store (store.history_page) fills these records; report.history_html renders them. Nothing
here reads a database or knows its tables, so the page can be tested and rendered from any source.

A finding's state in a round is what the round recorded (`new`, `still_open`, `fixed`,
`cannot_substantiate`), or `dismissed` when the stored finding carries a dismissal (see `dismissal_of`:
the one place that reads it, so the page follows however dismissals end up being stored).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from reviewbot.model.stored_finding import Sentences, StoredFinding
from reviewbot.model.tests import TestSummary
from reviewbot.report.truth_tables import RowJson, TruthTableJson

__all__ = [
    "STATES",
    "Dismissal",
    "FindingLife",
    "PageFinding",
    "PageRound",
    "PrHistory",
    "TableChange",
    "dismissal_of",
]

# The order the page lists a round's findings in.
STATES = ("new", "fixed", "still_open", "dismissed", "cannot_substantiate")


@dataclass(frozen=True)
class Dismissal:
    """Why a finding is not held against the PR, and who said so."""

    reason: str
    by: str = ""
    at: str = ""


def dismissal_of(state: str, data: StoredFinding) -> Dismissal | None:
    """The dismissal a stored finding carries, if any.

    Read from `data["dismissal"]` (a mapping with `reason`, `by`, `at`), or from the finding's `extra`
    facts (`dismissed_reason`, `dismissed_by`, `dismissed_at`); a finding whose state is `dismissed`
    is dismissed even when no reason was kept.
    """
    raw = data.get("dismissal")
    if isinstance(raw, Mapping) and raw:
        return Dismissal(str(raw.get("reason", "")), str(raw.get("by", "")), str(raw.get("at", "")))
    extra = data.get("extra")
    if isinstance(extra, Mapping) and "dismissed_reason" in extra:
        return Dismissal(
            str(extra["dismissed_reason"]),
            str(extra.get("dismissed_by", "")),
            str(extra.get("dismissed_at", "")),
        )
    return Dismissal("") if state == "dismissed" else None


@dataclass(frozen=True)
class PageFinding:
    """One finding as one round recorded it."""

    fingerprint: str
    rule: str
    severity: str
    path: str
    line: int
    title: str
    state: str  # one of STATES
    fixed_in: str | None = None
    evidence: tuple[str, ...] = ()
    suggestion: str = ""
    dismissal: Dismissal | None = None
    # lang -> {"title", "evidence", "suggestion"} in that language, as the round stored them (English
    # is the fields above); a finding stored by an older reviewbot has none.
    localized: Mapping[str, Sentences] = field(default_factory=dict)

    def in_lang(self, lang: str, fallback: Sentences | None = None) -> PageFinding:
        """The finding with its sentences in `lang` where stored (else `fallback`: the same
        fingerprint's sentences from another round), in English otherwise."""
        texts = self.localized.get(lang) or fallback
        if not texts:
            return self
        return replace(
            self,
            title=str(texts.get("title") or self.title),
            evidence=tuple(str(e) for e in texts.get("evidence") or self.evidence),
            suggestion=str(texts.get("suggestion") or self.suggestion),
        )

    @classmethod
    def of(
        cls,
        *,
        fingerprint: str,
        rule: str,
        severity: str,
        path: str,
        line: int,
        title: str,
        state: str,
        fixed_in: str | None,
        data: StoredFinding,
    ) -> PageFinding:
        """A stored finding (its columns and its `data` document) as the page shows it."""
        dismissal = dismissal_of(state, data)
        # A dismissed finding that was fixed later is shown fixed: the fix is the newer fact.
        shown_state = (
            "dismissed" if dismissal is not None and state not in ("fixed", "cannot_substantiate") else state
        )
        return cls(
            fingerprint=fingerprint,
            rule=rule,
            severity=severity,
            path=path,
            line=line,
            title=title,
            state=shown_state,
            fixed_in=fixed_in,
            evidence=tuple(str(e) for e in data.get("evidence", ()) or ()),
            suggestion=str(data.get("suggestion", "") or ""),
            dismissal=dismissal,
            localized=_localized(data.get("localized")),
        )


def _localized(raw: Mapping[str, Sentences] | None) -> dict[str, Sentences]:
    if not isinstance(raw, Mapping):  # a row of an older reviewbot may hold anything here
        return {}
    return {str(lang): texts for lang, texts in raw.items() if isinstance(texts, Mapping)}


@dataclass(frozen=True)
class TableChange:
    """A truth table of a round, and how it compares with the same derivation's table a round earlier."""

    table: TruthTableJson  # as the round's stored JSON report holds it
    since_previous: str  # "first" (round 1) | "added" | "changed" | "unchanged"

    @property
    def key(self) -> str:
        return table_key(self.table)

    @property
    def changed_rows(self) -> list[RowJson]:
        return [r for r in self.table.get("rows", ()) if r.get("changed")]


def table_key(table: TruthTableJson) -> str:
    """What identifies a derivation across rounds: its file, function and target."""
    return f"{table.get('path', '')}::{table.get('function') or ''}::{table.get('target', '')}"


@dataclass(frozen=True)
class PageRound:
    """One stored round as the history page shows it: what was reviewed, the outcome, its findings,
    truth tables and test run.

    Made by store.history_page.page_round from a store.records.RoundRecord (the report layer cannot
    name the store's records); read by report.history_html and its template."""

    index: int
    head_sha: str
    base_sha: str
    status: str
    summary: Mapping[str, int]
    reviewed_at: str
    full_review: bool
    force_pushed: bool
    findings: tuple[PageFinding, ...] = ()
    truth_tables: tuple[TruthTableJson, ...] = ()
    tests: TestSummary | None = None  # None: the round ran no tests stage
    notes: tuple[str, ...] = ()

    def with_state(self, state: str) -> list[PageFinding]:
        return [f for f in self.findings if f.state == state]

    @property
    def counts(self) -> dict[str, int]:
        return {s: len(self.with_state(s)) for s in STATES}


@dataclass(frozen=True)
class FindingLife:
    """A fingerprint across the rounds: where it was first seen and what it is in the latest round."""

    finding: PageFinding  # as the latest round that has it recorded it
    first_round: int
    last_round: int
    states: tuple[tuple[int, str], ...]  # (round, state) of every round that recorded it


@dataclass(frozen=True)
class PrHistory:
    """Every recorded round of one pull request, oldest first."""

    repository: str
    pr: int
    rounds: tuple[PageRound, ...] = field(default=())

    def in_lang(self, lang: str) -> PrHistory:
        """Every finding's sentences in `lang`: as its round stored them, else as another round stored
        the same fingerprint (a finding closed in a round is stored from the previous round's record,
        which kept only its English texts), else in English."""
        known: dict[str, Sentences] = {}
        for r in self.rounds:
            for f in r.findings:
                if lang in f.localized:
                    known[f.fingerprint] = f.localized[lang]
        rounds = tuple(
            replace(r, findings=tuple(f.in_lang(lang, known.get(f.fingerprint)) for f in r.findings))
            for r in self.rounds
        )
        return replace(self, rounds=rounds)

    def table_changes(self, index: int) -> tuple[list[TableChange], list[str]]:
        """Round `index`'s truth tables compared with the previous round's, and the derivations the
        previous round had a table of that this round has not (their keys)."""
        pos = next(i for i, r in enumerate(self.rounds) if r.index == index)
        current = self.rounds[pos].truth_tables
        if pos == 0:
            return [TableChange(t, "first") for t in current], []
        before = {table_key(t): t for t in self.rounds[pos - 1].truth_tables}
        changes = []
        for t in current:
            old = before.get(table_key(t))
            verdict = "added" if old is None else ("unchanged" if _rows(old) == _rows(t) else "changed")
            changes.append(TableChange(t, verdict))
        now = {table_key(t) for t in current}
        return changes, [k for k in before if k not in now]

    def lives(self) -> list[FindingLife]:
        """Every fingerprint the PR's rounds recorded, in the order they were first seen."""
        seen: dict[str, list[tuple[int, PageFinding]]] = {}
        for r in self.rounds:
            for f in r.findings:
                seen.setdefault(f.fingerprint, []).append((r.index, f))
        return [
            FindingLife(
                finding=occurrences[-1][1],
                first_round=occurrences[0][0],
                last_round=occurrences[-1][0],
                states=tuple((i, f.state) for i, f in occurrences),
            )
            for occurrences in seen.values()
        ]


def _rows(table: TruthTableJson) -> list[tuple[object, ...]]:
    return [
        (sorted(r.get("inputs", {}).items()), r.get("base"), r.get("head")) for r in table.get("rows", ())
    ]
