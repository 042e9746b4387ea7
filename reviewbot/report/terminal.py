"""The review for a terminal and for CI logs: one line per finding, then one line of summary.

`render_text` writes `path:line: [P1] rule: title` lines (ruff / semgrep style; in colour when asked),
the notes of what the review could not see, and a summary line. `render_github` writes the same
findings as GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`), which the
runner turns into annotations on the pull request's diff. Neither has a size budget or the hidden
state marker: those belong to the comment (`report.comment`).
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewbot.model.finding import Finding
from reviewbot.model.review import Review, Status
from reviewbot.report.group import Group, group_findings
from reviewbot.report.templating import plain_strings

__all__ = ["render_text", "render_github", "summary_line", "open_findings"]

_RESET = "\033[0m"
_BOLD = "\033[1m"
_SEVERITY_COLOUR = {"P0": "\033[1;31m", "P1": "\033[31m", "P2": "\033[33m", "P3": "\033[36m"}
_STATUS_COLOUR = {
    Status.BLOCKING: "\033[1;31m",
    Status.INCOMPLETE: "\033[1;33m",
    Status.LGTM: "\033[1;32m",
    Status.NO_CHANGE: "\033[1;32m",
}
_LEVEL = {"P0": "error", "P1": "error", "P2": "warning", "P3": "notice"}


def open_findings(review: Review) -> list[Finding]:
    """The findings that are not dismissed, most severe first (the report's order within a severity)."""
    return sorted((f for f in review.findings if f.dismissal is None), key=lambda f: f.severity.rank)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _paint(text: str, colour: str, on: bool) -> str:
    return f"{colour}{text}{_RESET}" if on and colour else text


def summary_line(review: Review, lang: str = "en", colour: bool = False) -> str:
    """`BLOCKING: 7 finding(s) (P0 0 · P1 1 · P2 2 · P3 4) in 1 changed file(s); 2 suppressed inline`."""
    s = plain_strings(lang)
    if review.status is Status.NO_CHANGE:
        return s["nothing_to_review"].format(base=review.base_sha[:12], head=review.head_sha[:12])
    shown = open_findings(review)
    counts = {sev: sum(1 for f in shown if f.severity.value == sev) for sev in ("P0", "P1", "P2", "P3")}
    files = review.kpi.get("files", {}).get("changed", len({f.path for f in shown}))
    status = _paint(review.status.value, _STATUS_COLOUR.get(review.status, ""), colour)
    parts = [
        s["text_summary"].format(
            status=status,
            n=len(shown),
            p0=counts["P0"],
            p1=counts["P1"],
            p2=counts["P2"],
            p3=counts["P3"],
            files=files,
        )
    ]
    dismissed = len(review.findings) - len(shown)
    if dismissed:
        parts.append(s["text_dismissed"].format(n=dismissed))
    suppressed = int(review.kpi.get("suppressed", 0) or 0)
    if suppressed:
        parts.append(s["text_suppressed"].format(n=suppressed))
    groups = [g for g in group_findings(shown) if g.others]
    if groups:
        folded = sum(g.count for g in groups)
        parts.append(s["text_grouped"].format(n=folded, groups=len(groups)))
    if review.notes:
        parts.append(s["text_notes"].format(n=len(review.notes)))
    return "; ".join(parts)


def _also(group: Group) -> str:
    """` (×4: also lines 22, 31, 40)` for a group of near-identical findings; "" for one finding."""
    if not group.others:
        return ""
    lines = group.lines()
    return f" (×{group.count}" + (f": also line {', '.join(map(str, lines))})" if lines else ")")


def render_text(review: Review, lang: str = "en", *, colour: bool = False) -> str:
    """Compact lines for a terminal: findings (near-identical ones as one line with a count: same
    rule, field and file; report.group), notes, then the summary line."""
    lines: list[str] = []
    for group in group_findings(open_findings(review)):
        f = group.first.localized(lang)
        where = _paint(f"{f.path}:{f.line}:", _BOLD, colour)
        sev = _paint(f"[{f.severity.value}]", _SEVERITY_COLOUR[f.severity.value], colour)
        lines.append(f"{where} {sev} {f.rule}: {_one_line(f.title)}{_also(group)}")
    for n in review.notes:
        where = f"{n.path}: " if n.path else ""
        lines.append(f"{where}note [{n.reason.value}]: {_one_line(n.localized(lang))}")
    lines.append(summary_line(review, lang, colour))
    return "\n".join(lines) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, message: str, **props: object) -> str:
    shown = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{level} {shown}::{_escape_data(message)}" if shown else f"::{level}::{_escape_data(message)}"


def render_github(review: Review, lang: str = "en", findings: Sequence[Finding] | None = None) -> str:
    """GitHub Actions workflow commands: one annotation per open finding (P0/P1 `error`, P2 `warning`,
    P3 `notice`) on its file and line, then the summary line as plain log output."""
    lines: list[str] = []
    for f in open_findings(review) if findings is None else findings:
        f = f.localized(lang)
        message = _one_line(f.title)
        if f.suggestion:
            message += "\n" + f.suggestion
        lines.append(
            _command(
                _LEVEL[f.severity.value],
                message,
                file=f.path,
                line=max(f.line, 1),
                title=f"[{f.severity.value}] reviewbot {f.rule}",
            )
        )
    for n in review.notes:
        lines.append(_command("warning", _one_line(n.localized(lang)), file=n.path or None))
    lines.append(summary_line(review, lang))
    return "\n".join(lines) + "\n"
