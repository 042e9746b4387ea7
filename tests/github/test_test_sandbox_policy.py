"""A pull request's tests run only in a confining sandbox, with the worker's own secrets hidden."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from reviewbot.change.diff import load_change
from reviewbot.execution import sandbox
from reviewbot.github.api import PullRequestInfo
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.source import Code, review_settings
from tests.execution.probe import flag_derivation, make_repo, toml


def _pr(base: str, head: str, association: str) -> PullRequestInfo:
    return PullRequestInfo(
        repo="acme/r",
        number=7,
        title="t",
        state="open",
        draft=False,
        user="dev",
        author_association=association,
        head_sha=head,
        head_ref="pr",
        head_repo="acme/r",
        base_sha=base,
        base_ref="main",
        clone_url="https://example.invalid/acme/r.git",
        html_url="https://example.invalid/acme/r/pull/7",
        changed_files=1,
    )


def _path_without_sandboxes(tmp_path: Path) -> str:
    """A PATH with git and sh but neither bwrap nor unshare: a host where no sandbox confines."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = shutil.which(tool)
        assert found is not None, f"{tool} is needed for this test"
        os.symlink(found, bin_dir / tool)
    return str(bin_dir)


def test_without_a_confining_sandbox_a_trusted_authors_tests_do_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran-unconfined"
    command = f"{sys.executable} -c \"open({str(marker)!r}, 'w').write('x')\""
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml(command)}, {})
    change = load_change(repo.path, base, head)
    monkeypatch.setenv("PATH", _path_without_sandboxes(tmp_path))
    monkeypatch.setattr(sandbox, "_DETECTED", {})  # probe again, on this PATH
    settings = GitHubSettings(token="t", run_tests=True, cache_dir=tmp_path / "cache")

    review = review_settings(settings, Code(change, repo.path, "git"), _pr(base, head, "OWNER"))
    assert review.execute is not None
    ex = review.execute(change, flag_derivation())

    assert ex is not None and ex.summary["ran"] == 0 and not marker.exists()
    assert ex.summary["sandbox"] is None and ex.summary["not_run"] == 1
    assert "no confining sandbox (bwrap, unshare) works" in ex.summary["reason_if_not_run"]
    assert any(n.message.startswith("Tests were not run: no confining sandbox") for n in ex.notes)


def test_the_settings_key_and_clone_cache_are_hidden_from_the_tests(tmp_path: Path) -> None:
    key = tmp_path / "secrets" / "app.pem"
    key.parent.mkdir()
    key.write_text("-----BEGIN PRIVATE KEY-----")
    cache = tmp_path / "clones"
    cache.mkdir()
    db = tmp_path / "store" / "rounds.sqlite3"
    db.parent.mkdir()
    db.write_text("")
    repo, base, head = make_repo(tmp_path / "r", {}, {})
    change = load_change(repo.path, base, head)
    settings = GitHubSettings(
        app_id=1, private_key_path=key, cache_dir=cache, db_url=f"sqlite:///{db}", run_tests=True
    )
    assert not {key, cache, db} & set(sandbox.hidden_paths())  # named by settings only, not the env

    review_settings(settings, Code(change, repo.path, "git"), _pr(base, head, "MEMBER"))

    assert {key, cache, db} <= set(sandbox.hidden_paths())
