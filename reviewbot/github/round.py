"""One review round of a GitHub pull request, from the API call to the check run.

`run_pr_round` is the whole GitHub round as one function: the CLI's `reviewbot run --pr N` calls
it, and so does the App worker. It reads the PR, skips it or runs a comment command, then runs the
round (`review.round.run_round`) over the PR's code (`github.source`: cached clone, or the API's
patches), its history (`github.history`: the bot's own comment, else the store) and its sink
(`github.sink`: the publication plan, published with `post`; without it nothing is sent, a dry run).

Requests of a one-file PR round with a token: GET /user, GET pulls/N, GET issues/N/comments, then
the summary comment (POST or PATCH), the review (POST, when a new finding sits on the diff) and the
check run (POST): six. The KPI `api_calls` in the report counts them, the writes as planned.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial

from reviewbot.errors import RateLimited
from reviewbot.github.api import PullRequestInfo, RestApi
from reviewbot.github.auth import Connection, connect
from reviewbot.github.client import ApiCounter
from reviewbot.github.commands import CommentCommand, Refusal, run_command
from reviewbot.github.history import CommentHistory
from reviewbot.github.permissions import Permissions
from reviewbot.github.publish import HeadMoved, find_bot_comment
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.sink import PrRoundOutcome, Publication, PullRequestSink, held_back
from reviewbot.github.source import PullRequestCode
from reviewbot.report.marker import decode_state
from reviewbot.review.round import run_round

__all__ = ["PrRoundOutcome", "run_pr_round", "held_back"]

log = logging.getLogger(__name__)


def run_pr_round(
    settings: GitHubSettings,
    repo_full_name: str,
    pr_number: int,
    *,
    post: bool,
    expected_head: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    requested_by: str | None = None,
    command: CommentCommand | None = None,
    installation_id: int | None = None,
    before_publish: Callable[[], str] | None = None,
) -> PrRoundOutcome:
    """Review PR `pr_number` of `repo_full_name` as its next round (see `_run`).

    When GitHub refuses the review because the PR's head moved on while the round ran (a
    force-push), the round is planned and published again on the new head, once.
    `installation_id`: the App installation a webhook named for this round (github.auth).
    `before_publish` (the App's worker): asked right before anything is published; a reason means
    publish nothing (the PR was closed while the round ran), and then the PR's state is asked of
    GitHub as well: a round publishes nothing on a PR that is no longer open."""
    run = partial(
        _run,
        settings,
        repo_full_name,
        pr_number,
        post=post,
        sleep=sleep,
        requested_by=requested_by,
        command=command,
        installation_id=installation_id,
        before_publish=before_publish,
    )
    try:
        return run(expected_head=expected_head)
    except HeadMoved as moved:
        log.warning("%s #%d: %s; the round runs again on the new head", repo_full_name, pr_number, moved)
        outcome = run(expected_head=moved.head_sha)
        outcome.replanned = str(moved)
        return outcome


def _run(
    settings: GitHubSettings,
    repo_full_name: str,
    pr_number: int,
    *,
    post: bool,
    expected_head: str | None,
    sleep: Callable[[float], None],
    requested_by: str | None,
    command: CommentCommand | None,
    installation_id: int | None,
    before_publish: Callable[[], str] | None = None,
) -> PrRoundOutcome:
    """Review PR `pr_number` of `repo_full_name` (OWNER/NAME) as its next round; publish when `post`.

    With `expected_head` (the head a webhook announced) the round is skipped, and says so, when the
    PR's head has moved on: a newer event will review the newer head. `requested_by` (a comment
    command's author) must have write permission, asked of GitHub; `command` `dismiss` records its
    dismissal before the round (github.commands); a refusal is replied and skips the round.
    Raises UsageError for missing or wrong credentials and GitHubError when GitHub refuses a request for good; GitHub's rate limit
    ends the round as "incomplete" with `retry_at` instead.
    """
    counter = ApiCounter()
    repo, n = repo_full_name, pr_number
    outcome = PrRoundOutcome(Publication.INCOMPLETE, repo, n)
    conn: Connection | None = None
    try:
        conn = connect(settings, repo, counter, sleep=sleep, installation_id=installation_id)
        api = RestApi(conn.client)
        pr = api.get_pull(repo, n)  # a 401 on an App token renews it in the client (github.auth)
        outcome.head_sha = pr.head_sha
        skip = _skip_reason(settings, pr, expected_head)
        if skip:
            outcome.status, outcome.reason = Publication.SKIPPED, skip
            log.info("%s #%d: skipped: %s", repo, n, skip)
            return outcome
        bot_comment = find_bot_comment(api.list_issue_comments(repo, n), conn.bot_login)
        state = decode_state(bot_comment.body) if bot_comment else None
        perms = Permissions(conn.client, repo)  # asked once per user in this round
        if requested_by is not None:  # a `/reviewbot` comment: the commenter needs write permission
            refusal = Refusal()
            refused = run_command(
                api,
                perms,
                pr,
                requested_by,
                command or CommentCommand("review"),
                db_url=settings.db_url,
                state=state,
                post=post,
                bot_login=conn.bot_login,
                refusal=refusal,
            )
            outcome.refusal = refusal.outcome
            if refused:
                outcome.status, outcome.reason = Publication.SKIPPED, refused
                log.info("%s #%d: %s", repo, n, refused)
                return outcome
        git_token = getattr(conn.github.requester.auth, "token", None)
        source = PullRequestCode(settings, api, pr, git_token, perms.role)
        history = CommentHistory(state, repo, n, settings.db_url, settings.record_rounds)
        sink = PullRequestSink(
            settings, conn, api, counter, pr, state, bot_comment, post, before_publish, outcome
        )
        return run_round(source, history, sink)
    except RateLimited as exc:
        outcome.status, outcome.retry_at = Publication.INCOMPLETE, exc.reset_at
        done = (
            "; ".join(outcome.published.steps) if outcome.published and outcome.published.steps else "nothing"
        )
        outcome.reason = f"{exc} (published so far: {done})"
        log.warning("%s #%d: round INCOMPLETE: %s", repo, n, outcome.reason)
        return outcome
    finally:
        outcome.api = counter.kpi()
        if conn is not None:
            conn.close()


def _skip_reason(settings: GitHubSettings, pr: PullRequestInfo, expected_head: str | None) -> str:
    if expected_head is not None and pr.head_sha != expected_head:
        return (
            f"the PR's head moved on from {expected_head[:12]} to {pr.head_sha[:12]}; "
            "the round for the newer head reviews it"
        )
    if pr.state != "open":
        return f"the PR is {pr.state}"
    if pr.draft and not settings.review_drafts:
        return "the PR is a draft (drafts are not reviewed here)"
    return ""
