"""The last two stages of a review: the verdict (status and coverage) and the KPI figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewbot.lang.facts import lang_for_path
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.kpi import Kpi, no_recheck
from reviewbot.model.review import Status

if TYPE_CHECKING:
    from reviewbot.review.pipeline import Checked
    from reviewbot.review.stages import Indexed, Parsed

__all__ = ["Verdict", "verdict_stage", "kpi_stage", "is_empty"]


@dataclass(frozen=True)
class Verdict:
    status: Status
    coverage: float


_INCOMPLETE_ALWAYS = (
    SkipReason.UNPARSABLE_DIFF,
    SkipReason.UNPARSABLE_CODE,
    SkipReason.TOO_LARGE,
    SkipReason.BAD_CONFIG,
    SkipReason.BUDGET,
)


def is_empty(change: ChangeSet, notes: list[Note]) -> bool:
    """Base and head do not differ (no file, none left out, nothing that could not be read)."""
    return not change.files and not change.files_left_out and not change.diff_truncated and not notes


def verdict_stage(change: ChangeSet, checked: Checked, notes: list[Note]) -> Verdict:
    """BLOCKING when a P0/P1 is open; INCOMPLETE when the analysis could not see everything; NO_CHANGE
    when there was nothing to review; else LGTM."""
    if is_empty(change, notes) and not checked.findings and not checked.crashed:
        return Verdict(Status.NO_CHANGE, 1.0)
    coverage = change.coverage
    unparsable = {n.path for n in notes if n.reason is SkipReason.UNPARSABLE_CODE and n.path}
    if unparsable:
        # A file with syntax errors was read, but its facts may be partial: it counts as not covered.
        total = len(change.files) + getattr(change, "files_left_out", 0)
        coverage = round(max(coverage - len(unparsable) / max(total, 1), 0.0), 4)
    if checked.crashed:
        coverage = min(coverage, round(1 - len(checked.crashed) / max(checked.ran, 1), 4))
    unseen = any(
        n.reason in _INCOMPLETE_ALWAYS
        or (n.reason in (SkipReason.NON_UTF8, SkipReason.UNAVAILABLE) and n.path and lang_for_path(n.path))
        for n in notes
    )
    if any(f.blocking for f in checked.findings):
        return Verdict(Status.BLOCKING, coverage)
    if checked.crashed or change.diff_truncated or unseen:
        return Verdict(Status.INCOMPLETE, coverage)
    return Verdict(Status.LGTM, coverage)


def kpi_stage(change: ChangeSet, parsed: Parsed, indexed: Indexed, checked: Checked, verdict: Verdict) -> Kpi:
    findings = checked.findings
    index = indexed.index
    return {
        "diff_truncated": change.diff_truncated,
        "patch_bytes": change.patch_bytes,
        "coverage": verdict.coverage,
        "full_files": len(change.files),
        "delta_files": len(change.files),
        "new_findings": len(findings),
        "merged": checked.merged,
        "recheck": no_recheck(),
        "blocking": sum(1 for f in findings if f.blocking),
        "blocking_on_unchanged": 0,
        "round_index": 1,
        "checks_run": checked.ran - len(checked.crashed),
        "checks_failed": len(checked.crashed),
        "derivations": len(parsed.derivations),
        "files": {
            "changed": len(change.files),
            "analysed": sum(1 for f in change.files if f.skipped is None),
            "skipped": sum(1 for f in change.files if f.skipped is not None),
        },
        "index": {"scanned": index.scanned_files, "parsed": index.parsed_files, "tests": index.test_files},
    }
