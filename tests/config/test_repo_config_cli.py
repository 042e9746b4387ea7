"""A bad `.reviewbot.toml` on the command line: one line on stderr naming file, key and what is
allowed; exit 2; no traceback. A good one is honoured, including `[review] exclude`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewbot.change.diff import load_change
from reviewbot.commands.run import settings_for
from tests.config.helpers import configured_pr
from tests.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]


def _run(pr_path: Path, base: str, head: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp), XDG_STATE_HOME=str(tmp / "state"))
    return subprocess.run(
        [sys.executable, "-m", "reviewbot.cli", "run", "--path", str(pr_path), "--base", base, "--head", head]
        + ["--no-tests", "--format", "json", *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            "[revew]\ndisabled = []\n",
            "reviewbot: .reviewbot.toml (base): unknown section(s) [revew]; allowed: [review], [tests], [cpp]",
        ),
        (
            '[review]\nchecklist = ["general"]\n',
            "reviewbot: .reviewbot.toml (base): unknown key(s) in [review]: checklist; "
            "allowed: checklists, disabled, enabled, exclude",
        ),
        (
            '[review]\ndisabled = ["no-such-rule"]\n',
            # the known ids follow in sorted order: whichever rule sorts first, missing-tests is listed
            "reviewbot: .reviewbot.toml (base): [review] disabled: unknown rule id(s) no-such-rule; known: ",
        ),
        (
            '[tests]\ncommand = "make test"\ntimeout = "soon"\n',
            "[tests] timeout must be a positive number of seconds, not 'soon'",
        ),
        (
            '[review]\nchecklists = ["ci/review.yaml"]\n',
            "[review] checklists: ci/review.yaml is not in the base revision",
        ),
        (
            '[cpp]\nmacros = ["MY API"]\n',
            "[cpp] macros must be a list of C++ identifiers such as",
        ),
    ],
    ids=["section", "key", "rule", "tests", "checklist-file", "cpp-macros"],
)
def test_a_bad_repository_config_is_one_line_and_exit_2(config: str, expected: str, tmp_path: Path) -> None:
    pr = configured_pr(tmp_path, config)
    done = _run(pr.path, pr.base, pr.head, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], done.stderr
    if "known: " in expected:
        assert "missing-tests" in lines[0].split("known: ", 1)[1]
    assert "Traceback" not in done.stderr


def test_the_heads_copy_is_never_read(tmp_path: Path) -> None:
    """The base's file is what counts: a PR cannot change (or break) how it is itself reviewed."""
    pr = configured_pr(tmp_path, '[review]\ndisabled = ["formatting-noise"]\n')
    (pr.path / ".reviewbot.toml").write_text("[revew]\n")
    git(pr.path, "commit", "-qam", "break the config on the head")
    done = _run(pr.path, pr.base, git(pr.path, "rev-parse", "HEAD"), tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_good_config_reaches_the_review_settings(tmp_path: Path) -> None:
    config = (
        '[review]\ndisabled = ["formatting-noise"]\nenabled = ["flag-removed-without-alias"]\n'
        'exclude = ["third_party/**"]\n[tests]\ncommand = "true"\n'
    )
    pr = configured_pr(tmp_path, config)
    args = argparse.Namespace(checklist=["rtp-llm"], no_tests=True, lang="en")
    change = load_change(pr.path, pr.base, pr.head)
    try:
        settings = settings_for(change, args, pr.path)
    finally:
        change.close()
    assert settings.disabled_rules == {"formatting-noise"} and settings.exclude == ("third_party/**",)
    assert settings.enabled_rules == {"flag-removed-without-alias"}
    assert list(settings.checklists) == ["general", "rtp-llm"]
