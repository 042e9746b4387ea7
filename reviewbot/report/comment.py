"""The summary comment and inline comment bodies: concise by construction, fitted to a budget.

Each finding is a title (cut at `Caps.title` characters), at most `Caps.evidence` evidence lines and a
suggestion, with the rest folded in `<details>` (further evidence, the test sketch, the truth table);
the checklist refers to findings by their number (F1, F2, ...). The comment is fitted to `budget`
(UTF-8 bytes; 12 KB by default) and, whatever comes in, to GitHub's 65,536-character limit: details
go first (lowest severity first; the checklist's passed items before the blocking findings'), then
the bodies of lower-severity findings; only past the hard limit do whole sections and findings go. The compact KPI
block (one line per key) is always there, the hidden state marker is never dropped, and one line under
the title says what was left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from reviewbot.model.kpi import Kpi
from reviewbot.model.messages import texts_of
from reviewbot.model.review import Review, Status
from reviewbot.report import sanitize
from reviewbot.report.finding_text import (
    BODY,
    CAPS,
    GONE,
    MAX_RANGES,
    TITLE,
    Caps,
    also_line,
    attach_tables,
    finding_variants,
    number_ranges,
    ordered_findings,
    render_finding,
)
from reviewbot.report.fit import Extra, Measure, Slot, Step, fit, joined, total_size
from reviewbot.report.group import Folded, Group, fold
from reviewbot.report.templating import Chrome, chrome, macros, tidy
from reviewbot.report.truth_tables import ShownTable, shown_tables

__all__ = ["render_markdown", "render_finding", "compact_kpi", "BUDGET", "GITHUB_LIMIT", "Caps", "CAPS"]

BUDGET = 12_000  # bytes of UTF-8: the soft size of a summary comment (the seed review is ~3 KB)
GITHUB_LIMIT = 65_536  # characters: GitHub refuses longer comment bodies (422)


# --- the summary comment -------------------------------------------------------------------------

# Sections that may go, in the order they go: within the soft budget (details) and past the hard limit.
# The KPI block never goes: it is compact (one line per key) and part of every report.
_SOFT_SECTIONS = ("truth_tables", "tests")
_HARD_SECTIONS = ("history", "strengths", "fixed", "dismissed")


@dataclass(frozen=True)
class _Layout:
    slots: list[Slot]
    numbers: dict[int, int]  # finding slot -> finding number
    blocking: list[int]  # finding slots of P0/P1 findings, report order
    rest: list[int]  # finding slots of P2/P3 findings, report order
    headings: dict[int, list[int]]  # severity heading slot -> the finding slots under it
    sections: dict[str, int]  # section name -> slot

    def steps(self) -> list[Step]:
        """Within the soft budget: details (lowest severity first, last finding first; the test run
        block and the checklist's passed items before the blocking findings' details), bodies."""
        sec = self.sections
        steps = [Step(i, BODY) for i in reversed(self.rest)]
        steps += [Step(sec[k], 1) for k in _SOFT_SECTIONS if k in sec]
        steps += [Step(sec["checklist"], 1)]
        steps += [Step(i, BODY) for i in reversed(self.blocking)]
        steps += [Step(i, TITLE) for i in reversed(self.rest)]
        return steps + [Step(i, TITLE) for i in reversed(self.blocking)]

    def hard_steps(self) -> list[Step]:
        """Only past the hard limit: the remaining sections, then whole findings, then the checklist."""
        sec = self.sections
        steps = [Step(sec[k], 1) for k in _HARD_SECTIONS if k in sec]
        steps += [Step(i, GONE) for i in reversed(self.rest)]
        steps += [Step(i, GONE) for i in reversed(self.blocking)]
        steps += [Step(sec["checklist"], 2)]
        return steps + ([Step(sec["notes"], 1)] if "notes" in sec else [])


class _Builder:
    def __init__(self) -> None:
        self.slots: list[Slot] = []
        self.sections: dict[str, int] = {}

    def add(self, key: str, *variants: str) -> int:
        self.slots.append(Slot(key, tuple(variants)))
        return len(self.slots) - 1

    def section(self, key: str, *variants: str) -> None:
        self.sections[key] = self.add(key, *variants)


def _layout(review: Review, t: Chrome) -> _Layout:
    m = macros("report.md.j2")
    # Dismissed findings have their own section: listed with the reason, under neither heading.
    # Near-identical findings are shown once with a count, and P3s past `CAPS.p3` not at all
    # (report.group); each finding's number is its group's, so the checklist still points at it.
    folded = fold(ordered_findings([f for f in review.findings if f.dismissal is None]), CAPS.p3)
    groups = folded.shown
    ordered = [g.first for g in groups]
    dismissed = [f for f in review.findings if f.dismissal is not None]
    number = {f.fingerprint: n for n, g in enumerate(groups, 1) for f in g.members}
    attached, loose = attach_tables(ordered, shown_tables(review.truth_tables, review.executed_tables))
    b = _Builder()

    b.add("header", tidy(str(m.header(review, t))))
    if review.notes:
        b.section("notes", tidy(str(m.notes(review, t, CAPS))), "")
    b.add("blocking", f"### {t.blocking}")
    if not any(f.blocking for f in ordered):
        b.add("none_blocking", str(t.none_blocking))
    numbers, headings = _add_findings(b, groups, attached, t)
    if folded.grouped or folded.capped:
        b.add("folded", folded_line(folded, t))
    if dismissed:
        b.section("dismissed", tidy(str(m.dismissed(dismissed, t, CAPS))), "")
    if review.round.fixed:
        b.section("fixed", tidy(str(m.fixed(review, t, CAPS))), "")

    def refs(fingerprints: Iterable[str]) -> Markup:
        return Markup(number_ranges(number[fp] for fp in fingerprints if fp in number))

    full, failed = (tidy(str(m.checklist(review, t, refs, only))) for only in (False, True))
    b.section("checklist", full, failed, "")
    _add_sections(b, review, t, loose)
    blocking = [i for i, n in numbers.items() if ordered[n - 1].blocking]
    rest = [i for i, n in numbers.items() if not ordered[n - 1].blocking]
    return _Layout(b.slots, numbers, blocking, rest, headings, b.sections)


def _add_findings(
    b: _Builder, groups: Sequence[Group], attached: Mapping[int, list[ShownTable]], t: Chrome
) -> tuple[dict[int, int], dict[int, list[int]]]:
    """The findings under their severity headings: (finding slot -> number, heading slot -> its
    finding slots)."""
    ordered = [g.first for g in groups]
    numbers: dict[int, int] = {}
    headings: dict[int, list[int]] = {}
    for sev in ("P0", "P1", "P2", "P3"):
        group = [n for n, f in enumerate(ordered, 1) if f.severity.value == sev]
        if not group:
            continue
        if sev == "P2" or (sev == "P3" and not any(f.severity.value == "P2" for f in ordered)):
            b.section("non_blocking", f"### {t.non_blocking}", "")
        heading = b.add(sev, f"#### {sev}", "")
        headings[heading] = []
        for n in group:
            also = also_line(groups[n - 1], t)
            variants = finding_variants(ordered[n - 1], t, n, attached.get(n - 1, []), True, also)
            i = b.add(f"F{n}", *variants)
            numbers[i] = n
            headings[heading].append(i)
    return numbers, headings


def _add_sections(b: _Builder, review: Review, t: Chrome, loose: Sequence[ShownTable]) -> None:
    """The sections after the checklist: strengths, truth tables, tests, history, KPI."""
    m = macros("report.md.j2")
    if review.strengths:
        lines = texts_of(review.strengths, t.lang)
        b.section("strengths", tidy(str(m.strengths(lines, t, CAPS))), "")
    if loose:
        b.section("truth_tables", tidy(str(m.truth_tables(loose, t, CAPS))), "")
    if review.tests is not None:
        b.section("tests", tidy(str(m.tests(review, t))), "")
    if review.round.history and review.round.pr is not None:
        b.section("history", tidy(str(m.history(review, t))), "")
    b.add("kpi", tidy(str(m.kpi(compact_kpi(review.kpi), t))))


def folded_line(folded: Folded, t: Chrome) -> str:
    """One line: how many findings were grouped into how many, and how many P3s are not shown."""
    parts = []
    if folded.grouped:
        parts.append(str(t("folded_grouped", n=folded.grouped + folded.groups, groups=folded.groups)))
    if folded.capped:
        parts.append(str(t("folded_p3", n=folded.capped_findings, shown=CAPS.p3)))
    return str(t("folded", what=Markup(str(t.lo_sep).join(parts))))


# Of the test run's KPI, the counts (its sandbox, command and isolation have their own section above).
_TEST_KPI = ("ran", "passed", "failed", "not_run", "mutants", "killed", "survived", "exit_code", "timed_out")


# Timings and the facts cache's hits differ run to run (the comment is reproducible byte for byte); the
# suppressed findings are listed in the JSON report (their count is shown).
_NOT_IN_COMMENT = frozenset({"timings_ms", "facts_cache", "suppressed_findings"})


def compact_kpi(kpi: Kpi) -> str:
    """The KPI as JSON, one line per key, sorted: what the comment always shows (the JSON report has
    the rest). Timings and cache hits are left out (they differ run to run, and the report is byte
    for byte reproducible), and so are the test run's prose and the list of suppressed findings."""
    shown: dict[str, object] = {k: v for k, v in kpi.items() if k not in _NOT_IN_COMMENT}
    tests = shown.get("tests")
    if isinstance(tests, dict):
        shown["tests"] = {k: tests[k] for k in _TEST_KPI if k in tests}
    lines = [
        f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(', ', ': '))}"
        for k, v in sorted(shown.items())
    ]
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class _LeftOut:
    """What a choice of levels leaves out: finding references (`F3–F9`) and section keys."""

    details: str = ""
    bodies: str = ""
    gone: int = 0
    gone_refs: str = ""
    sections: tuple[str, ...] = ()  # strings.yaml keys (`lo_kpi`, ...)

    def __bool__(self) -> bool:
        return bool(self.details or self.bodies or self.gone or self.sections)


def _left_out(lay: _Layout, levels: Sequence[int]) -> _LeftOut:
    def numbers(level: int) -> list[int]:
        return [n for i, n in lay.numbers.items() if levels[i] == level and _differs(lay, i, level)]

    gone = [n for i, n in lay.numbers.items() if levels[i] == GONE]
    sections: list[str] = []
    for key, i in lay.sections.items():
        if key == "non_blocking" or not levels[i] or not _differs(lay, i, levels[i]):
            continue
        if key == "checklist":
            sections.append("lo_checklist_passed" if levels[i] == 1 else "lo_checklist")
        else:
            sections.append("lo_" + key)
    return _LeftOut(
        number_ranges(numbers(BODY)),
        number_ranges(numbers(TITLE)),
        len(gone),
        number_ranges(gone),
        tuple(sections),
    )


def _worst(lay: _Layout) -> _LeftOut:
    """An upper bound of any `_LeftOut` of this layout (its note is at least as long as any other)."""
    top = max(lay.numbers.values(), default=0)
    refs = ", ".join([f"F{top}–F{top}"] * MAX_RANGES + [sanitize.ELLIPSIS])
    keys = tuple(f"lo_{k}" for k in lay.sections if k not in ("non_blocking", "checklist"))
    return _LeftOut(refs, refs, top, refs, (*keys, "lo_checklist_passed"))


def _note(t: Chrome, within: str, lo: _LeftOut) -> str:
    """One line naming what the fitting left out, or "" when nothing was."""
    if not lo:
        return ""
    parts = []
    if lo.details:
        parts.append(t("lo_details", refs=Markup(lo.details)))
    if lo.bodies:
        parts.append(t("lo_bodies", refs=Markup(lo.bodies)))
    if lo.gone:
        parts.append(t("lo_findings", n=lo.gone, refs=Markup(lo.gone_refs)))
    parts.extend(t[key] for key in lo.sections)
    return str(t("left_out", within=Markup(within), what=Markup(str(t.lo_sep).join(parts))))


def _differs(lay: _Layout, slot: int, level: int) -> bool:
    """Whether `level` shows less than the level above it (a finding without details loses none)."""
    variants = lay.slots[slot].variants
    return variants[level] != variants[level - 1]


def _kb(size: int) -> str:
    return f"{size / 1000:.3g} KB" if size < 100_000 else f"{size // 1000} KB"


def _fit(lay: _Layout, t: Chrome, tail: list[str], budget: int, limit: int) -> tuple[list[int], str]:
    """Levels within `budget` bytes (soft steps only) and `limit` characters (hard steps too)."""

    def extra(measure: Measure, within: str) -> Extra:
        fixed = sum(measure(p) + 2 for p in tail if p)
        worst = measure(_note(t, within, _worst(lay))) + 2
        return Extra(
            lambda levels: fixed + measure(_note(t, within, _left_out(lay, levels))) + 2, fixed + worst
        )

    start = [0] * len(lay.slots)
    soft = _kb(budget)
    levels, fits = fit(lay.slots, start, lay.steps(), budget, _nbytes, extra(_nbytes, soft))
    if not fits:
        # Even the title lines exceed the budget: keep them all, plus half a budget of the most
        # important bodies and details on top (a list of 150 bare titles helps no one more).
        floor = total_size(lay.slots, levels, _nbytes) + extra(_nbytes, soft).exact(levels)
        stretched = floor + budget // 2
        soft = _kb(stretched)
        levels, _ = fit(lay.slots, start, lay.steps(), stretched, _nbytes, extra(_nbytes, soft))
    if total_size(lay.slots, levels, len) + extra(len, soft).exact(levels) <= limit:
        return levels, soft
    within = str(t.github_limit)
    levels, _ = fit(lay.slots, levels, lay.steps() + lay.hard_steps(), limit, len, extra(len, within))
    return levels, within


def render_markdown(
    review: Review, lang: str = "en", marker: str = "", *, budget: int = BUDGET, limit: int = GITHUB_LIMIT
) -> str:
    """The summary comment / report body. `marker` is the hidden state block (see report.marker).

    The comment is fitted to `budget` UTF-8 bytes and, whatever comes in, to `limit` characters;
    the marker is always kept whole at the end, and a line under the title says what was left out.
    """
    t = chrome(lang)
    tail = [tidy(str(macros("report.md.j2").footer(t, review.round.pr))), marker]
    if review.status is Status.NO_CHANGE:
        return _nothing_to_review(review, t, tail)
    lay = _layout(review, t)
    levels, within = _fit(lay, t, tail, budget, limit)
    for heading, under in lay.headings.items():
        if all(levels[i] == GONE for i in under):
            levels[heading] = 1
    if "non_blocking" in lay.sections and all(levels[i] == GONE for i in lay.rest):
        levels[lay.sections["non_blocking"]] = 1
    note = _note(t, within, _left_out(lay, levels))
    header, _, rest = joined(lay.slots, levels).partition("\n\n")
    text = "\n\n".join(p for p in (header, note, rest, *tail) if p) + "\n"
    return text if len(text) <= limit else _cut(text, limit, marker)


def _nothing_to_review(review: Review, t: Chrome, tail: list[str]) -> str:
    """An empty change: the title, one line saying so, the KPI; no findings, no checklist."""
    m = macros("report.md.j2")
    line = t("nothing_to_review", base=review.base_sha[:12], head=review.head_sha[:12])
    parts = [tidy(str(m.header(review, t))), f"_{line}_", tidy(str(m.kpi(compact_kpi(review.kpi), t))), *tail]
    return "\n\n".join(p for p in parts if p) + "\n"


def _cut(text: str, limit: int, marker: str) -> str:
    """Last resort (a marker or header too big for anything else): cut the report, keep the marker."""
    report = text[: len(text) - len(marker) - 1] if marker else text
    room = max(limit - len(marker) - 2, 0)
    cut = report[:room]
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    return (cut.rstrip("\n") + "\n\n" + marker + "\n") if marker else cut
