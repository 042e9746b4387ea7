"""`/reviewbot` comment commands on GitHub: who may run them, and what `dismiss` records.

A command job carries who commented (`requested_by`) and, for `dismiss`, its arguments. Before the
round: the commenter must have write permission on the repository (github.permissions, asked of
GitHub, not read from the payload's author_association); otherwise a one-line reply says so and
nothing changes. `dismiss <fingerprint-prefix> <reason>` is matched against the open findings of
the PR's latest round (the store's, else the state in the bot's comment) and recorded in the
store; the round that follows shows the finding dismissed and not blocking.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reviewbot.errors import StoreError, UsageError
from reviewbot.github.api import IssueComment, PullRequestInfo, RestApi
from reviewbot.github.permissions import Permissions
from reviewbot.model.finding import Finding
from reviewbot.report.marker import State
from reviewbot.review.rounds import OPEN_STATES
from reviewbot.store.dismissals import match_prefix, record_dismissal
from reviewbot.store.store import Store

__all__ = ["CommentCommand", "REFUSAL_INTERVAL", "Refusal", "refusal_marker", "run_command"]

log = logging.getLogger(__name__)

REFUSAL_INTERVAL = 3600.0  # seconds: at most one new refusal reply per user and PR in this time


def refusal_marker(user: str) -> str:
    """Hidden at the end of a refusal reply: whom it answered (found again by it)."""
    return f"<!-- reviewbot:refusal user={user} -->"


@dataclass
class Refusal:
    """What refusing a command did on GitHub: "replied" (a new reply), "edited" (the reply of the hour
    edited to say this one), "held" (the reply of the hour already says it), "" (a dry run)."""

    outcome: str = ""


def _epoch(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class CommentCommand:
    """A `/reviewbot` command from a PR comment: `verb` "review" or "dismiss"."""

    verb: str
    prefix: str = ""
    reason: str = ""

    def to_json(self) -> str:
        return json.dumps({"verb": self.verb, "prefix": self.prefix, "reason": self.reason})

    @classmethod
    def from_json(cls, text: str | None) -> CommentCommand:
        data: Any = json.loads(text) if text else {}
        if not isinstance(data, dict):
            return cls("review")
        return cls(
            str(data.get("verb") or "review"), str(data.get("prefix") or ""), str(data.get("reason") or "")
        )


def _candidates(store: Store, pr: PullRequestInfo, state: State | None) -> tuple[list[Finding], str]:
    latest = store.latest_round(pr.repo, pr.number)
    if latest is not None:
        return latest.open_findings, f"round {latest.round_index}"
    if state is not None:
        found = [f.to_finding() for f in state.findings if f.state in OPEN_STATES]
        return found, f"round {state.round_index}"
    return [], "any round"


def run_command(
    api: RestApi,
    perms: Permissions,
    pr: PullRequestInfo,
    by: str,
    command: CommentCommand,
    *,
    db_url: str | None,
    state: State | None,
    post: bool,
    bot_login: str | None = None,
    refusal: Refusal | None = None,
) -> str:
    """Check and carry out `command` by `by` before the round; "" to go on with the round, else
    why nothing was done (replied on the PR in one line when `post`, at most one new reply per user,
    PR and hour: `refusal` says what was done)."""
    refusal = refusal if refusal is not None else Refusal()
    role = perms.role(by)
    if not perms.can_write(by):
        why = (
            f"@{by} `/reviewbot {command.verb}` needs write permission on {pr.repo} "
            f"(yours: {role}); nothing was changed."
        )
        return _refuse(api, pr, by, why, post, bot_login, refusal)
    if command.verb != "dismiss":
        return ""
    try:
        with Store.open(db_url) as store:
            found, where = _candidates(store, pr, state)
            finding = match_prefix(found, command.prefix, f"{where} of PR #{pr.number}")
            if not post:  # a dry run changes nothing, the store included
                log.info("%s #%d: dry run: %s would dismiss %s", pr.repo, pr.number, by, finding.fingerprint)
                return ""
            d = record_dismissal(
                store.engine, pr.repo, pr.number, finding, reason=command.reason, by=by, source="comment"
            )
    except UsageError as exc:
        return _refuse(api, pr, by, f"@{by} {exc}; nothing was dismissed.", post, bot_login, refusal)
    except StoreError as exc:
        raise StoreError(f"the dismissal by {by} could not be recorded: {exc}") from exc
    log.info(
        "%s #%d: %s dismissed %s (%s): %s",
        pr.repo,
        pr.number,
        by,
        finding.fingerprint,
        finding.rule,
        d.reason,
    )
    return ""


def _refuse(
    api: RestApi,
    pr: PullRequestInfo,
    by: str,
    text: str,
    post: bool,
    bot_login: str | None,
    refusal: Refusal,
) -> str:
    if not post:
        return text
    marker = refusal_marker(by)
    body = f"{text} {marker}"  # one line: the marker is an HTML comment at its end
    comments = api.list_issue_comments(pr.repo, pr.number)
    mine = [c for c in comments if marker in c.body and (bot_login is None or c.user == bot_login)]
    now = time.time()
    recent = [c for c in mine if (_epoch(c.created_at) or 0.0) > now - REFUSAL_INTERVAL]
    if recent:
        last = recent[-1]
        if last.body == body:
            refusal.outcome = "held"
        else:
            api.update_issue_comment(pr.repo, last.id, body)  # an edit notifies nobody
            refusal.outcome = "edited"
        log.info(
            "%s #%d: %s refused again within the hour; reply %d %s",
            pr.repo,
            pr.number,
            by,
            last.id,
            refusal.outcome,
        )
        return text

    # An unanswered POST may land late: look for the reply before sending it again.
    def landed() -> IssueComment | None:
        return next((c for c in api.list_issue_comments(pr.repo, pr.number) if c.body == body), None)

    api.create_issue_comment(pr.repo, pr.number, body, reconcile=landed)
    refusal.outcome = "replied"
    return text
