"""The `[tests]` table of `.reviewbot.toml`, always read from the base revision.

```toml
[tests]
command = "sh run_tests.sh"   # run with `sh -c` at the repository root
timeout = 120                 # seconds per run (default 600)
junit = "build/*.xml"         # optional glob of JUnit XML files; default: any XML the run writes
```

The head of a pull request must not choose what reviewbot executes, so the head's copy is never read.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

from reviewbot.errors import UsageError
from reviewbot.model.change import ChangeSet

__all__ = [
    "CONFIG_FILE",
    "TestConfig",
    "parse_test_config",
    "test_config_from_table",
    "load_base_test_config",
]

CONFIG_FILE = ".reviewbot.toml"
DEFAULT_TIMEOUT = 600.0
DEFAULT_JUNIT = "**/*.xml"


@dataclass(frozen=True)
class TestConfig:
    __test__ = False  # not a pytest test class

    command: str
    timeout: float = DEFAULT_TIMEOUT
    junit: str = DEFAULT_JUNIT
    junit_configured: bool = False


def parse_test_config(text: str | None) -> TestConfig | None:
    """The `[tests]` table of a `.reviewbot.toml` text; None when there is no file or no table."""
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{CONFIG_FILE} at the base revision is not valid TOML ({exc}); fix it on the base branch"
        ) from exc
    tests = data.get("tests")
    if tests is None:
        return None
    if not isinstance(tests, dict):
        raise UsageError(f'{CONFIG_FILE}: `tests` must be a table like `[tests]\\ncommand = "make test"`')
    return test_config_from_table(tests)


def test_config_from_table(tests: dict[str, Any]) -> TestConfig | None:
    """Validate a `[tests]` table (as `reviewbot.config.RepoConfig.tests` holds it); None when empty."""
    if not tests:
        return None
    unknown = set(tests) - {"command", "timeout", "junit"}
    if unknown:
        raise UsageError(
            f"{CONFIG_FILE}: unknown key(s) in [tests]: {', '.join(sorted(unknown))}; "
            "allowed are command, timeout, junit"
        )
    command = tests.get("command")
    if not isinstance(command, str) or not command.strip():
        raise UsageError(
            f'{CONFIG_FILE}: [tests] needs `command = "..."`, the shell command that runs the tests'
        )
    timeout = tests.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise UsageError(
            f"{CONFIG_FILE}: [tests] timeout must be a positive number of seconds, not {timeout!r}"
        )
    junit = tests.get("junit")
    if junit is not None and (
        not isinstance(junit, str) or not junit or junit.startswith("/") or ".." in junit
    ):
        raise UsageError(f'{CONFIG_FILE}: [tests] junit must be a relative glob such as "build/*.xml"')
    return TestConfig(
        command=command,
        timeout=float(timeout),
        junit=junit or DEFAULT_JUNIT,
        junit_configured=junit is not None,
    )


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
