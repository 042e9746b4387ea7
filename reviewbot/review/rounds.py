"""Rounds: the findings of a new head re-checked against the previous round (pure, no I/O).

`apply_round` takes the core's Review of the new head, the PR's ChangeSet, the previous round's
open findings (from the store, or decoded from the report's hidden marker) and what changed since
the previous head, and returns the Review as round K of the PR.

How findings are matched (fingerprints do not depend on line numbers):

- A current finding is `still_open` when the previous round had an open finding with the same
  fingerprint, otherwise `new`.
- An earlier open finding that is not reported again is
  - `fixed` when its anchor text is gone from its file at the new head, or when the anchor is still
    there but its rule no longer fires (the condition no longer holds);
  - carried over to a successor when its file is gone at the new head and exactly one new finding
    has the same rule and the same normalised anchor in another file: the file was renamed or the
    code moved, so that finding is `still_open`, not new;
  - `cannot_substantiate` when its file is gone at the new head and there is no such successor:
    the code was deleted or moved beyond recognition, and a fix cannot be told from a move; or when
    its rule no longer runs (disabled, or opt-in and not enabled): nothing re-checked it;
  - a recheck `fail` when it could not be checked: the file is there but cannot be read as text,
    no head tree was given, or the anchor is still there but the analysis did not cover the file
    (skipped, a note about it, or its rule crashed). It stays open: carried into this round with
    state `still_open` and `extra` recheck=failed, and the round is INCOMPLETE unless it blocks.
- Fixed findings get `fixed_in` = the new head sha. Findings that were fixed or could not be
  substantiated are closed: they are not rechecked again (if one returns, it is new).

The history row of a round counts its findings by state after the round (`still_open` includes
findings carried over unverified); `recheck.still_open` counts only those seen again.

A round is a full review on the first round and after a force-push (the previous head is not an
ancestor of the new head); then `delta_files` = `full_files` and "lines this round touched" are
the lines the whole PR adds. Otherwise they come from the diff previous head..new head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from reviewbot.model.change import ChangeSet, RepoTree, SkipReason
from reviewbot.model.finding import Dismissal, Finding, normalise_anchor
from reviewbot.model.kpi import Recheck
from reviewbot.model.review import Review, RoundInfo, Status
from reviewbot.model.round import OPEN_STATES, FindingState, RoundRow

__all__ = ["Delta", "PreviousRound", "apply_round", "delta_of", "OPEN_STATES"]

RECHECK_FAILED = ("recheck", "failed")


@dataclass(frozen=True)
class PreviousRound:
    """What the next round needs of the last recorded one: its index, head, open findings, history.

    Made by a round's `History` (review.round): from the rounds store (store.round_history), from the
    bot's comment (report.marker.State.previous, github.history), or from a review just made
    (`of`). Read by `apply_round` only."""

    round_index: int
    head_sha: str
    open_findings: tuple[Finding, ...]
    history: tuple[RoundRow, ...] = ()  # every round up to this one, oldest first

    @classmethod
    def of(cls, review: Review) -> PreviousRound:
        """A review returned by `apply_round`, as the previous round of the next one."""
        return cls(
            round_index=review.round.round_index,
            head_sha=review.head_sha,
            open_findings=tuple(f for f in review.findings if f.state in OPEN_STATES),
            history=tuple(review.round.history),
        )


@dataclass(frozen=True)
class Delta:
    """Files and head lines changed between two commits (head paths; old paths of renames too)."""

    files: frozenset[str]
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)


def delta_of(change: ChangeSet) -> Delta:
    """The Delta a ChangeSet describes: its files and the head lines it adds."""
    files = {f.path for f in change.files} | {f.old_path for f in change.files if f.old_path}
    return Delta(frozenset(files), {f.path: frozenset(f.added_lines) for f in change.files})


class _Head:
    """The new head's files, read at most once each."""

    def __init__(self, tree: RepoTree | None) -> None:
        self.tree = tree
        self._paths: set[str] | None = None
        self._texts: dict[str, str | None] = {}
        self._normalised: dict[str, str] = {}

    def exists(self, path: str) -> bool:
        if self.tree is None:
            return False
        if self._paths is None:
            self._paths = set(self.tree.paths())
        return path in self._paths

    def text(self, path: str) -> str | None:
        if self.tree is None:
            return None
        if path not in self._texts:
            self._texts[path] = self.tree.read(path)
        return self._texts[path]

    def has_anchor(self, path: str, anchor: str) -> bool:
        if path not in self._normalised:
            # Line by line: normalise_anchor drops a trailing comment, which only works per line.
            self._normalised[path] = "".join(
                normalise_anchor(line) for line in (self.text(path) or "").splitlines()
            )
        return normalise_anchor(anchor) in self._normalised[path]


def _collapse(findings: Sequence[Finding]) -> tuple[list[Finding], int]:
    """One finding per fingerprint (the first), and how many duplicates were dropped."""
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(f.fingerprint, f)
    return list(seen.values()), len(findings) - len(seen)


def _uncovered(review: Review, change: ChangeSet) -> tuple[set[str], set[str]]:
    """Paths the analysis did not fully see, and rules that crashed."""
    paths = {f.path for f in change.files if f.skipped is not None}
    paths |= {n.path for n in review.notes if n.path}
    crashed = {n.message for n in review.notes if n.reason is SkipReason.CHECK_CRASHED}
    return paths, crashed


@dataclass
class _Rechecked:
    """The previous round's open findings not reported again, sorted by what became of them."""

    current: list[Finding]  # this round's findings; a moved finding's successor becomes still open
    fixed: list[Finding] = field(default_factory=list)
    lost: list[Finding] = field(default_factory=list)  # cannot be substantiated
    carried: list[Finding] = field(default_factory=list)  # could not be rechecked: still open
    moved: int = 0

    def add(
        self, old: Finding, head: _Head, head_sha: str, uncovered: set[str], crashed: set[str], off: set[str]
    ) -> None:
        if old.rule in off:  # its rule no longer runs here: nothing re-checked it, so it is not fixed
            self.lost.append(old.with_(state=FindingState.CANNOT_SUBSTANTIATE, fixed_in=None))
            return
        text = head.text(old.path)
        if text is None and not head.exists(old.path) and head.tree is not None:
            successor = _successor(old, self.current)
            if successor is None:
                self.lost.append(old.with_(state=FindingState.CANNOT_SUBSTANTIATE, fixed_in=None))
            else:
                self.current[successor] = self.current[successor].with_(state=FindingState.STILL_OPEN)
                self.moved += 1
            return
        if text is None:
            self.carried.append(_carry(old))
        elif not head.has_anchor(old.path, old.anchor):
            self.fixed.append(old.with_(state=FindingState.FIXED, fixed_in=head_sha))
        elif old.path in uncovered or any(f"`{old.rule}`" in m for m in crashed):
            self.carried.append(_carry(old))
        else:
            self.fixed.append(old.with_(state=FindingState.FIXED, fixed_in=head_sha))


def _state_of(f: Finding, prior: set[str]) -> FindingState:
    return FindingState.STILL_OPEN if f.fingerprint in prior else FindingState.NEW


def _count(findings: Sequence[Finding], state: FindingState) -> int:
    return sum(1 for f in findings if f.state == state)


def _scope(
    change: ChangeSet, full: Delta, prior: Sequence[Finding], since: Delta | None
) -> tuple[Mapping[str, frozenset[int]], int]:
    """The lines this round touched, and how many files it changed (`delta_files`)."""
    if since is None:
        return full.lines, len(change.files)
    # A merge of the base branch into the PR changes files the PR does not touch: not its work.
    return since.lines, len(since.files & (full.files | {f.path for f in prior}))


def _status(core: Status, blocking: bool, carried: bool) -> Status:
    """The round's verdict: blocking wins; an unverified earlier finding makes it incomplete."""
    if blocking:
        return Status.BLOCKING
    if core is Status.INCOMPLETE or carried:
        return Status.INCOMPLETE
    return Status.NO_CHANGE if core is Status.NO_CHANGE else Status.LGTM


def apply_round(
    review: Review,
    change: ChangeSet,
    previous: PreviousRound | None,
    *,
    previous_is_ancestor: bool = False,
    since_previous: Delta | None = None,
    repository: str = "",
    pr: int | None = None,
    dismissals: Mapping[str, Dismissal] | None = None,
) -> Review:
    """`review` as the next round of the PR after `previous` (None: the first round).

    `dismissals`: the PR's dismissed findings by fingerprint (from the store). A finding whose
    fingerprint is dismissed keeps its state and is shown with the dismissal, but does not block.

    `previous_is_ancestor`: the previous head is an ancestor of (or equal to) the new head.
    `since_previous`: what changed from the previous head to the new head (used when it is an
    ancestor; None there means unknown and counts as a full review).
    """
    head_sha = review.head_sha
    head = _Head(change.head_tree)
    full = delta_of(change)
    current, merged = _collapse(review.findings)

    prior = list(previous.open_findings) if previous else []
    prior_fps = {f.fingerprint for f in prior}
    current = [f.with_(state=_state_of(f, prior_fps), fixed_in=None) for f in current]
    current_fps = {f.fingerprint for f in current}

    rechecked = _Rechecked(current)
    uncovered, crash_messages = _uncovered(review, change)
    for old in (f for f in prior if f.fingerprint not in current_fps):
        rechecked.add(old, head, head_sha, uncovered, crash_messages, set(review.rules_off))
    fixed, lost, carried, moved = rechecked.fixed, rechecked.lost, rechecked.carried, rechecked.moved

    findings = _dismissed(current + carried, prior, dismissals or {})
    since = since_previous if previous is not None and previous_is_ancestor else None
    incremental = since is not None
    touched, delta_files = _scope(change, full, prior, since)

    recheck: Recheck = {
        "fixed": len(fixed),
        "still_open": _count(current, FindingState.STILL_OPEN),
        "cannot_substantiate": len(lost),
        "fail": len(carried),
    }
    blocking = [f for f in findings if f.blocking]
    status = _status(review.status, bool(blocking), bool(carried))

    round_index = previous.round_index + 1 if previous else 1
    kpi = review.kpi.copy()
    kpi["round_index"] = round_index
    kpi["full_files"] = len(change.files)
    kpi["delta_files"] = delta_files
    kpi["new_findings"] = _count(findings, FindingState.NEW)
    kpi["merged"] = kpi.get("merged", 0) + merged
    kpi["recheck"] = recheck
    kpi["blocking"] = len(blocking)
    kpi["dismissed"] = sum(1 for f in findings if f.dismissal is not None)
    kpi["blocking_on_unchanged"] = sum(1 for f in blocking if f.line not in touched.get(f.path, frozenset()))
    if moved:
        kpi["moved"] = moved

    out = replace(review, findings=findings, status=status, kpi=kpi)
    force_pushed = previous is not None and not previous_is_ancestor
    row = RoundRow(
        round=round_index,
        head_sha=head_sha,
        status=status.value,
        summary=out.summary(),
        new=kpi["new_findings"],
        fixed=len(fixed),
        still_open=_count(findings, FindingState.STILL_OPEN),
        cannot_substantiate=len(lost),
        full_review=not incremental,
        force_pushed=force_pushed,
        reviewed_at=review.reviewed_at,
    )
    out.round = RoundInfo(
        repository=repository,
        pr=pr,
        round_index=round_index,
        full_review=not incremental,
        force_pushed=force_pushed,
        previous_head=previous.head_sha if previous else None,
        fixed=fixed,
        cannot_substantiate=lost,
        recheck=recheck,
        history=[*(previous.history if previous else ()), row],
    )
    return out


def _dismissed(
    findings: list[Finding], prior: Sequence[Finding], dismissals: Mapping[str, Dismissal]
) -> list[Finding]:
    """The findings with their dismissals: the store's, else the one the previous round carried
    (a dismissal lasts while its fingerprint holds; a changed anchor is a new finding)."""
    carried = {f.fingerprint: f.dismissal for f in prior if f.dismissal is not None}
    out = []
    for f in findings:
        d = dismissals.get(f.fingerprint) or carried.get(f.fingerprint)
        out.append(f if d == f.dismissal else f.with_(dismissal=d))
    return out


def _successor(old: Finding, current: list[Finding]) -> int | None:
    """Index of the one new finding that is `old` in a renamed/moved file, if exactly one is."""
    key = normalise_anchor(old.anchor)
    hits = [
        i
        for i, f in enumerate(current)
        if f.state == "new"
        and f.rule == old.rule
        and f.path != old.path
        and normalise_anchor(f.anchor) == key
    ]
    return hits[0] if len(hits) == 1 else None


def _carry(old: Finding) -> Finding:
    extra = tuple(kv for kv in old.extra if kv[0] != RECHECK_FAILED[0]) + (RECHECK_FAILED,)
    return old.with_(state=FindingState.STILL_OPEN, fixed_in=None, extra=extra)
