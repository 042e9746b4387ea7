"""What a verified webhook delivery asks for: a round for some pull requests, a pong, or nothing.

Pure functions over GitHub's payloads (see /work/shared/github/webhooks for their schemas): no
I/O, so every rule here is tested directly. Anything we do not act on is *ignored with a reason*,
which the server records with the delivery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewbot.errors import ReviewbotError

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


class MalformedPayload(ReviewbotError):
    """A signed delivery whose JSON lacks what its event must carry."""

    exit_code = 2


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


def _get(payload: dict[str, Any], *path: str) -> Any:
    node: Any = payload
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise MalformedPayload(
                f"the payload has no `{'.'.join(path)}`; is this delivery really from GitHub?"
            )
        node = node[key]
    return node


def _installation(payload: dict[str, Any]) -> int | None:
    inst = payload.get("installation")
    if isinstance(inst, dict) and isinstance(inst.get("id"), int):
        return int(inst["id"])
    return None


def _ignored(
    event: str, action: str | None, reason: str, repo: str | None = None, pr: int | None = None
) -> Decision:
    return Decision(event, action, "ignored", reason, repository=repo, pr=pr)


def _pull_request(payload: dict[str, Any], action: str | None, review_drafts: bool) -> Decision:
    repo = str(_get(payload, "repository", "full_name"))
    pr = _get(payload, "pull_request")
    number = int(_get(payload, "pull_request", "number"))
    if action not in PR_ACTIONS:
        return _ignored("pull_request", action, f"action {action!r} does not start a round", repo, number)
    if pr.get("state") == "closed":
        return _ignored("pull_request", action, "the pull request is closed", repo, number)
    if pr.get("draft") and not review_drafts:
        return _ignored(
            "pull_request", action, "draft pull request (set review_drafts to review drafts)", repo, number
        )
    head = str(_get(payload, "pull_request", "head", "sha"))
    request = RoundRequest(repo, number, head, _installation(payload), f"pull_request.{action}")
    return Decision("pull_request", action, "round", f"head {head[:12]}", (request,), repo, number)


def _issue_comment(payload: dict[str, Any], action: str | None, command: str) -> Decision:
    repo = str(_get(payload, "repository", "full_name"))
    issue = _get(payload, "issue")
    number = int(_get(payload, "issue", "number"))
    if action != "created":
        return _ignored("issue_comment", action, f"action {action!r} is not a new comment", repo, number)
    if not issue.get("pull_request"):
        return _ignored(
            "issue_comment", action, "the comment is on an issue, not a pull request", repo, number
        )
    comment = _get(payload, "comment")
    body = str(comment.get("body") or "")
    if not any(line.strip() == command for line in body.splitlines()):
        return _ignored("issue_comment", action, f"the comment holds no `{command}` line", repo, number)
    user = comment.get("user") or {}
    login = str(user.get("login") or "")
    if user.get("type") == "Bot":
        return _ignored("issue_comment", action, f"comments by bots ({login}) are not commands", repo, number)
    association = str(comment.get("author_association") or "NONE")
    if association not in WRITE_ASSOCIATIONS:
        return _ignored(
            "issue_comment",
            action,
            f"{login} may not request reviews (author_association {association}; needs write access)",
            repo,
            number,
        )
    if issue.get("state") == "closed":
        return _ignored("issue_comment", action, "the pull request is closed", repo, number)
    request = RoundRequest(
        repo, number, None, _installation(payload), "issue_comment.created", force=True, requested_by=login
    )
    return Decision("issue_comment", action, "round", f"requested by {login}", (request,), repo, number)


def _check_run(payload: dict[str, Any], action: str | None, app_id: int | None) -> Decision:
    repo = str(_get(payload, "repository", "full_name"))
    run = _get(payload, "check_run")
    if action != "rerequested":
        return _ignored("check_run", action, f"action {action!r} does not start a round", repo)
    owner_app = (run.get("app") or {}).get("id")
    if app_id is not None and owner_app is not None and int(owner_app) != app_id:
        return _ignored("check_run", action, f"the check run belongs to another app ({owner_app})", repo)
    head = str(_get(payload, "check_run", "head_sha"))
    pulls = [p for p in run.get("pull_requests") or [] if isinstance(p, dict) and "number" in p]
    if not pulls:
        return _ignored(
            "check_run", action, "the check run is not attached to a pull request of this repository", repo
        )
    by = str((payload.get("sender") or {}).get("login") or "") or None
    requests = tuple(
        RoundRequest(repo, int(p["number"]), head, _installation(payload), "check_run.rerequested", True, by)
        for p in pulls
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
    action = payload.get("action")
    action = str(action) if action is not None else None
    if event == "ping":
        return Decision("ping", None, "ping", str(payload.get("zen") or "pong"))
    if event == "pull_request":
        return _pull_request(payload, action, review_drafts)
    if event == "issue_comment":
        return _issue_comment(payload, action, command)
    if event == "check_run":
        return _check_run(payload, action, app_id)
    return _ignored(
        event, action, f"event {event!r} is not handled (subscribe to pull_request, issue_comment, check_run)"
    )
