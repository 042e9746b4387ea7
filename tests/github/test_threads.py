"""Review threads follow findings, against the fake GitHub's GraphQL API (issue 17 item 2).

Round 1 of the bundled example posts inline comments; each becomes a review thread. These tests read
the threads back the way any GraphQL client would (the fake validates every request against GitHub's
schema excerpt) and check what reviewbot did to them round after round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from reviewbot.github import run_pr_round
from reviewbot.github.dryrun import plan_json, plan_text
from reviewbot.github.threads import finding_marker
from tests.fakegithub import push
from tests.github.conftest import APP_SLUG, PR, REPO, Seeded, bot_comments, settings
from tests.gitrepo import git

BOT = f"{APP_SLUG}[bot]"
_QUERY = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
    reviewThreads(first: 100) { nodes { id isResolved isOutdated path line originalLine
      resolvedBy { login } comments(first: 1) { nodes { fullDatabaseId body author { login } } } } } } }
}"""


def _threads(seeded: Seeded) -> list[dict[str, Any]]:
    """The PR's review threads as GitHub's GraphQL API shows them (read with a user's token)."""
    owner, name = REPO.split("/")
    answer = requests.post(
        seeded.fake.api_url.removesuffix("/v3") + "/graphql",
        json={"query": _QUERY, "variables": {"owner": owner, "name": name, "number": PR}},
        headers={"Authorization": f"token {seeded.token}"},
        timeout=10,
    ).json()
    assert "errors" not in answer, answer
    nodes: list[dict[str, Any]] = answer["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"]
    return nodes


def _fingerprint_of(thread: dict[str, Any]) -> str:
    body = thread["comments"]["nodes"][0]["body"]
    return str(body.rsplit("<!-- reviewbot:finding ", 1)[1].split(" ")[0])


def _graphql(seeded: Seeded) -> list[str]:
    """What reviewbot sent to GraphQL, in order: 'query' or 'mutation' per request."""
    return [
        r.operation.removeprefix("graphql/") for r in seeded.fake.log if r.operation.startswith("graphql/")
    ]


def _push_on(seeded: Seeded, base: str, path: str, edit: Any, message: str) -> str:
    src = seeded.remote.example.path
    git(src, "checkout", "-q", base)
    file = src / path
    file.write_text(edit(file.read_text()))
    git(src, "commit", "-q", "-am", message)
    sha = git(src, "rev-parse", "HEAD")
    push(src, seeded.remote.bare, sha, "refs/heads/feature")
    return sha


def test_round_two_resolves_the_thread_of_the_finding_it_fixed(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    first = run_pr_round(s, REPO, PR, post=True)
    assert first.review is not None
    threads = _threads(seeded)
    new = {f.fingerprint: f for f in first.review.findings if f.state == "new"}
    assert {_fingerprint_of(t) for t in threads} == set(new) and len(threads) == len(new) >= 1
    assert not any(t["isResolved"] for t in threads)

    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.clear_log()
    second = run_pr_round(s, REPO, PR, post=True)
    sent = _graphql(seeded)
    assert second.review is not None and second.published is not None
    fixed = {f.fingerprint for f in second.review.round.fixed}
    assert [f.rule for f in second.review.round.fixed] == ["missing-tests"]

    after = {t["id"]: t for t in _threads(seeded)}
    resolved = {t["id"] for t in after.values() if t["isResolved"]}
    expected = {t["id"] for t in threads if _fingerprint_of(t) in fixed}
    assert resolved == expected and len(expected) == 1
    (thread,) = (after[i] for i in expected)
    assert thread["resolvedBy"] == {"login": APP_SLUG}  # GraphQL names the App's bot by its slug
    assert second.published.resolved_threads == sorted(expected)
    # One query for the threads, one mutation per fixed finding's thread; the KPI counted both.
    assert sent == ["query", "mutation"]
    made = [r for r in seeded.fake.log if r.auth != "jwt" and not r.operation.startswith("apps/")]
    assert second.review.kpi["api_writes"] == sum(1 for r in made if r.write) == 3  # PATCH, resolve, check
    # The plan (and so the dry run) names the thread it resolves.
    assert second.plan is not None and [th.id for th in second.plan.resolve_threads] == sorted(expected)

    # A re-run of the same head resolves nothing twice and posts nothing new.
    seeded.fake.clear_log()
    again = run_pr_round(s, REPO, PR, post=True)
    assert again.plan is not None and again.plan.resolve_threads == ()
    assert "mutation" not in _graphql(seeded)
    assert {t["id"] for t in _threads(seeded) if t["isResolved"]} == expected


def test_an_open_finding_gets_no_second_inline_comment(seeded: Seeded, tmp_path: Path) -> None:
    # No store: when the summary comment is gone, the round starts over at round 1 and every
    # finding reads as new again; the threads are what still says they were commented on.
    s = settings(seeded, tmp_path, app=True, record_rounds=False)
    first = run_pr_round(s, REPO, PR, post=True)
    assert first.review is not None
    inline = seeded.fake.review_comments(REPO, PR)
    assert inline and len(seeded.fake.reviews(REPO, PR)) == 1

    (summary,) = bot_comments(seeded, BOT)
    requests.delete(
        f"{seeded.fake.api_url}/repos/{REPO}/issues/comments/{summary.id}",
        headers={"Authorization": f"token {seeded.token}"},
        timeout=10,
    ).raise_for_status()
    # The same head again (a re-run): without the state nothing says a review for it exists.
    second = run_pr_round(s, REPO, PR, post=True)
    assert second.review is not None and second.review.round.round_index == 1
    renewed = {f.fingerprint for f in second.review.findings if f.state == "new"}
    assert renewed >= {_fingerprint_of(t) for t in _threads(seeded)}  # all read as new again ...
    assert seeded.fake.review_comments(REPO, PR) == inline  # ... and none is commented on again
    assert len(seeded.fake.reviews(REPO, PR)) == 1 and second.plan is not None and second.plan.review is None
    assert len(bot_comments(seeded, BOT)) == 1  # the summary itself comes back, once


def test_a_still_open_finding_keeps_its_thread_when_its_line_moves(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    first = run_pr_round(s, REPO, PR, post=True)
    assert first.review is not None
    before = {_fingerprint_of(t): t for t in _threads(seeded)}
    moved_path = next(t["path"] for t in before.values() if t["path"].endswith(".cc"))

    # Three lines above everything: every finding in the file moves down by three.
    head = _push_on(seeded, seeded.remote.round1, moved_path, lambda t: "// a\n// b\n// c\n" + t, "header")
    seeded.fake.set_head(REPO, PR, head)
    second = run_pr_round(s, REPO, PR, post=True)
    assert second.review is not None
    still = {f.fingerprint: f for f in second.review.findings if f.state == "still_open"}
    after = {_fingerprint_of(t): t for t in _threads(seeded)}
    moved = [fp for fp, t in before.items() if t["path"] == moved_path and fp in still]
    assert moved
    for fp in moved:
        assert after[fp]["id"] == before[fp]["id"] and not after[fp]["isResolved"]
        assert after[fp]["line"] == before[fp]["line"] + 3 == still[fp].line  # GitHub mapped the thread
        assert not after[fp]["isOutdated"]
    assert len(after) == len(before)  # no thread was added for a finding that only moved
    assert finding_marker(moved[0]) in after[moved[0]]["comments"]["nodes"][0]["body"]


def test_a_thread_on_a_changed_line_is_outdated_and_still_not_repeated(
    seeded: Seeded, tmp_path: Path
) -> None:
    s = settings(seeded, tmp_path, app=True)
    first = run_pr_round(s, REPO, PR, post=True)
    assert first.review is not None
    (thread, *_) = [t for t in _threads(seeded) if t["path"].endswith(".cc")]
    line = thread["line"]

    def touch(text: str) -> str:  # the commented line itself changes (a trailing comment)
        lines = text.split("\n")
        lines[line - 1] += "  // reviewed"
        return "\n".join(lines)

    seeded.fake.set_head(REPO, PR, _push_on(seeded, seeded.remote.round1, thread["path"], touch, "touch"))
    second = run_pr_round(s, REPO, PR, post=True)
    assert second.review is not None
    (after,) = [t for t in _threads(seeded) if t["id"] == thread["id"]]
    assert after["isOutdated"] and after["line"] is None and after["originalLine"] == line
    fp = _fingerprint_of(thread)
    if any(f.fingerprint == fp and f.state != "new" for f in second.review.findings):
        assert not after["isResolved"]  # still open: the outdated thread stays, nothing is re-posted
    assert sum(1 for t in _threads(seeded) if _fingerprint_of(t) == fp) == 1


def _two_rounds(seeded: Seeded, tmp_path: Path, **fault: Any) -> tuple[Any, set[str]]:
    """Round 1, then round 2 (which fixes one finding) with `fault` injected; (round 2, its fixed
    findings' thread ids)."""
    s = settings(seeded, tmp_path, app=True, timeout=1.0)
    first = run_pr_round(s, REPO, PR, post=True)
    assert first.review is not None
    fixed_rule = {f.fingerprint for f in first.review.findings if f.rule == "missing-tests"}
    expected = {t["id"] for t in _threads(seeded) if _fingerprint_of(t) in fixed_rule}
    assert len(expected) == 1
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.inject(**fault)
    seeded.fake.clear_log()
    return run_pr_round(s, REPO, PR, post=True), expected


def _one_of_each(seeded: Seeded) -> None:
    assert len(bot_comments(seeded, BOT)) == 1 and len(seeded.fake.comments(REPO, PR)) == 1
    assert len(seeded.fake.reviews(REPO, PR)) == 1  # round 2 has nothing new to comment on
    assert len(seeded.fake.check_runs(REPO, seeded.remote.round2)) == 1


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "status", "status": 502},
        {"kind": "disconnect"},
        {"kind": "delay", "delay": 2.5, "when": "after"},  # resolved, but the answer comes after the timeout
        {"kind": "secondary_rate_limit", "retry_after": 1},
        {"kind": "token_expiry"},
    ],
    ids=lambda f: str(f["kind"]),
)
def test_a_fault_on_resolving_still_resolves_and_publishes_once(
    seeded: Seeded, tmp_path: Path, fault: dict[str, Any]
) -> None:
    second, expected = _two_rounds(seeded, tmp_path, operation="graphql/mutation", **fault)
    sent = seeded.fake.calls("graphql/mutation")
    assert second.status == "published" and second.published is not None
    assert {t["id"] for t in _threads(seeded) if t["isResolved"]} == expected
    _one_of_each(seeded)
    assert sent[0].fault == fault["kind"] and len(sent) == 2  # the fault, then one more attempt
    assert sent[-1].status == 200 and second.published.resolved_threads == sorted(expected)


@pytest.mark.parametrize("operation", ["graphql/query", "graphql/mutation"])
def test_threads_github_refuses_do_not_hold_back_the_round(
    seeded: Seeded, tmp_path: Path, operation: str
) -> None:
    # A refusal (e.g. a GHES whose App may not use GraphQL) is final for the threads, not for the round.
    second, expected = _two_rounds(seeded, tmp_path, kind="status", status=403, operation=operation)
    assert [r.status for r in seeded.fake.calls(operation)] == [403]  # not retried
    assert second.status == "published" and second.published is not None
    assert not any(t["isResolved"] for t in _threads(seeded))
    _one_of_each(seeded)
    what = "could not be read" if operation == "graphql/query" else "not resolved"
    assert [n for n in second.published.notes if what in n]


def test_the_dry_run_names_the_threads_post_would_resolve_and_writes_nothing(
    seeded: Seeded, tmp_path: Path
) -> None:
    s = settings(seeded, tmp_path, app=True)
    run_pr_round(s, REPO, PR, post=True)
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.clear_log()
    dry = run_pr_round(s, REPO, PR, post=False)
    assert dry.status == "dry_run" and dry.plan is not None
    assert seeded.fake.writes(auth=False) == []  # the thread query is a read, though a POST
    assert [r.operation for r in seeded.fake.log if r.operation.startswith("graphql/")] == ["graphql/query"]
    (planned,) = plan_json(dry.plan)["resolve_threads"]
    assert planned["thread_id"] in plan_text(dry.plan) and not any(t["isResolved"] for t in _threads(seeded))
    assert dry.plan.write_calls == 3  # the summary edit, the resolution, the check run

    posted = run_pr_round(s, REPO, PR, post=True)
    assert posted.published is not None and posted.published.resolved_threads == [planned["thread_id"]]
