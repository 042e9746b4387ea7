"""What the test-execution stage may do in a round: whether it runs, its sandbox, time, workers and limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.config import RepoConfig
from reviewbot.execution.sandbox import SANDBOXES, Limits

__all__ = ["ExecSettings"]


@dataclass(frozen=True)
class ExecSettings:
    run_tests: bool = True  # False: `--no-tests`
    trusted: bool = True  # False: a PR author outside the allow list; tests are not run
    time_budget_s: float = 300.0  # the whole stage: head run and mutants
    not_trusted_reason: str = "the pull request's author is not trusted to run code here"
    max_workers: int | None = None  # parallel mutant runs; default os.cpu_count()
    sandbox: str | None = None  # force `bwrap` / `unshare` / `subprocess`; None: the best that works
    # CONFINING_SANDBOXES refuses unconfined runs (the GitHub App); SANDBOXES suits `reviewbot run`, whose
    # user runs their own code.
    allowed_sandboxes: tuple[str, ...] = SANDBOXES
    limits: Limits = field(default_factory=Limits)
    max_timeout_s: float | None = None  # caps the configured per-run timeout
    # Names a repository's `[tests] env` may pass. None: all it names (a local run: the user's own
    # config); the App passes its operator's list, so a repository cannot ask for the worker's secrets.
    env_allowed: frozenset[str] | None = None
    max_mutants: int | None = None  # mutants per round (the pipeline passes at most its budget's worth)
    # The base revision's .reviewbot.toml as the round parsed it (its `tests` may be None: no [tests]);
    # None: the stage reads the base's file itself.
    repo_config: RepoConfig | None = None
    scratch_dir: Path | None = None  # where run directories go; default the system temp dir
    keep_runs: bool = False  # keep run directories (debugging)
