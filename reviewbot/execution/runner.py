"""One test run: copy the head checkout, apply a mutant, run the command in the sandbox, read JUnit
(the files the command writes and those reviewbot asks pytest, GoogleTest and ctest for: `pertest`)."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from reviewbot.execution import reaper
from reviewbot.execution.config import TestConfig
from reviewbot.execution.junit import TestCase, parse_junit
from reviewbot.execution.mutants import Mutant
from reviewbot.execution.pertest import per_test_env, report_files
from reviewbot.execution.sandbox import Limits, run_sandboxed
from reviewbot.model.tests import TestRun

__all__ = ["run_tests"]


def _snapshot(workspace: Path, pattern: str) -> dict[Path, int]:
    out: dict[Path, int] = {}
    for p in workspace.glob(pattern):
        try:
            if p.is_file() and not p.is_symlink():
                out[p] = p.stat().st_mtime_ns
        except OSError:
            continue
    return out


def _written_junit(workspace: Path, pattern: str, before: dict[Path, int]) -> list[Path]:
    """JUnit candidates the run itself wrote: a report committed in the tree must not count."""
    after = _snapshot(workspace, pattern)
    return sorted(p for p, mtime in after.items() if before.get(p) != mtime)


def _relative_file(case: TestCase, workspace: Path) -> TestCase:
    """GoogleTest writes the source file as compiled, often absolute in the run's copy: make it a
    repository path so the case is attributed to its test file (`junit.belongs_to`)."""
    prefix = f"{workspace}{os.sep}"
    if case.file.startswith(prefix):
        return replace(case, file=case.file[len(prefix) :])
    return case


def run_tests(
    cfg: TestConfig,
    pristine: Path,
    run_root: Path,
    *,
    label: str,
    sandbox: str,
    limits: Limits,
    timeout: float,
    mutant: Mutant | None = None,
) -> TestRun:
    """Run the configured command on a fresh copy of `pristine` (with `mutant` applied) under `run_root`."""
    reaper.check_open()  # reviewbot is stopping: do not copy a tree for a run that will not start
    run_root.mkdir(parents=True, exist_ok=False)
    workspace = run_root / "ws"
    shutil.copytree(pristine, workspace, symlinks=True)
    if mutant is not None:
        target = workspace / mutant.path
        # Replace rather than write in place: the copy may share nothing with the pristine tree, but a
        # hard-linked or read-only file must not block the mutation.
        target.unlink(missing_ok=True)
        target.write_text(mutant.text, encoding="utf-8")
    before = _snapshot(workspace, cfg.junit)  # copytree keeps mtimes, so a rewrite shows
    # pytest, GoogleTest and ctest are asked for JUnit XML in the run directory (`pertest`).
    asked = per_test_env(run_root)
    res = run_sandboxed(
        cfg.command,
        run_root,
        workspace,
        timeout=timeout,
        sandbox=sandbox,
        limits=limits,
        allow_env=cfg.env,  # the base revision's [tests] env: names beyond the sandbox's allow-list
        set_env=asked,
    )
    cases: dict[str, TestCase] = {}
    problems: list[str] = []
    files: list[Path] = []
    ours: list[Path] = []
    if not res.timed_out:
        files = _written_junit(workspace, cfg.junit, before)
        cases, problems = parse_junit(files, root=workspace)  # a report must lie inside the run
        ours = report_files(run_root)
        extra, more = parse_junit(ours, root=run_root)
        problems += more
        for case_id, case in extra.items():
            prior = cases.get(case_id)
            if prior is None or (case.failed and not prior.failed):
                cases[case_id] = _relative_file(case, workspace)
    return TestRun(
        label=label,
        exit_code=res.exit_code,
        timed_out=res.timed_out,
        seconds=res.seconds,
        cases=cases,
        junit_files=[str(p.relative_to(workspace)) for p in files]
        + [str(p.relative_to(run_root)) for p in ours],
        output=res.output,
        notes=[*res.notes, *problems],
    )
