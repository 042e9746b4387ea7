"""The round's budget as the pipeline applies it (the bounds themselves: `reviewbot.model.budget`).

Before parsing, `limit_files` leaves out the changed files past `files` and every file too large or
too deeply nested to parse (`parse_bytes`, `parse_depth`): they are marked skipped (`budget`), so
coverage counts them and round tracking treats them as unseen. `within_terms` leaves out the changed writes
whose guards have more terms than `condition_terms` (truth tables, test sketches and mutants grow
with them); `for_mutants` gives the test stage at most `mutants` derivations, one per changed line.
`Meter` watches wall time and memory between stages: past either, the stages that are left are
skipped (the rules still run on what was gathered) and a note says which.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.change.notes import human_size
from reviewbot.change.select import rank
from reviewbot.lang.facts import lang_for_path
from reviewbot.model.budget import ROUND_DEADLINE, RoundBudget, rss_mb
from reviewbot.model.change import ChangedFile, ChangeSet, Note, SkipReason
from reviewbot.model.messages import Message, listing, msg

__all__ = [
    "Meter",
    "ROUND_DEADLINE",
    "limit_files",
    "leave_out_from",
    "bracket_depth",
    "within_terms",
    "for_mutants",
    "skipped_checks",
]

_BRACKETS = re.compile(r"[^()\[\]{}]+")
_OPEN = frozenset("([{")


class Meter:
    """Wall time since the round started and the process's memory, against the budget."""

    def __init__(
        self,
        budget: RoundBudget,
        *,
        clock: Callable[[], float] = time.monotonic,
        memory: Callable[[], float] = rss_mb,
    ) -> None:
        self.budget = budget
        self._clock = clock
        self._memory = memory
        self.deadline = clock() + budget.seconds
        self.peak_mb = 0.0

    def over(self) -> Message | None:
        """None while within the budget; else the sentence's head naming the bound that was passed
        (completed by `note` with what was skipped)."""
        if self._clock() > self.deadline:
            return msg("note.budget.time", limit=f"{self.budget.seconds:g} s", skipped="")
        used = self._memory()
        self.peak_mb = max(self.peak_mb, used)
        if used > self.budget.memory_mb:
            return msg(
                "note.budget.memory",
                used=f"{used:,.0f} MiB",
                limit=f"{self.budget.memory_mb:,} MiB",
                skipped="",
            )
        return None

    def note(self, why: Message, skipped: Message) -> Note:
        """One note: the bound that was passed (`why`, from `over`) and what was skipped for it."""
        args = dict(why.args)
        args["skipped"] = skipped
        return Note.of(SkipReason.BUDGET, msg(why.key, **args))

    def remaining(self) -> float:
        return max(self.deadline - self._clock(), 0.0)


def bracket_depth(text: str) -> int:
    """The deepest nesting of (), [] and {} in `text` (brackets in strings and comments count too:
    a bound, not a parse)."""
    depth = deepest = 0
    for c in _BRACKETS.sub("", text):
        if c in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


def _order(f: ChangedFile) -> tuple[int, int]:
    # Within the file budget, the files the analysis reads come first: sources (config and derivation
    # candidates first: a config-like name, or a changed line writing a member or a guard), tests,
    # generated and vendored sources, then the rest (reviewbot.change.select): padding a PR
    # with files that sort first must not push its real change out of the budget.
    return rank(f.path, (text for h in f.hunks for lines in (h.added, h.removed) for _, text in lines))


def _parse_problem(f: ChangedFile, budget: RoundBudget) -> Message | None:
    for text in (f.head_text, f.base_text):
        if text is None or lang_for_path(f.path) is None:
            continue
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > budget.parse_bytes:
            return msg(
                "note.budget.parse-size",
                path=f.path,
                size=human_size(size),
                limit=human_size(budget.parse_bytes),
            )
        depth = bracket_depth(text)
        if depth > budget.parse_depth:
            return msg("note.budget.parse-depth", path=f.path, depth=f"{depth:,}", limit=budget.parse_depth)
    return None


def _left_out(f: ChangedFile) -> ChangedFile:
    # The texts go too: a file the round does not analyse must not hold memory either.
    return replace(f, skipped=SkipReason.BUDGET, base_text=None, head_text=None, hunks=())


def limit_files(change: ChangeSet, budget: RoundBudget) -> list[Note]:
    """Mark, in `change.files`, the files this round leaves out; return the notes saying so."""
    notes: list[Note] = []
    analysable = [i for i, f in enumerate(change.files) if f.skipped is None]
    if len(analysable) > budget.files:
        ranked = sorted(analysable, key=lambda i: (_order(change.files[i]), i))
        out = sorted(ranked[budget.files :])
        first = min(out, key=lambda i: (_order(change.files[i]), change.files[i].path))
        notes.append(
            Note.of(
                SkipReason.BUDGET,
                msg(
                    "note.budget.files",
                    limit=f"{budget.files:,}",
                    left=f"{len(out) + change.files_left_out:,}",
                    total=f"{len(change.files) + change.files_left_out:,}",
                    path=change.files[first].path,
                ),
            )
        )
        for i in out:
            change.files[i] = _left_out(change.files[i])
    for i, f in enumerate(change.files):
        if f.skipped is not None:
            continue
        problem = _parse_problem(f, budget)
        if problem is not None:
            notes.append(Note.of(SkipReason.BUDGET, problem, f.path))
            change.files[i] = _left_out(f)
    return notes


def leave_out_from(change: ChangeSet, start: int) -> Message:
    """Leave out the files from `start` on that were still to be analysed (a stage ran out of
    budget); what to say about them."""
    left = [i for i in range(start, len(change.files)) if change.files[i].skipped is None]
    for i in left:
        change.files[i] = _left_out(change.files[i])
    first = change.files[left[0]].path if left else ""
    return msg("note.budget.skipped.parse", count=f"{len(left):,}", path=first)


def _terms(d: ChangedDerivation) -> int:
    guards = [d.head.guard, *(b.guard for b in d.base)]
    return max((g.size() for g in guards if g is not None), default=0)


def within_terms(
    derivations: Sequence[ChangedDerivation], budget: RoundBudget
) -> tuple[list[ChangedDerivation], list[Note]]:
    """The derivations whose guards are small enough to analyse, and a note for each one that is not."""
    kept: list[ChangedDerivation] = []
    notes: list[Note] = []
    for d in derivations:
        terms = _terms(d)
        if terms <= budget.condition_terms:
            kept.append(d)
            continue
        text = msg(
            "note.budget.terms",
            path=d.head.path,
            line=d.head.line,
            target=d.head.target,
            terms=f"{terms:,}",
            limit=budget.condition_terms,
        )
        notes.append(Note.of(SkipReason.BUDGET, text, d.head.path))
    return kept, notes


def for_mutants(
    derivations: Sequence[ChangedDerivation], budget: RoundBudget
) -> tuple[list[ChangedDerivation], list[Note]]:
    """At most `budget.mutants` derivations, one per changed line, in file/line order; a note
    naming how many changed lines get no mutant."""
    seen: set[tuple[str, int]] = set()
    unique: list[ChangedDerivation] = []
    for d in sorted(derivations, key=lambda d: (d.head.path, d.head.line)):
        key = (d.head.path, d.head.line)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    if len(unique) <= budget.mutants:
        return list(derivations), []
    # Every write on a kept line goes (one mutant may revert them together); build_mutants makes
    # no second mutant for a line.
    kept = {(d.head.path, d.head.line) for d in unique[: budget.mutants]}
    first = unique[budget.mutants].head
    note = Note.of(
        SkipReason.BUDGET,
        msg(
            "note.budget.mutants",
            left=f"{len(unique) - budget.mutants:,}",
            limit=f"{budget.mutants:,}",
            place=f"{first.path}:{first.line}",
        ),
    )
    return [d for d in derivations if (d.head.path, d.head.line) in kept], [note]


def skipped_checks(ids: Sequence[str]) -> Message:
    """What a check stage cut short by the budget left out."""
    return msg("note.budget.skipped.checks", ids=listing(list(ids), 5))
