"""`/reviewbot` commands and the trusted-author rule decided by GitHub's permission API, against the
fake GitHub over real HTTP: the permission endpoint's answers, a dismissal by a writer and by a reader,
the PR author's tests gated on their permission, and one permission request per user per round."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import httpx
import pytest
from openapi_schema_validator import OAS30Validator, oas30_format_checker

from reviewbot.change.diff import load_change
from reviewbot.execution import sandbox
from reviewbot.github import run_pr_round
from reviewbot.github.api import PullRequestInfo
from reviewbot.github.auth import connect
from reviewbot.github.client import ApiCounter
from reviewbot.github.commands import CommentCommand
from reviewbot.github.permissions import Permissions
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.source import Code, review_settings
from reviewbot.store.dismissals import dismissals_of
from reviewbot.store.store import Store
from tests.execution.probe import flag_derivation, make_repo, toml
from tests.fakegithub.permissions import PERMISSION_SCHEMA
from tests.fakegithub.spec import Spec, spec_path
from tests.github.conftest import PR, REPO, Seeded, settings

BOT = "reviewbot[bot]"
OPERATION = "repos/get-collaborator-permission-level"


def _permission(seeded: Seeded, user: str) -> httpx.Response:
    return httpx.get(
        f"{seeded.fake.api_url}/repos/{REPO}/collaborators/{user}/permission",
        headers={"Authorization": f"token {seeded.token}"},
        timeout=10,
    )


def test_the_permission_endpoint_answers_in_githubs_documented_shape(seeded: Seeded) -> None:
    if (
        spec_path().exists()
    ):  # the subset lacks this operation; its schema is in tests/fakegithub/permissions.py
        assert OPERATION not in Spec(spec_path()).operations
    validator = OAS30Validator(PERMISSION_SCHEMA, format_checker=oas30_format_checker)
    fake = seeded.fake
    fake.set_permission(REPO, "maint", "maintain")
    fake.set_permission(REPO, "triager", "triage")
    fake.add_user("passer-by")
    seen = {}
    for user in ("maint", "triager", "passer-by", "acme"):
        r = _permission(seeded, user)
        assert r.status_code == 200, r.text
        body = r.json()
        assert list(validator.iter_errors(body)) == []
        assert body["user"]["login"] == user
        seen[user] = (body["permission"], body["role_name"], body["user"]["permissions"]["push"])
    assert seen == {
        "maint": ("write", "maintain", True),  # legacy level: maintain reads as write
        "triager": ("read", "triage", False),
        "passer-by": ("read", "read", False),  # anyone may read a public repository
        "acme": ("admin", "admin", True),  # the owner account
    }
    assert _permission(seeded, "nobody-at-all").status_code == 404


def test_permissions_are_asked_once_per_user_per_round(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.set_permission(REPO, "maint", "maintain")
    conn = connect(settings(seeded, tmp_path), REPO, ApiCounter())
    perms = Permissions(conn.client, REPO)
    assert [perms.can_write("maint"), perms.can_write("maint"), perms.role("nobody-at-all")] == [
        True,
        True,
        "none",
    ]
    conn.close()
    asked = [r.path for r in seeded.fake.calls(OPERATION)]
    assert asked == [
        f"/repos/{REPO}/collaborators/maint/permission",
        f"/repos/{REPO}/collaborators/nobody-at-all/permission",
    ]


def _blocking_fingerprint(seeded: Seeded) -> str:
    (run,) = seeded.fake.check_runs(REPO)
    assert run.conclusion == "failure"
    (comment,) = [c for c in seeded.fake.comments(REPO, PR) if c.user == BOT]
    # The report shows each finding's fingerprint prefix: that is what a maintainer types.
    line = next(x for x in comment.body.splitlines() if x.startswith("**F1 · [P1]"))
    return line.split("· `")[-1].split("`")[0]


def test_a_writers_dismissal_lifts_blocking_and_a_readers_changes_nothing(
    seeded: Seeded, tmp_path: Path
) -> None:
    fake = seeded.fake
    s = settings(seeded, tmp_path, app=True)
    first = run_pr_round(s, REPO, PR, post=True)
    assert (
        first.status == "published" and first.review is not None and first.review.status.value == "BLOCKING"
    )
    prefix = _blocking_fingerprint(seeded)
    assert len(prefix) == 12

    # A reader (a CONTRIBUTOR in the payload's terms; GitHub says read): a short reply, nothing else.
    fake.add_user("reader")
    comments_before = fake.comments(REPO, PR)
    writes_before = len(fake.writes(auth=False))
    dismiss = CommentCommand("dismiss", prefix, "not applicable here")
    refused = run_pr_round(s, REPO, PR, post=True, requested_by="reader", command=dismiss)
    assert refused.status == "skipped" and "needs write permission" in refused.reason
    new = fake.comments(REPO, PR)[len(comments_before) :]
    assert [(c.user, c.body.count("\n")) for c in new] == [(BOT, 0)]
    assert (
        "@reader" in new[0].body and "(yours: read)" in new[0].body and "nothing was changed" in new[0].body
    )
    assert [c.body for c in fake.comments(REPO, PR)[: len(comments_before)]] == [
        c.body for c in comments_before
    ]
    assert len(fake.writes(auth=False)) == writes_before + 1  # the reply only
    assert [r.conclusion for r in fake.check_runs(REPO)] == ["failure"]
    with Store.open(s.db_url) as store:
        assert dismissals_of(store.engine, REPO, PR) == {}

    # An unknown prefix by a writer: a one-line reply, nothing dismissed.
    fake.set_permission(REPO, "maint", "write")
    unknown = run_pr_round(
        s, REPO, PR, post=True, requested_by="maint", command=CommentCommand("dismiss", "0000ffff", "x")
    )
    assert unknown.status == "skipped" and "no open finding" in fake.comments(REPO, PR)[-1].body

    # A writer: recorded, and the round that follows is not BLOCKING and shows who and why.
    reason = "the embedding path is covered by ci/embedding.yml"
    done = run_pr_round(
        s, REPO, PR, post=True, requested_by="maint", command=CommentCommand("dismiss", prefix[:8], reason)
    )
    assert done.status == "published" and done.review is not None
    assert done.review.status.value != "BLOCKING"
    (dismissed,) = [f for f in done.review.findings if f.dismissal is not None]
    assert dismissed.rule == "missing-tests" and dismissed.dismissal is not None
    assert (dismissed.dismissal.by, dismissed.dismissal.reason) == ("maint", reason)
    assert fake.check_runs(REPO)[-1].conclusion != "failure"
    (summary,) = [c for c in fake.comments(REPO, PR) if c.user == BOT and "reviewbot:state" in c.body]
    blocking, _, rest = summary.body.partition("### Dismissed")
    assert "No blocking issues." in blocking and "dismissed by maint" in rest and "ci/embedding.yml" in rest

    # The next push, still without a test: the dismissal holds while the fingerprint does.
    fake.set_head(REPO, PR, _commit_on_top(seeded, seeded.remote.round1))
    later = run_pr_round(s, REPO, PR, post=True)
    assert later.review is not None and later.review.status.value != "BLOCKING"
    assert [f.fingerprint for f in later.review.findings if f.dismissal is not None] == [
        dismissed.fingerprint
    ]
    assert fake.check_runs(REPO)[-1].conclusion != "failure"


def _commit_on_top(seeded: Seeded, sha: str) -> str:
    from tests.fakegithub import push
    from tests.gitrepo import git

    path = seeded.remote.example.path
    git(path, "checkout", "-q", "--detach", sha)
    (path / "NOTES.txt").write_text("no test here either\n")
    git(path, "add", "NOTES.txt")
    git(path, "commit", "-q", "-m", "notes")
    head = git(path, "rev-parse", "HEAD")
    push(path, seeded.remote.bare, head, "refs/heads/feature")
    return head


def _pr(base: str, head: str, association: str, user: str) -> PullRequestInfo:
    return PullRequestInfo(
        REPO, PR, "t", "open", False, user, association, head, "pr", REPO, base, "main", "file:///x", "", 1
    )


def _no_sandbox_path(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = shutil.which(tool)
        assert found is not None
        os.symlink(found, bin_dir / tool)
    return str(bin_dir)


def test_the_authors_tests_follow_githubs_permission_not_the_association(
    seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    command = f"{sys.executable} -c \"open({str(marker)!r}, 'w').write('x')\""
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml(command)}, {})
    change = load_change(repo.path, base, head)
    monkeypatch.setenv("PATH", _no_sandbox_path(tmp_path))  # so a trusted run stops at the sandbox
    monkeypatch.setattr(sandbox, "_DETECTED", {})
    gh = GitHubSettings(
        api_url=seeded.fake.api_url, token=seeded.token, run_tests=True, cache_dir=tmp_path / "c"
    )
    seeded.fake.set_permission(REPO, "team-writer", "write")
    seeded.fake.set_permission(REPO, "ex-owner", "read")
    conn = connect(gh, REPO, ApiCounter())
    perms = Permissions(conn.client, REPO)
    reasons = {}
    for user, association in (("team-writer", "CONTRIBUTOR"), ("ex-owner", "OWNER")):
        rs = review_settings(
            gh, Code(change, repo.path, "git"), _pr(base, head, association, user), perms.role
        )
        assert rs.execute is not None
        ex = rs.execute(change, flag_derivation())
        assert ex is not None and not marker.exists()
        reasons[user] = ex.summary["reason_if_not_run"]
    conn.close()
    # A writer through a team reads CONTRIBUTOR in payloads: trusted, stopped only by the missing sandbox.
    assert "no confining sandbox" in reasons["team-writer"]
    assert "ex-owner has read permission" in reasons["ex-owner"]


def test_a_refusal_reply_that_lands_late_is_posted_once(seeded: Seeded, tmp_path: Path) -> None:
    """The reply is a comment like any other: an unanswered POST that lands after the client's
    timeout is found, not sent again (it was re-sent blindly: two replies)."""
    fake = seeded.fake
    s = settings(seeded, tmp_path, app=True, timeout=1.0, github_request_limit=1.5, reconcile_interval=0.25)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    fake.add_user("reader")
    before = len(fake.comments(REPO, PR))
    fake.inject(operation="issues/create-comment", kind="delay", delay=1.5, when="before")
    dismiss = CommentCommand("dismiss", _blocking_fingerprint(seeded), "not applicable here")
    refused = run_pr_round(s, REPO, PR, post=True, requested_by="reader", command=dismiss)
    assert refused.status == "skipped"
    time.sleep(1.0)  # anything sent twice has landed by now
    replies = fake.comments(REPO, PR)[before:]
    assert len(replies) == 1 and "@reader" in replies[0].body


def test_a_dismissal_in_a_dry_run_records_nothing(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    seeded.fake.set_permission(REPO, "maint", "write")
    dismiss = CommentCommand("dismiss", _blocking_fingerprint(seeded), "covered elsewhere")
    dry = run_pr_round(s, REPO, PR, post=False, requested_by="maint", command=dismiss)
    assert dry.status == "dry_run"
    with Store.open(s.db_url) as store:
        assert dismissals_of(store.engine, REPO, PR) == {}


def test_refusal_replies_are_one_per_user_pr_and_hour(seeded: Seeded, tmp_path: Path) -> None:
    """A user without write permission could make the bot post without limit (one reply per refused
    command). Now: one new reply per user, PR and hour; a refusal within the hour that says the same
    posts nothing, one that says something else edits the reply; each is counted by its outcome."""
    fake = seeded.fake
    s = settings(seeded, tmp_path, app=True)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    dismiss = CommentCommand("dismiss", _blocking_fingerprint(seeded), "no")
    fake.add_user("reader")
    fake.add_user("other")
    before = len(fake.comments(REPO, PR))
    fake.clear_log()
    review = CommentCommand("review")
    outcomes = [run_pr_round(s, REPO, PR, post=True, requested_by="reader", command=review) for _ in range(5)]
    assert [o.status for o in outcomes] == ["skipped"] * 5
    assert [o.refusal for o in outcomes] == ["replied", "held", "held", "held", "held"]
    replies = fake.comments(REPO, PR)[before:]
    assert len(replies) == 1 and replies[0].user == BOT and "@reader `/reviewbot review`" in replies[0].body
    assert len(fake.calls("issues/create-comment")) == 1 and fake.calls("issues/update-comment") == []

    # Another refusal by the same user within the hour: the one reply is edited to say it.
    edited = run_pr_round(s, REPO, PR, post=True, requested_by="reader", command=dismiss)
    assert edited.refusal == "edited"
    (reply,) = fake.comments(REPO, PR)[before:]
    assert reply.id == replies[0].id and "`/reviewbot dismiss`" in reply.body and reply.body.count("\n") == 0

    # Another user gets a reply of their own.
    assert run_pr_round(s, REPO, PR, post=True, requested_by="other", command=review).refusal == "replied"
    assert len(fake.comments(REPO, PR)[before:]) == 2

    # An hour later the reader may be told again.
    with fake.world.lock:
        fake.world.comments[reply.id].created_at = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3700)
        )
    again = run_pr_round(s, REPO, PR, post=True, requested_by="reader", command=review)
    assert again.refusal == "replied" and len(fake.comments(REPO, PR)[before:]) == 3
    assert len(fake.calls("issues/create-comment")) == 3
