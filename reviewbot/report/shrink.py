"""Keep a round's stored report (markdown + JSON) within its budget, findings first.

The comment is fitted to GitHub's limit by `report.comment`, but the stored round keeps the JSON in
full and the markdown with its state marker: one deep expression made 16 MB of markdown and 10 MB of
JSON, and a comment cut to its header. When a round's report is over `RoundBudget.report_bytes`,
`fit_report` first shortens what is long inside findings (suggestions, test sketches, evidence,
extra facts), truth tables (the executed ones too) and notes; if that is not enough, it keeps the most severe findings that
fit and leaves the rest out. Either way a note (reason `budget`) says what was cut, the round is
INCOMPLETE unless it blocks, and every finding that is kept is shown whole enough to act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from reviewbot.change.notes import human_size
from reviewbot.model.change import Note, SkipReason
from reviewbot.model.executed import ExecutedRow, ExecutedTable
from reviewbot.model.finding import Finding
from reviewbot.model.messages import Message, msg
from reviewbot.model.review import Review, Status
from reviewbot.model.truthtable import TruthTable
from reviewbot.report.render import ReportJson

__all__ = ["fit_report", "Rendered", "Renderer", "report_size"]

Rendered = tuple[str, ReportJson, str]  # markdown, JSON document, JSON text (as stored)


@dataclass(frozen=True)
class Renderer:
    """How a round's report is rendered: the JSON document, its text as stored, and the markdown."""

    document: Callable[[Review], ReportJson]
    text: Callable[[ReportJson], str]
    markdown: Callable[[Review], str]

    def __call__(self, review: Review) -> Rendered:
        doc = self.document(review)
        return self.markdown(review), doc, self.text(doc)


def _floor(doc: ReportJson) -> int:
    """Bytes of the document as compact JSON: no stored text of it is shorter (indentation only adds).
    The compact form is written by json's C encoder; an indented one only by its Python encoder,
    0.15 s for the 4.5 MB of a 518-finding review."""
    return _nbytes(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))


_TEXT = 2_000  # characters of a suggestion, an evidence line, an extra fact
_CODE = 6_000  # characters of a test sketch (the comment names a longer one instead of showing it)
_EVIDENCE = 12  # evidence lines of one finding
_TABLE_ROWS = 64
_TABLES = 50
_NOTES = 200
_CUT = " …"


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def report_size(rendered: Rendered) -> int:
    """UTF-8 bytes of what a round stores as its report: the markdown and the JSON text."""
    markdown, _, json_text = rendered
    return _nbytes(markdown) + _nbytes(json_text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(_CUT)] + _CUT


def _short_finding(f: Finding) -> Finding:
    title = _clip(f.title, _TEXT)
    evidence = tuple(_clip(e, _TEXT) for e in f.evidence[:_EVIDENCE])
    suggestion = _clip(f.suggestion, _TEXT)
    # A sketch cut in the middle would not compile: a long one goes, the suggestion still says what to pin.
    code = f.suggestion_code if len(f.suggestion_code) <= _CODE else ""
    # A shortened text no longer renders from its catalogue message (that would give it back whole).
    keep = {k for k, a, b in (("title", title, f.title), ("suggestion", suggestion, f.suggestion)) if a == b}
    keep |= {f"evidence.{i}" for i, (a, b) in enumerate(zip(evidence, f.evidence, strict=False)) if a == b}
    return replace(
        f,
        title=title,
        # The anchor names the finding across rounds: shortened, it keeps its fingerprint.
        anchor=_clip(f.anchor, _TEXT),
        fingerprint_override=f.fingerprint,
        evidence=evidence,
        suggestion=suggestion,
        suggestion_code=code,
        extra=tuple((k, _clip(v, _TEXT)) for k, v in f.extra),
        related=f.related[:_EVIDENCE],
        texts=tuple((k, m) for k, m in f.texts if k in keep),
    )


def _short_table(t: TruthTable) -> TruthTable:
    if len(t.rows) <= _TABLE_ROWS:
        return t
    changed = [r for r in t.rows if r.changed]
    rows = (changed or list(t.rows))[:_TABLE_ROWS]
    return replace(t, rows=tuple(rows), truncated=True)


def _kept_first(row: ExecutedRow) -> int:
    # What the table says of the change: the rows it got wrong, then the changed rows, then the default.
    return 0 if row.wrong else 1 if row.changed else 2 if row.default else 3


def _short_executed(t: ExecutedTable) -> ExecutedTable:
    """At most `_TABLE_ROWS` rows, those that say most first (kept in the table's order), and no
    generated test file over `_CODE` characters (cut, it would not run; the finding that offers it
    is shortened the same way)."""
    rows = t.rows
    if len(rows) > _TABLE_ROWS:
        kept = sorted(range(len(rows)), key=lambda i: (_kept_first(rows[i]), i))[:_TABLE_ROWS]
        rows = tuple(rows[i] for i in sorted(kept))
    code = t.test_code if len(t.test_code) <= _CODE else ""
    return t if (rows, code) == (t.rows, t.test_code) else replace(t, rows=rows, test_code=code)


def _shortened(review: Review) -> Review:
    return replace(
        review,
        findings=[_short_finding(f) for f in review.findings],
        truth_tables=[_short_table(t) for t in review.truth_tables[:_TABLES]],
        executed_tables=[_short_executed(t) for t in review.executed_tables[:_TABLES]],
        notes=review.notes[:_NOTES],
        reach=review.reach[:_TABLES],
    )


def _with_note(review: Review, size: int, limit: int, cut: Message, at_least: bool = False) -> Review:
    key = "note.budget.report.over" if at_least else "note.budget.report"
    note = Note.of(SkipReason.BUDGET, msg(key, size=human_size(size), limit=human_size(limit), cut=cut))
    status = review.status if review.status is Status.BLOCKING else Status.INCOMPLETE
    return replace(review, notes=[note, *review.notes], status=status)


def _keeping(review: Review, n: int, size: int, limit: int, at_least: bool = False) -> Review:
    total = len(review.findings)
    kept = review.findings[:n]  # the pipeline orders findings most severe first
    cut = msg("note.budget.report.findings", left=f"{total - n:,}", total=f"{total:,}")
    fixed = review.round.fixed[: max(n, 1)]
    shorter = replace(review, findings=kept, round=replace(review.round, fixed=fixed))
    return _with_note(shorter, size, limit, cut, at_least)


def fit_report(review: Review, render: Renderer, limit: int) -> tuple[Review, Rendered]:
    """`review` and its rendering, cut to `limit` bytes of stored report when it is over.

    The JSON document is made first: when it alone, written compactly, is over the limit, neither its
    stored text nor the markdown of the whole review (the costliest rendering of a large one: 0.4 s of
    518 findings and 250 truth tables) is made, and the note says the report came to more than that."""
    doc = render.document(review)
    size, at_least = _floor(doc), True
    if size <= limit:
        rendered = (render.markdown(review), doc, render.text(doc))
        size, at_least = report_size(rendered), False
        if size <= limit:
            return review, rendered
    short = _with_note(_shortened(review), size, limit, msg("note.budget.report.details"), at_least)
    rendered = render(short)
    if report_size(rendered) <= limit or not short.findings:
        return short, rendered
    base = _shortened(review)
    total = len(base.findings)
    empty = report_size(render(_keeping(base, 0, size, limit, at_least)))
    per = max((report_size(rendered) - empty) / total, 1.0)
    n = max(min(int((limit - empty) / per), total - 1), 0)
    while True:
        kept = _keeping(base, n, size, limit, at_least)
        rendered = render(kept)
        if report_size(rendered) <= limit or n == 0:
            return kept, rendered
        n = int(n * 0.8)
