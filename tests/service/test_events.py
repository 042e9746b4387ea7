"""Which deliveries ask for a round: GitHub's own payload examples, then each rule on its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewbot.service.events import BY_HEAD, MalformedPayload, classify
from reviewbot.service.signature import sign, verify_signature
from tests.service.helpers import check_run_event, comment_event, ping_event, pull_request_event

EXAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "github" / "webhooks" / "payload-examples"
REPO = "acme/rtp-llm"


def example(relative: str) -> dict[str, Any]:
    path = EXAMPLES / relative
    if not path.exists():
        pytest.skip(f"GitHub's payload examples are not present ({EXAMPLES})")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.mark.parametrize(
    "event,file,kind",
    [
        ("pull_request", "pull_request/opened.payload.json", "round"),
        ("pull_request", "pull_request/opened.with-null-body.json", "round"),
        ("pull_request", "pull_request/synchronize.payload.json", "round"),
        ("pull_request", "pull_request/reopened.payload.json", "round"),
        ("pull_request", "pull_request/ready_for_review.payload.json", "round"),
        ("pull_request", "pull_request/closed.payload.json", "cancel"),  # cancels the PR's jobs
        ("issue_comment", "issue_comment/created.payload.json", "ignored"),  # on an issue
        ("check_run", "check_run/rerequested.payload.json", "by_head"),  # no PR named: by head SHA
        ("ping", "ping/with-app_id.payload.json", "ping"),
        ("installation", "installation/created.payload.json", "ignored"),
    ],
)
def test_githubs_payload_examples(event: str, file: str, kind: str) -> None:
    payload = example(file)
    decision = classify(event, payload)
    if kind == "by_head":  # the intake finds the PR of this head among reviewbot's rounds and jobs
        assert decision.kind == "round" and [r.pr for r in decision.requests] == [BY_HEAD]
        assert decision.requests[0].head_sha == payload["check_run"]["head_sha"]
        return
    assert decision.kind == kind, decision.reason
    if kind == "round":
        (request,) = decision.requests
        assert request.repository == payload["repository"]["full_name"]
        assert request.pr == payload["pull_request"]["number"]
        assert request.head_sha == payload["pull_request"]["head"]["sha"]
        assert request.trigger == f"pull_request.{payload['action']}"
        assert not request.force


def test_synchronize_example_carries_the_new_head_and_installation() -> None:
    payload = example("pull_request/synchronize.payload.json")
    (request,) = classify("pull_request", payload).requests
    assert request.head_sha == payload["after"]
    assert request.installation_id == payload["installation"]["id"]


def test_drafts_only_when_configured() -> None:
    payload = pull_request_event("opened", REPO, 3, "a" * 40, draft=True)
    assert classify("pull_request", payload).kind == "ignored"
    assert classify("pull_request", payload, review_drafts=True).kind == "round"


@pytest.mark.parametrize(
    "body,association,bot,kind",
    [
        ("/reviewbot review", "OWNER", False, "round"),
        ("Thanks!\n  /reviewbot review  \n", "COLLABORATOR", False, "round"),
        ("/reviewbot review", "MEMBER", False, "round"),
        # author_association is not the rule: the worker asks GitHub for the commenter's permission.
        ("/reviewbot review", "CONTRIBUTOR", False, "round"),
        ("/reviewbot review", "NONE", False, "round"),
        ("/reviewbot review", "OWNER", True, "ignored"),
        ("please /reviewbot review this", "OWNER", False, "ignored"),  # the command is a line of its own
        ("/reviewbot reviewed", "OWNER", False, "ignored"),
    ],
)
def test_review_command(body: str, association: str, bot: bool, kind: str) -> None:
    decision = classify("issue_comment", comment_event(REPO, 4, body, association=association, bot=bot))
    assert decision.kind == kind, decision.reason
    if kind == "round":
        (request,) = decision.requests
        assert (request.pr, request.head_sha, request.force) == (4, None, True)
        assert request.requested_by == "maintainer" and request.command is None


def test_dismiss_command_carries_its_arguments_to_the_worker() -> None:
    body = "LGTM otherwise.\n/reviewbot dismiss 3f2a9c1e covered by the integration suite\n"
    decision = classify("issue_comment", comment_event(REPO, 4, body, association="CONTRIBUTOR"))
    (request,) = decision.requests
    assert (request.trigger, request.force, request.requested_by) == (
        "issue_comment.dismiss",
        True,
        "maintainer",
    )
    assert json.loads(request.command or "") == {
        "verb": "dismiss",
        "prefix": "3f2a9c1e",
        "reason": "covered by the integration suite",
    }
    # Without arguments it still reaches the worker, whose one-line reply says what is missing.
    (bare,) = classify("issue_comment", comment_event(REPO, 4, "/reviewbot dismiss")).requests
    assert json.loads(bare.command or "") == {"verb": "dismiss", "prefix": "", "reason": ""}
    assert classify("issue_comment", comment_event(REPO, 4, "/reviewbot dismissal x y")).kind == "ignored"


def test_a_custom_command() -> None:
    payload = comment_event(REPO, 4, "/bot check")
    assert classify("issue_comment", payload, command="/bot check").kind == "round"
    assert classify("issue_comment", payload).kind == "ignored"


def test_check_run_rerequested_for_our_app_only() -> None:
    payload = check_run_event(REPO, [5, 6], "b" * 40, app_id=4242)
    decision = classify("check_run", payload, app_id=4242)
    assert [(r.pr, r.head_sha, r.force) for r in decision.requests] == [
        (5, "b" * 40, True),
        (6, "b" * 40, True),
    ]
    assert classify("check_run", payload, app_id=1).kind == "ignored"


def test_fork_rerun_without_pull_requests_uses_the_external_id() -> None:
    head = "c" * 40
    payload = check_run_event(REPO, [], head)
    payload["check_run"]["external_id"] = f"{REPO}#9@{head}"
    (request,) = classify("check_run", payload, app_id=4242).requests
    assert (request.pr, request.head_sha, request.trigger) == (9, head, "check_run.rerequested")
    payload["check_run"]["external_id"] = f"other/repo#9@{head}"  # not ours to trust: by head instead
    assert [r.pr for r in classify("check_run", payload).requests] == [BY_HEAD]


def test_check_suite_rerequested() -> None:
    head = "d" * 40
    suite: dict[str, Any] = {
        "action": "rerequested",
        "repository": check_run_event(REPO, [], head)["repository"],
    }
    suite["check_suite"] = {"head_sha": head, "app": {"id": 4242}, "pull_requests": [{"number": 3}]}
    (request,) = classify("check_suite", suite, app_id=4242).requests
    assert (request.pr, request.head_sha, request.trigger) == (3, head, "check_suite.rerequested")
    assert classify("check_suite", suite, app_id=1).kind == "ignored"
    suite["check_suite"]["pull_requests"] = []
    assert [r.pr for r in classify("check_suite", suite).requests] == [BY_HEAD]
    assert classify("check_suite", {**suite, "action": "completed"}).kind == "ignored"


def test_ping_and_unknown_events() -> None:
    assert classify("ping", ping_event()).kind == "ping"
    decision = classify("push", {"ref": "refs/heads/main"})
    assert decision.kind == "ignored" and "not handled" in decision.reason


@pytest.mark.parametrize("payload", [[], "x", {"action": "opened"}, {"action": "opened", "repository": {}}])
def test_payloads_without_what_their_event_carries_are_malformed(payload: Any) -> None:
    with pytest.raises(MalformedPayload):
        classify("pull_request", payload)


def test_signature_matches_githubs_documented_example() -> None:
    secret, body = b"It's a Secret to Everybody", b"Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign(secret, body) == expected
    assert verify_signature(secret, body, expected)
    assert not verify_signature(secret, body + b" ", expected)
    assert not verify_signature(b"other", body, expected)
    assert not verify_signature(secret, body, expected.upper())
    assert not verify_signature(secret, body, "sha256=\u00e9")
    assert not verify_signature(secret, body, None)
    assert not verify_signature(b"", body, expected)
