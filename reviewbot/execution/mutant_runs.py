"""Running the tests once per mutant, in parallel, and judging each run against the head's.

A mutant is killed when a test that passed on the unmodified head fails with it (or, without per-test
results, when the command's exit status turns non-zero); each run's copy of the head is removed as soon as
its results are read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from reviewbot.execution.config import TestConfig
from reviewbot.execution.exec_settings import ExecSettings
from reviewbot.execution.mutants import Mutant
from reviewbot.execution.runner import run_tests
from reviewbot.execution.untrusted import clean_run
from reviewbot.model.tests import EXIT_STATUS_TEST, MutantResult, TestRun

__all__ = ["remove_run_dir", "run_mutants"]


def _killed(head: TestRun, run: TestRun) -> list[str]:
    if head.cases and run.cases:
        out = []
        for test_id in head.passed:
            case = run.cases.get(test_id)
            # A test that vanished counts only when the run failed (it crashed before reporting it).
            if (case is not None and case.failed) or (case is None and run.exit_code != 0):
                out.append(test_id)
        return out
    return [EXIT_STATUS_TEST] if run.exit_code != 0 else []


def _mutant_job(
    m: Mutant,
    cfg: TestConfig,
    pristine: Path,
    scratch: Path,
    kind: str,
    settings: ExecSettings,
    timeout: float,
    deadline: float,
    head: TestRun,
) -> MutantResult:
    remaining = deadline - time.monotonic()
    if remaining < max(1.0, head.seconds):
        return MutantResult(
            m, "not_run", reason=f"the time budget of {settings.time_budget_s:.0f} s was used up"
        )
    limit = min(timeout, remaining)
    run_dir = scratch / f"run-{m.id}"
    try:
        run = clean_run(
            run_tests(
                cfg,
                pristine,
                run_dir,
                label=m.id,
                sandbox=kind,
                limits=settings.limits,
                timeout=limit,
                mutant=m,
            )
        )
    except OSError as exc:
        return MutantResult(m, "not_run", reason=f"could not prepare the run: {exc}")
    finally:
        # The run's copy of the head goes once its results are read: the stage's disk is one copy
        # per worker, not one per mutant (64 copies of a 5,000-file head came to 1.3 GB).
        if not settings.keep_runs:
            remove_run_dir(run_dir)
    if run.timed_out:
        if limit < timeout:
            return MutantResult(
                m, "not_run", seconds=run.seconds, reason="the time budget ran out during the run"
            )
        why = f"the tests did not finish within {limit:.0f} s with this mutant and were killed"
        return MutantResult(m, "timeout", seconds=run.seconds, reason=why, run=run)
    killed = _killed(head, run)
    return MutantResult(m, "killed" if killed else "survived", tuple(killed), run.seconds, run=run)


def run_mutants(
    mutants: list[Mutant],
    cfg: TestConfig,
    pristine: Path,
    scratch: Path,
    kind: str,
    settings: ExecSettings,
    timeout: float,
    deadline: float,
    head: TestRun,
) -> list[MutantResult]:
    runnable = [m for m in mutants if not m.problem]
    workers = max(1, min(settings.max_workers or os.cpu_count() or 1, len(runnable) or 1))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mutant") as pool:
        futures = {
            m.id: pool.submit(_mutant_job, m, cfg, pristine, scratch, kind, settings, timeout, deadline, head)
            for m in runnable
        }
        done = {mid: f.result() for mid, f in futures.items()}
    return [
        done[m.id] if m.id in done else MutantResult(m, "not_run", reason=f"not built: {m.problem}")
        for m in mutants
    ]


def remove_run_dir(path: Path) -> None:
    """Remove a run directory, including directories a test made read-only."""
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        for root, dirs, _ in os.walk(path):
            for d in dirs:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(root, d), 0o700)
        shutil.rmtree(path, ignore_errors=True)
