"""Inline suppressions: `# reviewbot: ignore[rule-id] reason` / `// reviewbot: ignore[rule-id] reason`.

A suppression on a finding's line, or on the line above it, that names the finding's rule and gives a
reason takes the finding out of the review (the KPI counts it as `suppressed`, the JSON report lists
it under `kpi.suppressed_findings`). One without a reason suppresses nothing and is itself a P3
finding (checks/suppression_without_reason.py). Suppressions are read from the head revision.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewbot.checks.suppression_without_reason import Suppression, parse_suppression
from reviewbot.model.change import ChangeSet
from reviewbot.model.finding import Finding
from reviewbot.model.kpi import SuppressedJson

__all__ = ["Suppressed", "apply_suppressions"]


@dataclass(frozen=True)
class Suppressed:
    finding: Finding
    line: int  # where the suppression comment is
    reason: str

    def to_json(self) -> SuppressedJson:
        f = self.finding
        return {
            "rule": f.rule,
            "severity": f.severity.value,
            "path": f.path,
            "line": f.line,
            "fingerprint": f.fingerprint,
            "suppressed_at": self.line,
            "reason": self.reason,
        }


class _Lines:
    """Head lines by path: the changed files' texts, else the head tree's (read once each)."""

    def __init__(self, change: ChangeSet) -> None:
        self._change = change
        self._texts = {f.path: f.head_text for f in change.files}
        self._cache: dict[str, list[str]] = {}

    def get(self, path: str, line: int) -> str:
        if path not in self._cache:
            text = self._texts.get(path)
            if text is None and path not in self._texts and self._change.head_tree is not None:
                text = self._change.head_tree.read(path)
            self._cache[path] = (text or "").splitlines()
        lines = self._cache[path]
        return lines[line - 1] if 1 <= line <= len(lines) else ""


def _applies(found: Suppression | None, rule: str) -> bool:
    return found is not None and bool(found.reason) and rule in found.rules


def apply_suppressions(change: ChangeSet, findings: list[Finding]) -> tuple[list[Finding], list[Suppressed]]:
    """(the findings no suppression with a reason covers, the suppressed ones)."""
    lines = _Lines(change)
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    for f in findings:
        at = next(
            (
                n
                for n in (f.line, f.line - 1)
                if n >= 1 and _applies(parse_suppression(lines.get(f.path, n)), f.rule)
            ),
            None,
        )
        if at is None:
            kept.append(f)
            continue
        found = parse_suppression(lines.get(f.path, at))
        suppressed.append(Suppressed(f, at, found.reason if found else ""))
    return kept, suppressed
