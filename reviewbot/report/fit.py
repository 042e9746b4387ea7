"""Fit a report to a size budget: pure arithmetic over the pre-rendered variants of each part.

A report is a sequence of slots; each slot offers its variants from the richest to the poorest (the
poorest is often ""). A degradation plan is an ordered list of steps (slot, level): take slot `slot`
down to at least variant `level`. `fit` applies the steps in order until the joined report, plus
whatever `extra` says the current choice costs (the one-line note of what was left out), is within
the budget, then gives back what still fits, most important first. Sizes are summed, never
re-rendered, so fitting is linear in the number of steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Slot", "Step", "Extra", "Measure", "fit", "joined", "total_size", "SEPARATOR"]

SEPARATOR = "\n\n"
_SLACK = 64  # how much giving one part back may lengthen the extra (the note of what was left out)


@dataclass(frozen=True)
class Slot:
    """One part of the report and its variants, richest first."""

    key: str
    variants: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.variants:
            raise ValueError(f"slot {self.key} has no variant")


@dataclass(frozen=True)
class Step:
    slot: int
    level: int


Measure = Callable[[str], int]


@dataclass(frozen=True)
class Extra:
    """What a choice costs beyond its slots (the note of what was left out, the footer, the marker):
    `exact(levels)`, and `most`, a bound on it that spares computing `exact` far from the budget."""

    exact: Callable[[list[int]], int]
    most: int

    def fits(self, total: int, levels: list[int], budget: int) -> bool:
        return total + self.most <= budget or (total <= budget and total + self.exact(levels) <= budget)


def _cost(text: str, measure: Measure) -> int:
    return measure(text) + measure(SEPARATOR) if text else 0


def total_size(slots: Sequence[Slot], levels: Sequence[int], measure: Measure) -> int:
    """An upper bound of the size of `joined(slots, levels)` (one separator per part)."""
    return sum(_cost(s.variants[lv], measure) for s, lv in zip(slots, levels, strict=True))


def fit(
    slots: Sequence[Slot],
    levels: list[int],
    steps: Sequence[Step],
    budget: int,
    measure: Measure,
    extra: Extra,
) -> tuple[list[int], bool]:
    """Levels after applying `steps` in order until the report fits `budget`; (levels, fits).

    `levels` is the starting choice (not modified). `extra` is the size of anything added for a choice
    beyond the slots (it may grow as steps apply, so it is asked again at each check).
    Once it fits, the steps taken are undone, most important (last) first, wherever the room left
    allows: a short test sketch of a P1 comes back when dropping later bodies made room for it.
    """
    levels = list(levels)
    total = total_size(slots, levels, measure)
    if extra.fits(total, levels, budget):
        return levels, True
    taken: list[tuple[int, int]] = []  # (slot, level before the step)
    fits = False
    for step in steps:
        slot = slots[step.slot]
        level = min(step.level, len(slot.variants) - 1)
        if levels[step.slot] >= level:
            continue
        total += _delta(slot, levels[step.slot], level, measure)
        taken.append((step.slot, levels[step.slot]))
        levels[step.slot] = level
        if extra.fits(total, levels, budget):
            fits = True
            break
    if not fits:
        return levels, extra.fits(total, levels, budget)
    current = extra.exact(levels)
    for index, before in reversed(taken):
        delta = _delta(slots[index], levels[index], before, measure)
        # Giving a part back changes the extra (the note) by little: only a likely fit is computed.
        if total + delta + current + _SLACK > budget:
            continue
        now = levels[index]
        levels[index] = before
        after = extra.exact(levels)
        if total + delta + after <= budget:
            total, current = total + delta, after
        else:
            levels[index] = now
    return levels, True


def _delta(slot: Slot, old: int, new: int, measure: Measure) -> int:
    return _cost(slot.variants[new], measure) - _cost(slot.variants[old], measure)


def joined(slots: Sequence[Slot], levels: Sequence[int]) -> str:
    """The report for a choice of levels: the chosen non-empty variants joined by blank lines."""
    parts = [s.variants[lv] for s, lv in zip(slots, levels, strict=True)]
    return SEPARATOR.join(p for p in parts if p)
