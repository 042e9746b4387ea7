"""The check plug-in point: a Check is facts in, findings out (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from reviewbot.change.model import ChangeSet
from reviewbot.lang.calls import CallGraph
from reviewbot.lang.facts import Assignment, FileFacts, PredicateUse
from reviewbot.lang.index import RepoIndex
from reviewbot.review.finding import Finding, Severity

__all__ = ["Check", "CheckContext", "ChangedDerivation"]


@dataclass(frozen=True)
class ChangedDerivation:
    """A head assignment that the change added or whose guard/value it changed."""

    head: Assignment
    base: tuple[Assignment, ...]  # base writes of the same target in the same function (may be empty)
    new_branch: bool  # the guarded branch did not exist at base (new `if` or new assignment)


@dataclass
class CheckContext:
    change: ChangeSet
    base_facts: dict[str, FileFacts]  # by base path, only changed files that parsed
    head_facts: dict[str, FileFacts]  # by head path, only changed files that parsed
    index: RepoIndex  # head revision, whole repository
    derivations: list[ChangedDerivation] = field(default_factory=list)
    added_predicates: list[PredicateUse] = field(default_factory=list)
    settings: dict[str, object] = field(default_factory=dict)
    test_files: list[str] = field(default_factory=list)  # test files in the head tree (index.is_test_path)
    # Set when the project's tests were executed against mutants: the test ids that fail when this
    # derivation's branch is reverted (empty list: the mutant survived). None: tests were not run.
    killed_by: Callable[[Assignment], list[str] | None] | None = None
    truth_tables: list[dict[str, Any]] = field(default_factory=list)
    # Full facts and call sites of the files behind the read sites of the derived fields, for following
    # gated code into the functions it calls (reviewbot.lang.follow). None: not built this round.
    calls: CallGraph | None = None


class Check(Protocol):
    """One documented rule. The module docstring holds the doc (What it does / Why is this bad? / ...)."""

    id: str
    severity: Severity
    summary: str

    def run(self, ctx: CheckContext) -> Iterable[Finding]: ...
