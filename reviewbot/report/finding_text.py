"""One finding as the comment writes it: its title, evidence and suggestion, its details folded, and
the caps on each (`Caps`); also the body of an inline review comment (`render_finding`).

Every finding has four texts (`FULL`, `BODY`, `TITLE`, `GONE`): the comment is fitted by picking,
finding by finding, how much of it is shown (report.comment).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from reviewbot.model.finding import Finding
from reviewbot.report import sanitize
from reviewbot.report.group import MAX_P3, Group
from reviewbot.report.templating import Chrome, chrome, macros, tidy
from reviewbot.report.truth_tables import ShownTable

__all__ = [
    "Caps",
    "CAPS",
    "FULL",
    "BODY",
    "TITLE",
    "GONE",
    "also_line",
    "attach_tables",
    "finding_variants",
    "ordered_findings",
    "number_ranges",
    "MAX_RANGES",
    "render_finding",
]


@dataclass(frozen=True)
class Caps:
    """How much of a finding and of each section the comment shows; the JSON report has all of it."""

    title: int = 160  # characters of a title
    evidence: int = 3  # evidence lines shown before <details>
    evidence_line: int = 300  # characters of a shown evidence line (also notes, strengths, labels)
    suggestion: int = 600
    more_evidence: int = 12  # further evidence lines inside <details>
    more_evidence_line: int = 500
    sketch: int = 6000  # a longer test sketch is named, not shown (cut code would not compile)
    table_rows: int = 16
    notes: int = 10
    note_line: int = 800  # a note carries its reason (a git error, a limit): shown nearly whole
    fixed: int = 20
    p3: int = MAX_P3  # P3 findings shown (near-identical ones grouped count once; report.group)
    group_lines: int = 12  # other lines of a group named on its title line


CAPS = Caps()


FULL, BODY, TITLE, GONE = range(4)


def ordered_findings(findings: Sequence[Finding]) -> list[Finding]:
    """Report order: blocking first (P0, P1), then P2, P3; the pipeline's order within a severity."""
    return sorted(findings, key=lambda f: f.severity.rank)


def attach_tables(
    findings: Sequence[Finding], tables: Iterable[ShownTable]
) -> tuple[dict[int, list[ShownTable]], list[ShownTable]]:
    """Each truth table goes in the details of the first finding on its derivation (same path, within
    three lines of its guard); the others are shown on their own."""
    attached: dict[int, list[ShownTable]] = {}
    loose: list[ShownTable] = []
    by_path: dict[str, list[tuple[int, int]]] = {}  # path -> (index, line) in report order
    for i, f in enumerate(findings):
        by_path.setdefault(f.path, []).append((i, f.line))
    for table in tables:
        at = next((i for i, line in by_path.get(table.path, ()) if abs(line - table.line) <= 3), None)
        if at is None:
            loose.append(table)
        else:
            attached.setdefault(at, []).append(table)
    return attached, loose


def also_line(group: Group, t: Chrome) -> str:
    """`(4 like this in this file: also lines 22, 31, 40)` for a group; "" for a single finding."""
    if not group.others:
        return ""
    lines = group.lines()
    shown = ", ".join(str(n) for n in lines[: CAPS.group_lines])
    if len(lines) > CAPS.group_lines:
        shown += ", " + sanitize.ELLIPSIS
    return str(t("grouped_also", n=group.count, lines=Markup(shown or str(group.first.line))))


def finding_variants(
    f: Finding,
    t: Chrome,
    number: int | None,
    tables: Sequence[ShownTable],
    place: bool,
    also: str = "",
) -> tuple[str, ...]:
    """(full, body, title, gone) texts of one finding; `also` names the near-identical findings
    grouped into it (kept at every level but gone)."""
    m = macros("finding.md.j2")
    f = f.localized(t.lang)
    title = tidy(str(m.title_line(f, t, CAPS, number, place)))
    if also:
        title = f"{title} {also}"
    body = "\n\n".join(p for p in (title, tidy(str(m.body(f, t, CAPS)))) if p)
    if len(f.evidence) > CAPS.evidence or f.suggestion_code or tables:
        full = body + "\n\n" + tidy(str(m.details(f, t, CAPS, tables)))
    else:
        full = body
    return full, body, title, ""


def render_finding(finding: Finding, lang: str = "en") -> str:
    """The body of an inline comment for one finding (title, evidence, suggestion, details)."""
    return finding_variants(finding, chrome(lang), None, (), False)[FULL] + "\n"


MAX_RANGES = 8


def number_ranges(numbers: Iterable[int]) -> str:
    """F1, F3–F5: numbers as compact ranges (at most `MAX_RANGES`, then an ellipsis)."""
    ns = sorted(set(numbers))
    out: list[str] = []
    i = 0
    while i < len(ns):
        j = i
        while j + 1 < len(ns) and ns[j + 1] == ns[j] + 1:
            j += 1
        out.append(f"F{ns[i]}" if j == i else f"F{ns[i]}{'–F' if j > i + 1 else ', F'}{ns[j]}")
        i = j + 1
    if len(out) > MAX_RANGES:
        out = [*out[:MAX_RANGES], sanitize.ELLIPSIS]
    return ", ".join(out)
