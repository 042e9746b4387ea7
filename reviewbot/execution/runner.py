"""One test run: copy the head checkout, apply a mutant, run the command in the sandbox, read JUnit."""

from __future__ import annotations

import shutil
from pathlib import Path

from reviewbot.execution import reaper
from reviewbot.execution.config import TestConfig
from reviewbot.execution.junit import TestCase, parse_junit
from reviewbot.execution.mutants import Mutant
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
    res = run_sandboxed(cfg.command, run_root, workspace, timeout=timeout, sandbox=sandbox, limits=limits)
    cases: dict[str, TestCase] = {}
    problems: list[str] = []
    files: list[Path] = []
    if not res.timed_out:
        files = _written_junit(workspace, cfg.junit, before)
        cases, problems = parse_junit(files, root=workspace)  # a report must lie inside the run
    return TestRun(
        label=label,
        exit_code=res.exit_code,
        timed_out=res.timed_out,
        seconds=res.seconds,
        cases=cases,
        junit_files=[str(p.relative_to(workspace)) for p in files],
        output=res.output,
        notes=[*res.notes, *problems],
    )
