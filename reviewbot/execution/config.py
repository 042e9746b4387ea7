"""The `[tests]` table of `.reviewbot.toml`, always read from the base revision.

The model and its validation are `reviewbot.config` (the one parser of `.reviewbot.toml`); a round
parses the file once and hands the execution stage its `RepoConfig` (`ExecSettings.repo_config`).
What is here serves a caller that did not: read the base revision's file for its `[tests]` table.

The head of a pull request must not choose what reviewbot executes, so the head's copy is never read.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from reviewbot.config import BASE_ORIGIN, CONFIG_PATH, TestConfig, parse_repo_config, parse_tests_table
from reviewbot.model.change import ChangeSet

__all__ = [
    "CONFIG_FILE",
    "TestConfig",
    "parse_test_config",
    "test_config_from_table",
    "load_base_test_config",
]

CONFIG_FILE = CONFIG_PATH


def parse_test_config(text: str | None) -> TestConfig | None:
    """The `[tests]` table of a `.reviewbot.toml` text; None when there is no file or no table."""
    if text is None:
        return None
    return parse_repo_config(text, BASE_ORIGIN).tests


def test_config_from_table(tests: Mapping[str, object]) -> TestConfig | None:
    """Validate a `[tests]` table on its own; None when empty."""
    return parse_tests_table(tests, BASE_ORIGIN)


def _read_base(change: ChangeSet, repo_path: Path) -> str | None:
    if change.base_tree is not None:
        return change.base_tree.read(CONFIG_FILE)
    out = subprocess.run(
        ["git", "-C", str(repo_path), "show", f"{change.base_sha}:{CONFIG_FILE}"],
        capture_output=True,
        text=True,
    )
    return out.stdout if out.returncode == 0 else None


def load_base_test_config(change: ChangeSet, repo_path: Path) -> TestConfig | None:
    """`[tests]` from `.reviewbot.toml` at the change's base revision (never the head)."""
    return parse_test_config(_read_base(change, repo_path))
