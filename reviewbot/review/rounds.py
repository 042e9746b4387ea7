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
    the code was deleted or moved beyond recognition, and a fix cannot be told from a move;
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
from typing import Any

from reviewbot.model.change import ChangeSet, RepoTree, SkipReason
from reviewbot.model.finding import Dismissal, Finding, normalise_anchor
from reviewbot.model.review import Review, RoundInfo, Status

__all__ = ["Delta", "PreviousRound", "apply_round", "delta_of", "OPEN_STATES"]

OPEN_STATES = frozenset({"new", "still_open"})
RECHECK_FAILED = ("recheck", "failed")


@dataclass(frozen=True)
class PreviousRound:
    """What the next round needs of the last recorded one."""

    round_index: int
    head_sha: str
    open_findings: tuple[Finding, ...]
    history: tuple[Mapping[str, Any], ...] = ()  # rows of every round up to this one, oldest first

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
    current = [
        f.with_(state="still_open" if f.fingerprint in prior_fps else "new", fixed_in=None) for f in current
    ]
    current_fps = {f.fingerprint for f in current}

    uncovered, crash_messages = _uncovered(review, change)
    fixed: list[Finding] = []
    lost: list[Finding] = []
    carried: list[Finding] = []
    moved = 0
    for old in (f for f in prior if f.fingerprint not in current_fps):
        text = head.text(old.path)
        if text is None and not head.exists(old.path) and head.tree is not None:
            successor = _successor(old, current)
            if successor is None:
                lost.append(old.with_(state="cannot_substantiate", fixed_in=None))
            else:
                current[successor] = current[successor].with_(state="still_open")
                moved += 1
            continue
        if text is None:
            carried.append(_carry(old))
        elif not head.has_anchor(old.path, old.anchor):
            fixed.append(old.with_(state="fixed", fixed_in=head_sha))
        elif old.path in uncovered or any(f"`{old.rule}`" in m for m in crash_messages):
            carried.append(_carry(old))
        else:
            fixed.append(old.with_(state="fixed", fixed_in=head_sha))

    findings = _dismissed(current + carried, prior, dismissals or {})
    since = since_previous if previous is not None and previous_is_ancestor else None
    incremental = since is not None
    touched = since.lines if since is not None else full.lines
    # A merge of the base branch into the PR changes files the PR does not touch: not its work.
    delta_files = len(since.files & (full.files | {f.path for f in prior})) if since else len(change.files)

    recheck = {
        "fixed": len(fixed),
        "still_open": sum(1 for f in current if f.state == "still_open"),
        "cannot_substantiate": len(lost),
        "fail": len(carried),
    }
    blocking = [f for f in findings if f.blocking]
    if blocking:
        status = Status.BLOCKING
    elif review.status is Status.INCOMPLETE or carried:
        status = Status.INCOMPLETE
    elif review.status is Status.NO_CHANGE:
        status = Status.NO_CHANGE
    else:
        status = Status.LGTM

    round_index = previous.round_index + 1 if previous else 1
    kpi = dict(review.kpi)
    kpi.update(
        round_index=round_index,
        full_files=len(change.files),
        delta_files=delta_files,
        new_findings=sum(1 for f in findings if f.state == "new"),
        merged=int(kpi.get("merged", 0)) + merged,
        recheck=recheck,
        blocking=len(blocking),
        dismissed=sum(1 for f in findings if f.dismissal is not None),
        blocking_on_unchanged=sum(1 for f in blocking if f.line not in touched.get(f.path, frozenset())),
    )
    if moved:
        kpi["moved"] = moved

    out = replace(review, findings=findings, status=status, kpi=kpi)
    force_pushed = previous is not None and not previous_is_ancestor
    row = {
        "round": round_index,
        "head_sha": head_sha,
        "status": status.value,
        "summary": out.summary(),
        "new": kpi["new_findings"],
        "fixed": len(fixed),
        "still_open": sum(1 for f in findings if f.state == "still_open"),
        "cannot_substantiate": len(lost),
        "full_review": not incremental,
        "force_pushed": force_pushed,
        "reviewed_at": review.reviewed_at,
    }
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
        history=[dict(r) for r in (previous.history if previous else ())] + [row],
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
    return old.with_(state="still_open", fixed_in=None, extra=extra)
