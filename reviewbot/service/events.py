"""What a verified webhook delivery asks for: a round for some pull requests, a pong, or nothing.

Pure functions over GitHub's payloads (see /work/shared/github/webhooks for their schemas): no
I/O, so every rule here is tested directly. Anything we do not act on is *ignored with a reason*,
which the server records with the delivery.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from reviewbot.service.payload import (
    LOGIN,
    REPOSITORY,
    SHA,
    TIMESTAMP,
    TOKEN,
    MalformedPayload,
    as_integer,
    flag,
    integer,
    items,
    obj,
    optional_integer,
    optional_obj,
    optional_text,
    text,
)

__all__ = [
    "Decision",
    "MalformedPayload",
    "RoundRequest",
    "classify",
    "PR_ACTIONS",
    "WRITE_ASSOCIATIONS",
]

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})
# author_association values that imply write access to the repository.
WRITE_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
_ASSOCIATION = re.compile(r"[A-Z_]{1,32}")
MAX_COMMENT_CHARS = 65_536  # GitHub's own limit on a comment body


@dataclass(frozen=True)
class RoundRequest:
    """One round wanted for one pull request."""

    repository: str
    pr: int
    head_sha: str | None  # None: review whatever the head is when the job runs
    installation_id: int | None
    trigger: str  # "pull_request.synchronize", "issue_comment.created", ...
    force: bool = False  # an explicit request re-runs a head that already has a round
    requested_by: str | None = None


@dataclass(frozen=True)
class Decision:
    """The classification of one delivery: `kind` is "round", "ping" or "ignored"."""

    event: str
    action: str | None
    kind: str
    reason: str
    requests: tuple[RoundRequest, ...] = ()
    repository: str | None = None
    pr: int | None = None
    # A `/reviewbot` comment: "<comment id>@<updated_at>". The same comment delivered again (a replay
    # under a new delivery id) must not run a new round; an edit gives a new key.
    command_key: str | None = None


def _repository(payload: dict[str, Any]) -> str:
    return text(payload, "repository.full_name", 140, REPOSITORY)


def _installation(payload: dict[str, Any]) -> int | None:
    if optional_obj(payload, "installation") is None:
        return None
    return optional_integer(payload, "installation.id")


def _ignored(
    event: str, action: str | None, reason: str, repo: str | None = None, pr: int | None = None
) -> Decision:
    return Decision(event, action, "ignored", reason, repository=repo, pr=pr)


def _pull_request(payload: dict[str, Any], action: str | None, review_drafts: bool) -> Decision:
    repo = _repository(payload)
    obj(payload, "pull_request")
    number = integer(payload, "pull_request.number")
    if action not in PR_ACTIONS:
        return _ignored("pull_request", action, f"action {action!r} does not start a round", repo, number)
    if optional_text(payload, "pull_request.state", 32, TOKEN) == "closed":
        return _ignored("pull_request", action, "the pull request is closed", repo, number)
    if flag(payload, "pull_request.draft") and not review_drafts:
        return _ignored(
            "pull_request", action, "draft pull request (set review_drafts to review drafts)", repo, number
        )
    head = text(payload, "pull_request.head.sha", 64, SHA)
    request = RoundRequest(repo, number, head, _installation(payload), f"pull_request.{action}")
    return Decision("pull_request", action, "round", f"head {head[:12]}", (request,), repo, number)


def _issue_comment(payload: dict[str, Any], action: str | None, command: str) -> Decision:
    repo = _repository(payload)
    obj(payload, "issue")
    number = integer(payload, "issue.number")
    if action != "created":
        return _ignored("issue_comment", action, f"action {action!r} is not a new comment", repo, number)
    if optional_obj(payload, "issue.pull_request") is None:
        return _ignored(
            "issue_comment", action, "the comment is on an issue, not a pull request", repo, number
        )
    obj(payload, "comment")
    body = optional_text(payload, "comment.body", MAX_COMMENT_CHARS) or ""
    if not any(line.strip() == command for line in body.splitlines()):
        return _ignored("issue_comment", action, f"the comment holds no `{command}` line", repo, number)
    comment_id = integer(payload, "comment.id", hi=2**63 - 1)
    edited = optional_text(payload, "comment.updated_at", 40, TIMESTAMP) or ""
    optional_obj(payload, "comment.user")
    login = optional_text(payload, "comment.user.login", 64, LOGIN) or ""
    if optional_text(payload, "comment.user.type", 32) == "Bot":
        return _ignored("issue_comment", action, f"comments by bots ({login}) are not commands", repo, number)
    association = optional_text(payload, "comment.author_association", 32, _ASSOCIATION) or "NONE"
    if association not in WRITE_ASSOCIATIONS:
        return _ignored(
            "issue_comment",
            action,
            f"{login} may not request reviews (author_association {association}; needs write access)",
            repo,
            number,
        )
    if optional_text(payload, "issue.state", 32, TOKEN) == "closed":
        return _ignored("issue_comment", action, "the pull request is closed", repo, number)
    request = RoundRequest(
        repo, number, None, _installation(payload), "issue_comment.created", force=True, requested_by=login
    )
    return Decision(
        "issue_comment",
        action,
        "round",
        f"requested by {login}",
        (request,),
        repo,
        number,
        command_key=f"{comment_id}@{edited}",
    )


def _check_run(payload: dict[str, Any], action: str | None, app_id: int | None) -> Decision:
    repo = _repository(payload)
    obj(payload, "check_run")
    if action != "rerequested":
        return _ignored("check_run", action, f"action {action!r} does not start a round", repo)
    optional_obj(payload, "check_run.app")
    owner_app = optional_integer(payload, "check_run.app.id")
    if app_id is not None and owner_app is not None and owner_app != app_id:
        return _ignored("check_run", action, f"the check run belongs to another app ({owner_app})", repo)
    head = text(payload, "check_run.head_sha", 64, SHA)
    pulls = items(payload, "check_run.pull_requests")
    numbers = sorted(
        {
            as_integer("check_run.pull_requests[].number", p["number"])
            for p in pulls
            if isinstance(p, dict) and "number" in p
        }
    )
    if not numbers:
        return _ignored(
            "check_run", action, "the check run is not attached to a pull request of this repository", repo
        )
    optional_obj(payload, "sender")
    by = optional_text(payload, "sender.login", 64, LOGIN) or None
    requests = tuple(
        RoundRequest(repo, n, head, _installation(payload), "check_run.rerequested", True, by)
        for n in numbers
    )
    first = requests[0].pr
    return Decision(
        "check_run", action, "round", f"re-run requested for head {head[:12]}", requests, repo, first
    )


def classify(
    event: str,
    payload: Any,
    *,
    review_drafts: bool = False,
    command: str = "/reviewbot review",
    app_id: int | None = None,
) -> Decision:
    """Decide what a verified delivery of `event` (the X-GitHub-Event header) asks for.

    Raises MalformedPayload when the payload lacks a field its event always carries.
    """
    if not isinstance(payload, dict):
        raise MalformedPayload("the payload is not a JSON object; is this delivery really from GitHub?")
    action = optional_text(payload, "action", 64, TOKEN)
    if event == "ping":
        return Decision("ping", None, "ping", optional_text(payload, "zen", 200) or "pong")
    if event == "pull_request":
        return _pull_request(payload, action, review_drafts)
    if event == "issue_comment":
        return _issue_comment(payload, action, command)
    if event == "check_run":
        return _check_run(payload, action, app_id)
    return _ignored(
        event, action, f"event {event!r} is not handled (subscribe to pull_request, issue_comment, check_run)"
    )
