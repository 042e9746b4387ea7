"""One round of a pull request, whoever runs it: code -> review -> previous round -> sink.

`run_round(source, history, sink)` is the round's sequence, written once. The command line
(`runner.run_local_round`), the Action and the App worker (`github.round.run_pr_round`) differ only
in what they pass:

- a `CodeSource` gives the change and the review settings that go with it: a local clone, the
  cached clone of a GitHub PR, or the API's patches when git cannot get the code;
- a `History` gives the round this one continues from and the PR's dismissals: the rounds store,
  or the state in the bot's own comment;
- a `Sink` renders the round's report (once per language) and keeps or publishes it: the store,
  or the GitHub publication plan, posted. Whatever must be in the report (the API calls a GitHub
  round makes) is known to the sink before it renders.

Nothing here renders, stores or talks to GitHub: those layers sit above this one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol, TypeVar

from reviewbot.change.git import diff_patch_chunks, is_ancestor
from reviewbot.change.patch import parse_section
from reviewbot.errors import EnvironmentProblem
from reviewbot.model.change import ChangeSet, SkipReason
from reviewbot.model.finding import Dismissal
from reviewbot.model.review import Review, Status
from reviewbot.review.pipeline import ReviewSettings, review_change
from reviewbot.review.rounds import Delta, PreviousRound, apply_round

__all__ = [
    "Code",
    "CodeOrigin",
    "CodeSource",
    "History",
    "Reviewed",
    "Sink",
    "run_round",
    "continue_round",
    "delta_between",
]

T_co = TypeVar("T_co", covariant=True)


class CodeOrigin(StrEnum):
    """Where a round's change came from (the KPI's `code_source`)."""

    GIT = "git"  # a clone: whole files, the repository for the index, the previous head to diff
    API = "api"  # GitHub's patches only (git could not get the code)


@dataclass(frozen=True)
class Code:
    """The change a round reviews and where it came from."""

    change: ChangeSet
    repo_path: Path | None  # the clone; None when the change came from the API (no previous head to diff)
    source: CodeOrigin = CodeOrigin.GIT
    partial_clone: bool = False
    fetch_ms: float = 0.0  # getting the code (a GitHub round's fetch; a local round times its own)


class CodeSource(Protocol):
    def load(self) -> Code:
        """The change to review (its trees stay open until the round closes them)."""
        ...

    def settings(self, code: Code) -> ReviewSettings:
        """The core's settings for `code` (its base revision's `.reviewbot.toml`, the caller's options)."""
        ...


class History(Protocol):
    @property
    def repository(self) -> str:
        """How the rounds name the repository (`owner/name`, else a path)."""
        ...

    @property
    def pr(self) -> int | None:
        """The pull request (None: a one-off review with no rounds)."""
        ...

    def previous(self, head_sha: str) -> PreviousRound | None:
        """The round a review of `head_sha` continues from (None: it is round 1)."""
        ...

    def dismissals(self) -> Mapping[str, Dismissal]:
        """The PR's dismissed findings by fingerprint."""
        ...


@dataclass(frozen=True)
class Reviewed:
    """A round reviewed and continued from its history, not yet rendered."""

    review: Review
    code: Code  # its change's trees are closed; its files, hunks and notes remain
    lang: str  # the report's language, as the source's settings chose it
    rounds_ms: float  # time spent continuing the PR's rounds (history, delta, apply)


class Sink(Protocol[T_co]):
    def publish(self, reviewed: Reviewed) -> T_co:
        """Render the round's report and keep or publish it; what came of it."""
        ...


def _is_ancestor(repo: Path, a: str, b: str) -> bool:
    try:
        return is_ancestor(repo, a, b)
    except EnvironmentProblem:
        # The previous head is not in this clone any more (force-pushed away and pruned).
        return False


def delta_between(repo: Path, a: str, b: str) -> Delta:
    """Files and head lines changed from commit a to commit b (no file texts are read)."""
    files: set[str] = set()
    lines: dict[str, frozenset[int]] = {}
    for raw in diff_patch_chunks(repo, a, b):
        section = parse_section(raw.decode("utf-8", "surrogateescape"))
        if section.path is None:
            continue
        files.add(section.path)
        if section.old_path:
            files.add(section.old_path)
        lines[section.path] = frozenset(n for h in section.hunks for n, _ in h.added)
    return Delta(frozenset(files), lines)


def continue_round(
    repo: Path | None,
    change: ChangeSet,
    review: Review,
    previous: PreviousRound | None,
    *,
    repository: str,
    pr: int | None,
    dismissals: Mapping[str, Dismissal] | None = None,
) -> Review:
    """The core's `review` made the round after `previous` (None: the first round); `dismissals`:
    the PR's dismissed findings by fingerprint. Without a clone (`repo` None) the previous head
    cannot be compared, so the round is a full review."""
    ancestor = False
    since: Delta | None = None
    if previous is not None and repo is not None:
        ancestor = _is_ancestor(repo, previous.head_sha, review.head_sha)
        if ancestor:
            since = delta_between(repo, previous.head_sha, review.head_sha)
    return apply_round(
        review,
        change,
        previous,
        previous_is_ancestor=ancestor,
        since_previous=since,
        repository=repository,
        pr=pr,
        dismissals=dismissals,
    )


def run_round(source: CodeSource, history: History, sink: Sink[T_co]) -> T_co:
    """Review the source's change as the next round of the history's PR and hand it to the sink."""
    code = source.load()
    try:
        settings = source.settings(code)
        review = review_change(code.change, settings)
        clock = time.perf_counter()
        previous = history.previous(review.head_sha)
        dismissed = history.dismissals()
        review = continue_round(
            code.repo_path,
            code.change,
            review,
            previous,
            repository=history.repository,
            pr=history.pr,
            dismissals=dismissed,
        )
        rounds_ms = (time.perf_counter() - clock) * 1000
    finally:
        code.change.close()
    if any(n.reason is SkipReason.BAD_CONFIG for n in review.notes):
        # The repository's .reviewbot.toml was refused: whatever was found, no verdict (neutral).
        review = replace(review, status=Status.INCOMPLETE)
    return sink.publish(Reviewed(review, code, settings.lang, rounds_ms))
