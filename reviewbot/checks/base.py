"""The check plug-in point: a Check is facts in, findings out (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.lang.calls import CallGraph
from reviewbot.lang.facts import FileFacts, PredicateUse
from reviewbot.lang.index import RepoIndex, TestRef
from reviewbot.model.change import ChangeSet
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.tests import ExecutionResults
from reviewbot.model.truthtable import TruthTable

__all__ = ["Check", "CheckContext"]


@dataclass
class CheckContext:
    change: ChangeSet
    base_facts: dict[str, FileFacts]  # by base path, only changed files that parsed
    head_facts: dict[str, FileFacts]  # by head path, only changed files that parsed
    index: RepoIndex  # head revision, whole repository
    derivations: list[ChangedDerivation] = field(default_factory=list)
    added_predicates: list[PredicateUse] = field(default_factory=list)
    test_files: list[str] = field(default_factory=list)  # test files in the head tree (index.is_test_path)
    # Set by the test stage before the rules run: the head run, each mutant's verdict, the new tests.
    # None: the test stage was not part of this round.
    execution: ExecutionResults | None = None
    truth_tables: list[TruthTable] = field(default_factory=list)
    # Full facts and call sites of the files behind the read sites of the derived fields, for following
    # gated code into the functions it calls (reviewbot.lang.follow). None: not built this round.
    calls: CallGraph | None = None
    # Documentation lines (README, *.md, *.rst) that mention the environment variables the change reads
    # or writes, by variable (see analysis.history); empty when not searched.
    docs: dict[str, tuple[TestRef, ...]] = field(default_factory=dict)


class Check(Protocol):
    """One documented rule. The module docstring holds the doc (What it does / Why is this bad? / ...)."""

    id: str
    severity: Severity
    summary: str

    def run(self, ctx: CheckContext) -> Iterable[Finding]: ...
