"""The test-execution stage: run the repository's tests on the head and on one mutant per changed branch.

    execution = execute(change, repo_path, derivations, ExecSettings(trusted=True))
    execution.summary          # {ran, passed, failed, seconds, mutants, killed, survived, not_run, ...}
    execution.results()        # the record the rules read (untested-branch, ineffective-test)
    execution.killed_by(a)     # test ids that fail with `a`'s branch reverted; [] survived; None unknown

The command comes from `.reviewbot.toml` at the base revision and runs on an export of the head in a
sandbox (see `sandbox`). Nothing here raises for a failing, hanging or missing test setup: the round
goes on and the summary and notes say what was not run and why.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.change.git import checkout
from reviewbot.errors import ReviewbotError
from reviewbot.execution.config import TestConfig, load_base_test_config
from reviewbot.execution.exec_settings import ExecSettings
from reviewbot.execution.mutant_runs import remove_run_dir, run_mutants
from reviewbot.execution.mutants import Mutant, build_mutants
from reviewbot.execution.newtests import new_tests
from reviewbot.execution.runner import run_tests
from reviewbot.execution.sandbox import detect_sandbox
from reviewbot.execution.sandbox_probe import verify
from reviewbot.execution.tables import TableRuns, run_tables
from reviewbot.execution.untrusted import clean_run, failure
from reviewbot.lang.facts import Assignment, FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.model.budget import ROUND_DEADLINE
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.messages import Message, msg
from reviewbot.model.tests import (
    ExecutionResults,
    MutantResult,
    MutantResultJson,
    NewTest,
    TestRun,
    TestRunJson,
    TestSummary,
)
from reviewbot.model.truthtable import TruthTable

__all__ = ["ExecSettings", "Execution", "ExecutionJson", "execute", "executor"]

log = logging.getLogger(__name__)


TablesHook = Callable[[ChangeSet, list[TruthTable], dict[str, FileFacts], RepoIndex], TableRuns]


class ExecutionJson(TypedDict):
    summary: TestSummary
    head: TestRunJson | None
    mutants: list[MutantResultJson]
    new_tests: list[str]  # their ids


@dataclass
class Execution:
    summary: TestSummary
    head: TestRun | None = None
    mutants: list[MutantResult] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    new_tests: list[NewTest] = field(default_factory=list)
    # Runs the round's truth tables against the code in the same sandbox, environment and budget
    # (`run_tables` below); None when the tests could not run here. The pipeline calls it once the
    # tables are built (they come after this stage).
    tables: TablesHook | None = None

    @property
    def ran(self) -> bool:
        return self.head is not None and not self.summary.get("reason_if_not_run")

    def results(self) -> ExecutionResults:
        """The record the rules read (the execution-stage rules run from the registry like all others)."""
        return ExecutionResults(
            ran=self.ran,
            command=str(self.summary.get("command") or ""),
            sandbox=str(self.summary.get("sandbox") or ""),
            head=self.head,
            mutants=tuple(self.mutants),
            new_tests=tuple(self.new_tests),
        )

    def killed_by(self, assignment: Assignment) -> list[str] | None:
        """Tests that fail with this write's branch reverted; [] when it survived; None when unknown."""
        return self.results().killed_by(assignment.path, assignment.line)

    def to_json(self) -> ExecutionJson:
        return {
            "summary": self.summary,
            "head": self.head.to_json() if self.head is not None else None,
            "mutants": [r.to_json() for r in self.mutants],
            "new_tests": [t.id for t in self.new_tests],
        }


def _summary(reason: str = "", mutants: int = 0) -> TestSummary:
    return {
        "ran": 0,
        "passed": 0,
        "failed": 0,
        "seconds": 0.0,
        "mutants": mutants,
        "killed": 0,
        "survived": 0,
        "not_run": mutants,
        "sandbox": None,
        "isolation": {},
        "reason_if_not_run": reason,
    }


def _not_run(reason: Message | str, mutants: list[Mutant]) -> Execution:
    note = Note.of(SkipReason.UNAVAILABLE, msg("note.tests-not-run", reason=reason))
    results = [MutantResult(m, "not_run", reason="tests were not run") for m in mutants]
    return Execution(summary=_summary(str(reason), len(mutants)), mutants=results, notes=[note])


def _judgeable(head: TestRun) -> str:
    """Why mutants cannot be judged against this head run ('' when they can)."""
    if head.timed_out:
        return "the tests did not finish on the unmodified head"
    if head.cases and not head.passed:
        return "no test passes on the unmodified head"
    if not head.cases and head.exit_code != 0:
        return (
            f"the test command fails on the unmodified head (exit {head.exit_code}) and writes no JUnit "
            "XML, so a failure with a mutant would prove nothing"
        )
    return ""


def _finish(
    change: ChangeSet,
    cfg: TestConfig,
    kind: str,
    head: TestRun,
    head_limit: float,
    results: list[MutantResult],
    started: float,
    settings: ExecSettings,
) -> Execution:
    notes: list[Note] = []
    if head.timed_out:
        notes.append(
            Note.of(
                SkipReason.UNAVAILABLE,
                msg("note.test-timeout", command=cfg.command, seconds=f"{head_limit:g}"),
            )
        )
    for r in results:
        if not r.has_verdict:
            notes.append(
                Note.of(
                    SkipReason.UNAVAILABLE,
                    msg(
                        "note.mutant-no-verdict",
                        id=r.mutant.id,
                        description=r.mutant.description,
                        reason=r.reason,
                    ),
                    r.mutant.path,
                )
            )
    if kind == "subprocess":
        notes.append(Note.of(SkipReason.UNAVAILABLE, msg("note.no-sandbox")))
    notes.extend(
        Note.of(SkipReason.UNAVAILABLE, msg("note.test-run", label=head.label, note=n)) for n in head.notes
    )
    added = new_tests(change, head) if head.cases else []
    per_test = bool(head.cases)
    summary: TestSummary = {
        "ran": len(head.cases) if per_test else (0 if head.timed_out else 1),
        "passed": len(head.passed) if per_test else int(head.exit_code == 0),
        "failed": len(head.failed) if per_test else int(head.exit_code not in (0, None)),
        "seconds": round(time.monotonic() - started, 1),
        "mutants": len(results),
        "killed": sum(r.status == "killed" for r in results),
        "survived": sum(r.status == "survived" for r in results),
        "not_run": sum(not r.has_verdict for r in results),
        "sandbox": kind,
        "isolation": verify(kind, limits=settings.limits),  # what a probe saw inside, not what we meant
        "reason_if_not_run": f"the test command did not finish within {head_limit:g} s and was killed"
        if head.timed_out
        else "",
        "head_seconds": head.seconds,
        "command": cfg.command,
        "per_test": per_test,
        "exit_code": head.exit_code,
        "timed_out": head.timed_out,
        "time_budget_s": settings.time_budget_s,
        # The command failed on the unmodified head: its exit code and last lines say why (None: passed).
        "head_failure": failure(cfg.command, head),
    }
    return Execution(summary, head, results, notes, added)


def _no_sandbox_reason(settings: ExecSettings, kind: str) -> str:
    allowed = ", ".join(settings.allowed_sandboxes)
    if settings.sandbox is not None:
        return f"the sandbox `{kind}` was asked for but only {allowed} may run these tests"
    if "subprocess" not in settings.allowed_sandboxes:
        return (
            f"no confining sandbox ({allowed}) works on this machine, and code from a pull request "
            "never runs unconfined; install bubblewrap or enable unprivileged user namespaces"
        )
    return f"none of the allowed sandboxes ({allowed}) works on this machine"


def _tables_hook(
    repo_path: Path, cfg: TestConfig, kind: str, timeout: float, settings: ExecSettings
) -> TablesHook:
    """Run truth tables with what the test stage used: its sandbox, limits, `[tests]` env and timeout."""

    def run(
        change: ChangeSet, tables: list[TruthTable], head_facts: dict[str, FileFacts], index: RepoIndex
    ) -> TableRuns:
        scratch = Path(tempfile.mkdtemp(prefix="reviewbot-tables-", dir=settings.scratch_dir)).resolve()
        try:
            return run_tables(
                change,
                repo_path,
                tables,
                head_facts,
                index,
                cfg=cfg,
                sandbox=kind,
                limits=settings.limits,
                timeout=timeout,
                scratch=scratch,
            )
        finally:
            if not settings.keep_runs:
                remove_run_dir(scratch)

    return run


def execute(
    change: ChangeSet, repo_path: Path, derivations: list[ChangedDerivation], settings: ExecSettings
) -> Execution:
    """Run the tests and the mutants of `derivations`; never raises for problems of the tests themselves."""
    started = time.monotonic()
    # The stage's own budget, and no later than the round's (set by the pipeline, model/budget.py).
    deadline = min(started + settings.time_budget_s, ROUND_DEADLINE.get() or float("inf"))
    mutants = build_mutants(change, derivations, settings.max_mutants)
    if not settings.run_tests:
        return _not_run(msg("note.tests-not-run.off"), mutants)
    if not settings.trusted:
        return _not_run(settings.not_trusted_reason, mutants)
    try:
        if settings.repo_config is not None:
            cfg = settings.repo_config.tests
        else:
            cfg = load_base_test_config(change, repo_path)
    except ReviewbotError as exc:
        return _not_run(str(exc), mutants)
    if cfg is None:
        return _not_run(msg("note.tests-not-run.no-command"), mutants)
    refused = [n for n in cfg.env if settings.env_allowed is not None and n not in settings.env_allowed]
    if refused:
        cfg = cfg.model_copy(update={"env": tuple(n for n in cfg.env if n not in refused)})
    # Resolved: JUnit files are read only along a path without symbolic links (junit.open_inside), so
    # a temp dir reached through a link (/tmp -> /private/tmp) must not count as one.
    scratch = Path(tempfile.mkdtemp(prefix="reviewbot-tests-", dir=settings.scratch_dir)).resolve()
    try:
        pristine = scratch / "head"
        try:
            checkout(repo_path, change.head_sha, pristine)
        except ReviewbotError as exc:
            return _not_run(f"could not export the head {change.head_sha[:12]}: {exc}", mutants)
        kind = settings.sandbox or detect_sandbox(scratch / "probe", settings.allowed_sandboxes)
        if kind not in settings.allowed_sandboxes:
            return _not_run(_no_sandbox_reason(settings, kind), mutants)
        timeout = min(cfg.timeout, settings.max_timeout_s or cfg.timeout)
        head_limit = min(timeout, max(1.0, deadline - time.monotonic()))
        head = clean_run(
            run_tests(
                cfg,
                pristine,
                scratch / "run-head",
                label="head",
                sandbox=kind,
                limits=settings.limits,
                timeout=head_limit,
            )
        )
        why = _judgeable(head)
        if why:
            results = [MutantResult(m, "not_run", reason=why) for m in mutants]
        else:
            results = run_mutants(mutants, cfg, pristine, scratch, kind, settings, timeout, deadline, head)
        log.info("tests: head %s in %.1fs, %d mutant(s)", head.exit_code, head.seconds, len(results))
        done = _finish(change, cfg, kind, head, head_limit, results, started, settings)
        done.tables = _tables_hook(repo_path, cfg, kind, timeout, settings)
        if refused:
            why = (
                f"[tests] env names not on this service's list (tests_env), not passed: {', '.join(refused)}"
            )
            done.notes.append(Note.of(SkipReason.UNAVAILABLE, msg("note.test-run", label="env", note=why)))
        return done
    finally:
        if not settings.keep_runs:
            remove_run_dir(scratch)


def executor(
    repo_path: Path, settings: ExecSettings
) -> Callable[[ChangeSet, list[ChangedDerivation]], Execution]:
    """The `ReviewSettings.execute` hook of the pipeline for one repository."""

    def run(change: ChangeSet, derivations: list[ChangedDerivation]) -> Execution:
        return execute(change, repo_path, derivations, settings)

    return run
