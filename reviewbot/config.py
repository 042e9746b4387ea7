"""Repository configuration: `.reviewbot.toml`, always read from the BASE revision.

Reading it from the base keeps a pull request from changing how it is itself reviewed (for example
turning off a rule, or choosing the command that runs in the sandbox).

    [review]
    checklists = ["general", "rtp-llm"]     # bundled names or repository paths to YAML files
    disabled = ["formatting-noise"]

    [tests]
    command = "sh run_tests.sh"
    timeout = 120
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tomllib

from reviewbot.errors import UsageError
from reviewbot.model.change import RepoTree

__all__ = ["RepoConfig", "parse_repo_config", "load_repo_config", "CONFIG_PATH"]

CONFIG_PATH = ".reviewbot.toml"


@dataclass(frozen=True)
class RepoConfig:
    checklists: tuple[str, ...] = ("general",)
    disabled: frozenset[str] = frozenset()
    tests: dict[str, Any] = field(default_factory=dict)  # the raw [tests] table, validated by truthtable
    repo_checklists: dict[str, str] = field(default_factory=dict)  # repository path -> YAML text
    source: str = ""  # where it was read from, for the report


def parse_repo_config(text: str, origin: str = CONFIG_PATH) -> RepoConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{origin}: not valid TOML ({exc})") from exc
    review = data.get("review", {})
    tests = data.get("tests", {})
    if not isinstance(review, dict) or not isinstance(tests, dict):
        raise UsageError(f"{origin}: [review] and [tests] must be tables")
    checklists = review.get("checklists", ["general"])
    disabled = review.get("disabled", [])
    if not isinstance(checklists, list) or not all(isinstance(c, str) for c in checklists):
        raise UsageError(f"{origin}: review.checklists must be a list of names or paths")
    if not isinstance(disabled, list) or not all(isinstance(c, str) for c in disabled):
        raise UsageError(f"{origin}: review.disabled must be a list of rule ids")
    return RepoConfig(tuple(checklists), frozenset(disabled), dict(tests), source=origin)


def load_repo_config(base_tree: RepoTree | None) -> RepoConfig:
    """The base revision's `.reviewbot.toml`, or the defaults when there is none."""
    if base_tree is None:
        return RepoConfig()
    text = base_tree.read(CONFIG_PATH)
    if text is None:
        return RepoConfig()
    cfg = parse_repo_config(text, f"{CONFIG_PATH} (base)")
    repo_lists = {
        c: t for c in cfg.checklists if c.endswith((".yaml", ".yml")) and (t := base_tree.read(c)) is not None
    }
    return RepoConfig(cfg.checklists, cfg.disabled, cfg.tests, repo_lists, cfg.source)
