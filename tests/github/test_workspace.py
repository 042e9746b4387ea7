"""The cached git workspace and the API fallback, on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reviewbot.change.gitproc import git_env
from reviewbot.errors import EnvironmentProblem, GitError
from reviewbot.github import run_pr_round
from reviewbot.github.api import RestApi
from reviewbot.github.auth import connect
from reviewbot.github.client import ApiCounter
from reviewbot.github.fallback import change_from_api, undo_hunks
from reviewbot.github.workspace import GitWorkspace, _auth_env
from tests.fakegithub import example_remote, push
from tests.fakegithub.repos import make_bare
from tests.github.conftest import AUTHOR, PR, REPO, Seeded, settings

API = "http://127.0.0.1:9/api/v3"


def _set_pull_ref(bare: Path, number: int, sha: str) -> None:
    subprocess.run(["git", "-C", str(bare), "update-ref", f"refs/pull/{number}/head", sha], check=True)


@pytest.mark.parametrize("allow_filter", [True, False])
def test_one_clone_per_repository_partial_when_the_server_allows(tmp_path: Path, allow_filter: bool) -> None:
    remote = example_remote(tmp_path / "remote", allow_filter=allow_filter)
    _set_pull_ref(remote.bare, 3, remote.round1)
    ws = GitWorkspace(tmp_path / "cache")
    url = remote.bare.as_uri()
    first = ws.prepare(
        api_url=API,
        repo=REPO,
        clone_url=url,
        pr_number=3,
        base_sha=remote.base,
        head_sha=remote.round1,
        base_ref="main",
    )
    assert first.partial is allow_filter
    assert first.path == ws.repo_dir(API, REPO) and first.path.is_relative_to(tmp_path / "cache")
    _set_pull_ref(remote.bare, 3, remote.round2)
    second = ws.prepare(
        api_url=API,
        repo=REPO,
        clone_url=url,
        pr_number=3,
        base_sha=remote.base,
        head_sha=remote.round2,
        base_ref="main",
    )
    assert second.path == first.path  # the same clone, fetched again
    assert len(list((tmp_path / "cache" / "git").rglob("*.git"))) == 1
    # Every blob the review reads (head and merge base) is local; nothing is fetched lazily later.
    listing = subprocess.run(
        [
            "git",
            "-C",
            str(second.path),
            "rev-list",
            "--objects",
            "--missing=print",
            "--no-walk",
            remote.round2,
            remote.base,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "?" not in "".join(line[:1] for line in listing.splitlines())


def test_a_fork_pr_is_fetched_from_the_base_repository(seeded: Seeded, tmp_path: Path) -> None:
    fork_bare = make_bare(tmp_path / "fork.git")
    push(seeded.remote.example.path, fork_bare, seeded.remote.round1, "refs/heads/topic")
    seeded.fake.add_repo("junna2016/rtp-llm", fork_bare, fork_of=REPO)
    # GitHub keeps a fork PR's head in the base repository as refs/pull/N/head.
    seeded.fake.add_pull(
        REPO,
        7,
        user=AUTHOR,
        head_sha=seeded.remote.round1,
        base_sha=seeded.remote.base,
        head_repo="junna2016/rtp-llm",
        head_ref="topic",
    )
    api = RestApi(connect(settings(seeded, tmp_path, app=True), REPO, ApiCounter()).client)
    assert api.get_pull(REPO, 7).fork
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, 7, post=True)
    assert outcome.status == "published" and outcome.code_source == "git"


def test_git_missing_is_an_environment_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without git
    with pytest.raises(EnvironmentProblem, match="git is not installed"):
        GitWorkspace(tmp_path / "cache").prepare(
            api_url=API, repo=REPO, clone_url="file:///x", pr_number=1, base_sha="a" * 40, head_sha="b" * 40
        )


def test_an_unreachable_remote_is_a_git_error(tmp_path: Path) -> None:
    with pytest.raises(GitError):
        GitWorkspace(tmp_path / "cache").prepare(
            api_url=API,
            repo=REPO,
            clone_url=(tmp_path / "nope").as_uri(),
            pr_number=1,
            base_sha="a" * 40,
            head_sha="b" * 40,
        )


def test_the_token_reaches_git_through_the_environment_only() -> None:
    env = git_env(_auth_env("https://github.com/acme/x.git", "s3cret"))
    assert env["GIT_CONFIG_KEY_0"] == "http.extraHeader" and "s3cret" not in env["GIT_CONFIG_VALUE_0"]
    assert env["GIT_CONFIG_VALUE_0"].startswith("Authorization: Basic ") and env["GIT_TERMINAL_PROMPT"] == "0"
    assert "GIT_CONFIG_KEY_0" not in _auth_env("file:///tmp/x.git", "s3cret")


def test_when_git_cannot_fetch_the_round_uses_the_api_and_says_so(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.world.repos[REPO].clone_url_override = (tmp_path / "gone.git").as_uri()
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True)
    assert outcome.status == "published" and outcome.code_source == "api"
    assert outcome.review is not None
    assert any(f.rule == "missing-tests" for f in outcome.review.findings)  # the changed file was analysed
    (comment,) = seeded.fake.comments(REPO, PR)
    assert "Reviewed from GitHub's API patches" in comment.body and "were not searched" in comment.body
    assert {"pulls/list-files", "repos/get-content"} <= {r.operation for r in seeded.fake.log}


def test_the_base_text_is_rebuilt_exactly_from_head_and_patch(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    api = RestApi(connect(settings(seeded, tmp_path, app=True), REPO, ApiCounter()).client)
    pr = api.get_pull(REPO, PR)
    change = change_from_api(api, pr, "test")
    bare = seeded.remote.bare
    for f in change.files:

        def show(rev: str, path: str) -> str | None:
            out = subprocess.run(
                ["git", "-C", str(bare), "show", f"{rev}:{path}"], capture_output=True, text=True
            )
            return out.stdout if out.returncode == 0 else None

        assert f.head_text == show(pr.head_sha, f.path)
        assert f.base_text == show(pr.base_sha, f.old_path or f.path)
    assert len(change.files) == 3 and change.head_tree is None


def test_undo_hunks_refuses_a_patch_that_does_not_fit() -> None:
    from reviewbot.change.patch import parse_patch

    (f,), _ = parse_patch("@@ -1,2 +1,2 @@\n-a\n+b\n c\n", path="x.txt")
    assert undo_hunks("b\nc\n", f.hunks) == "a\nc\n"
    assert undo_hunks("b\n", f.hunks) is None  # the context line is not there


def test_files_github_sends_no_patch_for_are_named(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.options.patch_limit = 10  # every patch is "too large" for this fake
    api = RestApi(connect(settings(seeded, tmp_path, app=True), REPO, ApiCounter()).client)
    change = change_from_api(api, api.get_pull(REPO, PR), "test")
    (f,) = change.files
    assert f.skipped is not None and f.path in " ".join(n.message for n in change.notes)
    assert change.coverage == 0.0
