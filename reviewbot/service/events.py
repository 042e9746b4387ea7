"""What a verified webhook delivery asks for: a round for some pull requests, a pong, or nothing.

Pure functions over GitHub's payloads (see /work/shared/github/webhooks for their schemas): no
I/O, so every rule here is tested directly. Anything we do not act on is *ignored with a reason*,
which the server records with the delivery.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from reviewbot.model.jsonvalue import JSONObject, JSONValue
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
    "BY_HEAD",
]

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})
MAX_COMMENT_CHARS = 65_536  # GitHub's own limit on a comment body
# RoundRequest.pr of a re-run whose PR the payload does not name (fork PRs): the intake finds it by
# the head SHA among the PR's rounds and jobs (reviewbot.service.deliveries).
BY_HEAD = 0
# reviewbot's check runs carry `external_id` "OWNER/NAME#PR@SHA" (github.plan).
_EXTERNAL_ID = re.compile(r"(?P<repo>[^#\s]{1,140})#(?P<pr>[1-9][0-9]{0,9})@(?P<sha>[0-9a-f]{7,64})")


@dataclass(frozen=True)
class RoundRequest:
    """One round wanted for one pull request: what a webhook delivery asks for.

    Made by the delivery's classification (`Decision.requests`); read by service.deliveries, which
    drops duplicates and queues it as a job."""

    repository: str
    pr: int
    head_sha: str | None  # None: review whatever the head is when the job runs
    installation_id: int | None
    trigger: str  # "pull_request.synchronize", "issue_comment.created", ...
    force: bool = False  # an explicit request re-runs a head that already has a round
    # A comment's author: the worker runs the round only if GitHub says they have write permission.
    requested_by: str | None = None
    command: str | None = None  # JSON arguments of a comment command other than a review (dismiss)


@dataclass(frozen=True)
class Decision:
    """The classification of one delivery: `kind` is "round", "cancel" (the PR was closed: its queued
    jobs are cancelled and a running one publishes nothing), "ping" or "ignored"."""

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


def _repository(payload: JSONObject) -> str:
    return text(payload, "repository.full_name", 140, REPOSITORY)


def _installation(payload: JSONObject) -> int | None:
    if optional_obj(payload, "installation") is None:
        return None
    return optional_integer(payload, "installation.id")


def _ignored(
    event: str, action: str | None, reason: str, repo: str | None = None, pr: int | None = None
) -> Decision:
    return Decision(event, action, "ignored", reason, repository=repo, pr=pr)


def _pull_request(payload: JSONObject, action: str | None, review_drafts: bool) -> Decision:
    repo = _repository(payload)
    obj(payload, "pull_request")
    number = integer(payload, "pull_request.number")
    if action == "closed":
        return Decision("pull_request", action, "cancel", "the pull request was closed", (), repo, number)
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


def _command_line(body: str, command: str) -> tuple[str, str | None] | None:
    """("review", None) for a line that is the review command, ("dismiss", JSON arguments) for
    `<prefix word> dismiss <fingerprint-prefix> <reason...>`; None when the comment holds neither.
    A dismiss line wins (its round shows the dismissal)."""
    word = (command.split() or ["/reviewbot"])[0]
    found: tuple[str, str | None] | None = None
    for line in body.splitlines():
        parts = line.strip().split(maxsplit=3)
        if len(parts) >= 2 and parts[0] == word and parts[1] == "dismiss":
            prefix = parts[2] if len(parts) > 2 else ""
            reason = parts[3] if len(parts) > 3 else ""
            args = {"verb": "dismiss", "prefix": prefix[:64], "reason": reason[:1000]}
            return "dismiss", json.dumps(args, ensure_ascii=False)
        if line.strip() == command:
            found = ("review", None)
    return found


def _issue_comment(payload: JSONObject, action: str | None, command: str) -> Decision:
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
    found = _command_line(body, command)
    if found is None:
        return _ignored("issue_comment", action, f"the comment holds no `{command}` line", repo, number)
    verb, args = found
    comment_id = integer(payload, "comment.id", hi=2**63 - 1)
    edited = optional_text(payload, "comment.updated_at", 40, TIMESTAMP) or ""
    optional_obj(payload, "comment.user")
    login = optional_text(payload, "comment.user.login", 64, LOGIN) or ""
    if optional_text(payload, "comment.user.type", 32) == "Bot":
        return _ignored("issue_comment", action, f"comments by bots ({login}) are not commands", repo, number)
    if not login:
        return _ignored("issue_comment", action, "the comment has no author", repo, number)
    if optional_text(payload, "issue.state", 32, TOKEN) == "closed":
        return _ignored("issue_comment", action, "the pull request is closed", repo, number)
    # Who may: decided by the worker with GitHub's permission API (author_association is computed
    # without a viewer and reads CONTRIBUTOR for team writers and private org members).
    trigger = "issue_comment.created" if verb == "review" else f"issue_comment.{verb}"
    request = RoundRequest(
        repo, number, None, _installation(payload), trigger, force=True, requested_by=login, command=args
    )
    return Decision(
        "issue_comment",
        action,
        "round",
        f"{verb} requested by {login} (write permission checked before the round)",
        (request,),
        repo,
        number,
        command_key=f"{comment_id}@{edited}",
    )


def _rerun(event: str, payload: JSONObject, action: str | None, app_id: int | None, key: str) -> Decision:
    """A re-run asked for one of reviewbot's checks: `check_run` (one check) or `check_suite`
    ("Re-run all checks"). The PRs come from the payload's pull_requests; GitHub leaves that list
    empty for PRs from forks, so then from the check run's external_id (reviewbot writes
    "OWNER/NAME#PR@SHA"), else from the head SHA (BY_HEAD: the intake looks up which PR had it)."""
    repo = _repository(payload)
    obj(payload, key)
    if action != "rerequested":
        return _ignored(event, action, f"action {action!r} does not start a round", repo)
    optional_obj(payload, f"{key}.app")
    owner_app = optional_integer(payload, f"{key}.app.id")
    if app_id is not None and owner_app is not None and owner_app != app_id:
        return _ignored(event, action, f"the {event} belongs to another app ({owner_app})", repo)
    head = text(payload, f"{key}.head_sha", 64, SHA)
    pulls = items(payload, f"{key}.pull_requests")
    numbers = sorted(
        {
            as_integer(f"{key}.pull_requests[].number", p["number"])
            for p in pulls
            if isinstance(p, dict) and "number" in p
        }
    )
    how = f"re-run requested for head {head[:12]}"
    if not numbers and key == "check_run":
        ext = _EXTERNAL_ID.fullmatch(optional_text(payload, "check_run.external_id", 256) or "")
        if ext is not None and ext["repo"] == repo and head.startswith(ext["sha"]):
            numbers, how = [int(ext["pr"])], f"{how} (PR #{ext['pr']} from the check run's external_id)"
    if not numbers:
        numbers, how = [BY_HEAD], f"{how} (no pull request in the payload: found by its head SHA)"
    optional_obj(payload, "sender")
    by = optional_text(payload, "sender.login", 64, LOGIN) or None
    trigger = f"{event}.rerequested"
    requests = tuple(RoundRequest(repo, n, head, _installation(payload), trigger, True, by) for n in numbers)
    first = requests[0].pr or None
    return Decision(event, action, "round", how, requests, repo, first)


def _installation_event(event: str, payload: JSONObject, action: str | None) -> Decision:
    """The App installed, uninstalled, suspended, or given other repositories. Nothing to queue:
    every job carries the installation id of the event that made it, and a worker whose cached id
    differs (a reinstall gives a new one) drops its cache for the repository (github.auth); an id
    that is gone answers 404 on its token, after which the worker looks it up again. Recorded with
    the delivery, so the log shows when the installation changed."""
    inst = _installation(payload)
    repos = []
    for key in ("repositories", "repositories_added", "repositories_removed"):
        for item in items(payload, key, 1000):
            if isinstance(item, dict) and isinstance(item.get("full_name"), str):
                repos.append(
                    f"{key.removeprefix('repositories').strip('_') or 'listed'}: {item['full_name']}"
                )
    listed = f" ({', '.join(repos[:10])}{', ...' if len(repos) > 10 else ''})" if repos else ""
    return _ignored(
        event,
        action,
        f"installation {inst} {action or 'changed'}{listed}: no round; jobs carry their installation id, "
        "and a worker drops a cached id that differs or answers 404",
    )


def classify(
    event: str,
    payload: JSONValue,
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
    if event in ("check_run", "check_suite"):
        return _rerun(event, payload, action, app_id, event)
    if event in ("installation", "installation_repositories"):
        return _installation_event(event, payload, action)
    return _ignored(
        event,
        action,
        f"event {event!r} is not handled (subscribe to pull_request, issue_comment, check_run, check_suite)",
        _named_repository(payload),
    )


def _named_repository(payload: JSONObject) -> str | None:
    """The repository an event we do not handle names, if it names one well (for its log line and
    record); never a refusal: the event's shape is not ours to check."""
    try:
        return optional_text(payload, "repository.full_name", 140, REPOSITORY)
    except MalformedPayload:
        return None
