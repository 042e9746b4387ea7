"""Many findings, few lines: near-identical findings grouped, and the P3s the comment shows capped.

A large change can give dozens of findings of which several say the same thing about one field of
one file (a rule firing on each of four writes of `use_fp8`). The comment and the terminal show such
a group once, at its first place, with a count and the other lines; the comment shows at most
`MAX_P3` P3 findings (after grouping) and says how many it folded either way. The JSON report and
SARIF keep every finding: nothing here changes the Review.

Near-identical: same rule, same severity, same file and the same `field` (the rule's `extra`), both
open (a dismissed finding is listed with its reason, never grouped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reviewbot.model.finding import Finding

__all__ = ["Group", "Folded", "group_findings", "fold", "MAX_P3"]

MAX_P3 = 10  # P3 findings (groups count once) the comment shows; the rest are in the JSON report


@dataclass(frozen=True)
class Group:
    """One shown finding and the near-identical ones folded into it (report order)."""

    first: Finding
    others: tuple[Finding, ...] = ()

    @property
    def count(self) -> int:
        return 1 + len(self.others)

    @property
    def members(self) -> tuple[Finding, ...]:
        return (self.first, *self.others)

    def lines(self) -> list[int]:
        """The lines of the findings folded into the first, ascending, without the first's own."""
        return sorted({f.line for f in self.others} - {self.first.line})


@dataclass(frozen=True)
class Folded:
    """What the comment shows: groups in report order, and what it left out."""

    shown: list[Group]
    capped: list[Group] = field(default_factory=list)  # P3 groups past MAX_P3, not shown

    @property
    def grouped(self) -> int:
        """Findings folded into another (a group of 4 folds 3)."""
        return sum(len(g.others) for g in [*self.shown, *self.capped])

    @property
    def groups(self) -> int:
        """Groups of two or more findings."""
        return sum(1 for g in [*self.shown, *self.capped] if g.others)

    @property
    def capped_findings(self) -> int:
        return sum(g.count for g in self.capped)


def _key(f: Finding) -> tuple[str, str, str, str] | None:
    name = dict(f.extra).get("field", "")
    if f.dismissal is not None or not name:
        return None
    return (f.rule, f.severity.value, f.path, name)


def group_findings(findings: Sequence[Finding]) -> list[Group]:
    """Near-identical findings as one group at the place of the first (order otherwise kept)."""
    firsts: list[Finding] = []
    members: dict[int, list[Finding]] = {}
    by_key: dict[tuple[str, str, str, str], int] = {}
    for f in findings:
        key = _key(f)
        if key is not None and key in by_key:
            members[by_key[key]].append(f)
            continue
        if key is not None:
            by_key[key] = len(firsts)
        members[len(firsts)] = []
        firsts.append(f)
    return [Group(f, tuple(members[i])) for i, f in enumerate(firsts)]


def fold(findings: Sequence[Finding], max_p3: int = MAX_P3) -> Folded:
    """Group `findings` (report order) and keep the first `max_p3` P3 groups."""
    shown: list[Group] = []
    capped: list[Group] = []
    p3 = 0
    for g in group_findings(findings):
        if g.first.severity.value == "P3" and g.first.dismissal is None:
            p3 += 1
            if p3 > max_p3:
                capped.append(g)
                continue
        shown.append(g)
    return Folded(shown, capped)
