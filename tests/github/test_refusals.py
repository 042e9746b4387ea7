"""GitHub's refusals and configuration faults (issue 15 items 8 and 10), against the fake where it can.

- A review refused with 422 because a force-push took its commit out of the PR: the round is planned
  and published again on the new head (item 8), and GitHub's `errors[]` stays in the message.
- Contents paths are percent-encoded, issue and PR links of any host (GHES) are neutralised, a redirect
  PyGithub refuses is a configuration error, and git older than 2.31 is refused once, up front (item 10).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from reviewbot.errors import EnvironmentProblem, UsageError
from reviewbot.github import run_pr_round
from reviewbot.github.client import ApiCounter, GitHubClient
from reviewbot.github.fallback import _head_text
from reviewbot.github.resilience import Failure
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.workspace import require_git
from reviewbot.report.sanitize import ZWJ, text
from reviewbot.service.events import classify
from tests.github.conftest import APP_SLUG, PR, REPO, Seeded, bot_comments, settings

BOT = f"{APP_SLUG}[bot]"


def _force_pushed(seeded: Seeded) -> str:
    """A commit with round 2's tree straight on the base: round 1 is no longer in its history."""
    bare = seeded.remote.bare
    out = subprocess.run(
        ["git", "-C", str(bare), "commit-tree", f"{seeded.remote.round2}^{{tree}}", "-p", seeded.remote.base],
        input="force-pushed\n",
        capture_output=True,
        text=True,
        check=True,
        env={
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@x",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@x",
        },
    )
    return out.stdout.strip()


def test_a_force_push_while_the_review_is_sent_replans_on_the_new_head(
    seeded: Seeded, tmp_path: Path
) -> None:
    new_head = _force_pushed(seeded)
    hold = seeded.fake.inject(kind="delay", operation="pulls/create-review", delay=1.0, when="before")

    def push_meanwhile() -> None:  # the force-push lands while the review is on its way
        while not hold.total_fired:
            threading.Event().wait(0.02)
        seeded.fake.set_head(REPO, PR, new_head)

    pusher = threading.Thread(target=push_meanwhile)
    pusher.start()
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True)
    pusher.join()

    refused = [r for r in seeded.fake.calls("pulls/create-review") if r.status == 422]
    assert len(refused) == 1 and refused[0].response["errors"] == ["Commit is not part of the pull request"]
    assert outcome.status == "published" and outcome.head_sha == new_head
    assert "Commit is not part of the pull request" in outcome.replanned and "moved" in outcome.replanned
    assert len(bot_comments(seeded, BOT)) == 1
    # The second plan continues from the summary posted for the old head, so its findings are no
    # longer new: at most one review, and never on the commit the force-push removed.
    assert [r.commit_id for r in seeded.fake.reviews(REPO, PR)] in ([], [new_head])
    assert seeded.fake.check_runs(REPO, seeded.remote.round1) == []
    assert len(seeded.fake.check_runs(REPO, new_head)) == 1


def test_githubs_errors_stay_in_the_message() -> None:
    data = {
        "message": "Validation Failed",
        "errors": [
            {"resource": "IssueComment", "field": "body", "code": "missing_field"},
            "Body is too long",
        ],
    }
    failure = Failure.of_answer(422, {}, data)
    assert failure.message == "Validation Failed (IssueComment body missing_field; Body is too long)"


class _Client:
    def __init__(self) -> None:
        self.paths: list[str] = []

    def request(self, method: str, path: str, **_: Any) -> tuple[dict[str, Any], Any]:
        self.paths.append(path)
        return {}, {"encoding": "base64", "content": "eA=="}


def test_contents_paths_are_percent_encoded() -> None:
    api = type("Api", (), {"client": _Client()})()
    pr = type("Pr", (), {"repo": "acme/x", "head_sha": "a" * 40})()
    assert _head_text(api, pr, "docs/a#b?c%d e.md") == ("x", None)  # type: ignore[arg-type]
    assert api.client.paths == ["/repos/acme/x/contents/docs/a%23b%3Fc%25d%20e.md"]


def test_issue_links_of_a_ghes_host_are_neutralised() -> None:
    shown = text("see https://ghe.corp.example/acme/x/pull/12 and https://docs.example/guide")
    assert f"https{ZWJ}://ghe.corp.example/acme/x/pull/12" in shown
    assert "https://docs.example/guide" in shown  # not an issue or PR link: left alone


def test_a_redirect_pygithub_refuses_is_a_configuration_error() -> None:
    client = GitHubClient(None, GitHubSettings(token="t"), ApiCounter())  # type: ignore[arg-type]

    def redirected() -> None:
        raise RuntimeError(
            "Github server redirected from http protocol to https, please correct your Github server URL"
        )

    with pytest.raises(UsageError, match="redirected POST issues"):
        client.call("POST", "POST issues/{n}/comments", redirected)
    with pytest.raises(UsageError, match="uses http://"):
        GitHubSettings(token="t", api_url="http://ghe.corp.example/api/v3")


def test_git_older_than_2_31_is_refused_with_the_reason(tmp_path: Path) -> None:
    old = tmp_path / "old-git"
    old.write_text("#!/bin/sh\necho 'git version 2.30.9'\n")
    old.chmod(0o755)
    with pytest.raises(EnvironmentProblem, match=r"git 2\.30\.9 is too old: reviewbot needs git >= 2\.31"):
        require_git(str(old))
    assert require_git() >= (2, 31)  # the machine's git


def test_installation_events_are_recorded_with_what_changed() -> None:
    decision = classify(
        "installation_repositories",
        {"action": "removed", "installation": {"id": 9}, "repositories_removed": [{"full_name": "acme/x"}]},
    )
    assert decision.kind == "ignored" and decision.requests == ()
    assert decision.reason.startswith("installation 9 removed (removed: acme/x): no round")
    deleted = classify("installation", {"action": "deleted", "installation": {"id": 9}})
    assert "installation 9 deleted" in deleted.reason and "not handled" not in deleted.reason
