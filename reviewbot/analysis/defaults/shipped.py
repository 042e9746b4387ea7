"""The project's own config files that already set a default's new value (reads a tree, no state).

A default is the configuration of every deployment that never sets the value. When every config file
the project ships (TOML, YAML, JSON: example and recipe configs, the test harness's base config) sets
the key, and all of them to the value the change makes the default, none of those configurations moves:
the change aligns the default with what the project already runs (torchtitan's `dump_folder`
`"./torchtitan/outputs"` -> `"./outputs"`, which every `train_configs/*.toml` set). Deployments with
their own files that leave the key out still move, which a note can say without asking for action.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from reviewbot.analysis.removals.named_flags import CONFIG_FILE as _CONFIG_FILE
from reviewbot.model.change import RepoTree, read_many

__all__ = ["ShippedConfigs", "shipped_configs"]

# CI, packaging and editor settings: their keys are the tools', not the project's configuration
_NOT_CONFIG = re.compile(
    r"(?i)(?:^|/)(?:\.github|\.gitlab|\.circleci|\.buildkite|\.vscode|docker|ci)/|(?:^|/)(?:pyproject\.toml|package(?:-lock)?\.json|\.pre-commit-config\.yaml)$"
)
_MIN_FILES = 2  # one file is an example, not what the project ships
_MAX_FILES = 200


@dataclass(frozen=True)
class ShippedConfigs:
    """How many config files set the key, and whether all of them set it to the new value."""

    files: int
    agree: bool
    first: tuple[str, int]  # (path, line) of one setting, for the evidence


def _plain(value: str) -> str:
    v = value.strip().rstrip(",").strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        v = v[1:-1]
    return v.lower() if v.lower() in ("true", "false") else v


def shipped_configs(
    key: str, new: str, tree: RepoTree | None, excluded: Callable[[str], bool] | None = None
) -> ShippedConfigs | None:
    """The config files of `tree` that set `key` (`key = value`, `key: value`, `"key": value`); None
    when fewer than two do, or the tree cannot be searched."""
    grep = getattr(tree, "grep", None)
    if tree is None or not callable(grep) or not re.fullmatch(r"[A-Za-z_]\w*", key):
        return None
    found = grep([key])
    if not found:
        return None
    paths = sorted(
        p
        for p in found
        if _CONFIG_FILE.search(p) and not _NOT_CONFIG.search(p) and not (excluded and excluded(p))
    )[:_MAX_FILES]
    setting = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*[:=]\s*(\S[^#\n]*?)\s*(?:#.*)?$")
    values: list[tuple[str, int, str]] = []
    for path, body in read_many(tree, paths).items():
        for number, line in enumerate((body or "").split("\n"), start=1):
            m = setting.match(line)
            if m:
                values.append((path, number, _plain(m.group(1))))
    files = len({p for p, _, _ in values})
    if files < _MIN_FILES:
        return None
    agree = all(v == _plain(new) for _, _, v in values)
    return ShippedConfigs(files, agree, (values[0][0], values[0][1]))
