"""`reviewbot config check [PATH]`: validate a working tree's `.reviewbot.toml` before committing it.

A review reads `.reviewbot.toml` from the pull request's base, so a mistake in a new one shows only
once it is merged. This reads the file of the working tree (PATH: the file, or the repository
directory holding it; default: the current directory) and its repository checklists, with the checks
and the messages of a review: exit 0 and one line saying what it sets, or exit 2 and one line naming
the file, the key and what is allowed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from reviewbot.checks.registry import KNOWN_RULES
from reviewbot.config import CONFIG_PATH, RepoConfig, load_repo_config
from reviewbot.errors import UsageError
from reviewbot.review.checklist import bundled_names, parse_checklist

__all__ = ["add_arguments", "main", "check_config"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check",), help="check: validate .reviewbot.toml")
    parser.add_argument(
        "path",
        nargs="?",
        default=".",
        help=f"the {CONFIG_PATH} file, or the repository directory that holds it (default: .)",
    )


class _WorkingTree:
    """The files under a directory, read as a review reads a revision (RepoTree)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def paths(self) -> list[str]:
        return [str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file()]

    def read(self, path: str) -> str | None:
        target = self.root / path
        try:
            return target.read_text(encoding="utf-8") if target.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None


def _locate(path: str) -> tuple[Path, Path]:
    """(the repository directory, the config file) that PATH names."""
    given = Path(path).expanduser()
    if given.is_dir():
        return given, given / CONFIG_PATH
    if not given.exists() and given.name != CONFIG_PATH:
        raise UsageError(f"{path}: no such file or directory")
    if given.name != CONFIG_PATH:
        raise UsageError(f"{path}: give a {CONFIG_PATH} file or the directory that holds it")
    if not given.parent.is_dir():
        raise UsageError(f"{path}: no such directory {given.parent}")
    return given.parent, given


def check_config(path: str) -> tuple[Path, RepoConfig | None]:
    """(the file, its model; None when the directory has none). Raises UsageError (one line)."""
    root, file = _locate(path)
    if not file.is_file():
        if Path(path).expanduser().is_dir():
            return file, None
        raise UsageError(f"{file}: no such file")
    origin = str(file) if Path(path).expanduser() != Path(".") else CONFIG_PATH
    tree = _WorkingTree(root)
    cfg = load_repo_config(
        tree,
        rules=KNOWN_RULES,
        checklists=bundled_names(),
        origin=origin,
        revision="the working tree",
    )
    # Repository checklists are parsed as the review parses them (their own file named in the error).
    for name, text in cfg.repo_checklists.items():
        parse_checklist(text, name, KNOWN_RULES)
    return file, cfg


def main(args: argparse.Namespace) -> int:
    file, cfg = check_config(args.path)
    if cfg is None:
        print(f"reviewbot: no {CONFIG_PATH} in {file.parent}: reviews use the defaults")
        return 0
    parts = [f"checklists {', '.join(cfg.checklists)}"]
    if cfg.disabled:
        parts.append(f"disabled {', '.join(sorted(cfg.disabled))}")
    if cfg.enabled:
        parts.append(f"enabled {', '.join(sorted(cfg.enabled))}")
    if cfg.exclude:
        parts.append(f"exclude {', '.join(cfg.exclude)}")
    if cfg.review.lang:
        parts.append(f"lang {cfg.review.lang}")
    parts.append(f"tests `{cfg.tests.command}`" if cfg.tests else "no [tests] (tests are not run)")
    print(f"reviewbot: {file} is valid: {'; '.join(parts)}")
    return 0
