"""One review round of a GitHub pull request, from the API call to the check run.

`run_pr_round` is the whole GitHub round as one function: the CLI's `reviewbot run --pr N` calls
it, and so does the App worker. It reads the PR, gets the code (cached clone, or the API's patches),
runs the core review, continues the PR's rounds from the bot's own comment, builds the
publication plan and — with `post` — publishes it; without `post` it sends nothing (a dry run).

Requests of a one-file PR round with a token: GET /user, GET pulls/N, GET issues/N/comments, then
the summary comment (POST or PATCH), the review (POST, when a new finding sits on the diff) and the
check run (POST): six. The KPI `api_calls` in the report counts them, the writes as planned.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from reviewbot.change.select import could_hold_derivation
from reviewbot.errors import RateLimited, StoreError
from reviewbot.github.api import PullRequestInfo, RestApi
from reviewbot.github.auth import Connection, connect
from reviewbot.github.client import ApiCounter, ApiError
from reviewbot.github.commands import CommentCommand, Refusal, run_command
from reviewbot.github.failure import gate_line, with_line
from reviewbot.github.history import dismissals_for, previous_round
from reviewbot.github.permissions import Permissions
from reviewbot.github.plan import PublicationPlan, build_plan, commentable_lines
from reviewbot.github.publish import (
    HeadMoved,
    Published,
    find_bot_comment,
    find_bot_review,
    find_check_run,
    publish_into,
)
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.source import Code, load_code, review_settings
from reviewbot.github.threads import ReviewThread, threads_for_round
from reviewbot.model.change import ChangeSet, SkipReason
from reviewbot.model.review import Review, Status
from reviewbot.report.marker import State, decode_state
from reviewbot.review.pipeline import review_change
from reviewbot.review.rounds import apply_round
from reviewbot.runner import continue_round, fit_round, render_round

__all__ = ["PrRoundOutcome", "run_pr_round"]

log = logging.getLogger(__name__)


@dataclass
class PrRoundOutcome:
    """What a GitHub round came to.

    status: "published" (posted), "dry_run" (built, nothing sent), "skipped" (nothing to do:
    `reason` says why), "incomplete" (stopped by GitHub's rate limit: `reason`, `retry_at`).
    """

    status: str
    repo: str
    pr: int
    head_sha: str | None = None
    reason: str = ""
    review: Review | None = None
    markdown: str = ""
    json: dict[str, Any] | None = None
    plan: PublicationPlan | None = None
    published: Published | None = None
    api: dict[str, Any] = field(default_factory=dict)  # the counter: api_calls, reads, writes, retries...
    code_source: str = ""  # "git" | "api"
    retry_at: float | None = None  # epoch seconds, when rate-limited
    recorded: bool = False  # the round was saved in the rounds store
    replanned: str = ""  # why the round was planned again on a new head (a force-push mid-round)
    held_back: tuple[str, ...] = ()  # changed files left out that could hold a derivation (never neutral)
    refusal: str = ""  # a refused command: "replied", "edited" or "held" (github.commands.Refusal)

    @property
    def gate_refused(self) -> str:
        """Why GitHub refused the check run (the round published without its gate), else ""."""
        return self.published.gate_refused if self.published is not None else ""

    @property
    def round_index(self) -> int | None:
        return self.review.round.round_index if self.review is not None else None


def _kpi(review: Review, counter: ApiCounter, planned_writes: int, code: Code, bot: str) -> None:
    """The round's API figures, writes as planned (the report is written before it is posted)."""
    review.kpi.update(
        api_calls=counter.calls + planned_writes,
        api_reads=counter.reads,
        api_writes=planned_writes,
        api_auth_calls=counter.auth_calls,
        code_source=code.source,
        partial_clone=code.partial_clone,
        bot_login=bot,
    )


def _plan(
    review: Review,
    settings: GitHubSettings,
    pr: PullRequestInfo,
    lines: dict[str, frozenset[int]],
    existing: tuple[int, str] | None,
    review_exists: bool,
    threads: list[ReviewThread],
    held_back: tuple[str, ...] = (),
) -> tuple[Review, str, dict[str, Any], PublicationPlan]:
    """The round as published: `review` cut to the stored-report budget (runner.fit_round), its
    report, and the plan of writes made from that cut review, so the check run's conclusion and the
    comment's status agree (a cut report is INCOMPLETE on both)."""
    lang = settings.lang or "en"
    review, markdown, doc = fit_round(review, lang)
    plan = build_plan(
        review,
        markdown,
        repo=pr.repo,
        pr=pr.number,
        lines=lines,
        existing_comment=existing,
        review_exists=review_exists,
        max_inline=settings.max_inline_comments,
        check_name=settings.check_name,
        lang=lang,
        threads=threads,
        held_back=held_back,
        held_back_conclusion=settings.left_out_conclusion,
    )
    return review, markdown, doc, plan


# Why a changed file was not analysed, when that may hide a derivation: over the file or diff limits
# (`ChangeSet.left_out`), the round's budget (files, parse size or depth), or too large to read.
_HELD_BACK_REASONS = (SkipReason.BUDGET, SkipReason.TOO_LARGE, SkipReason.TRUNCATED)


def held_back(change: ChangeSet) -> tuple[str, ...]:
    """The changed files this round left out that could hold a derivation (reviewbot.change.select):
    their check run must not conclude neutral (issue 28 item 1)."""
    skipped = [f.path for f in change.files if f.skipped in _HELD_BACK_REASONS]
    return tuple(p for p in dict.fromkeys([*skipped, *change.left_out]) if could_hold_derivation(p))


def _record(settings: GitHubSettings, review: Review, markdown_en: str, doc: dict[str, Any], pr: int) -> bool:
    from reviewbot.store.store import RoundRecord, Store

    try:
        with Store.open(settings.db_url) as store:
            record = RoundRecord.from_review(
                review,
                repository=review.round.repository,
                pr=pr,
                report_markdown=markdown_en,
                report_json=json.dumps(doc, indent=2, ensure_ascii=False),
            )
            return store.save_round(record).created
    except StoreError as exc:
        log.warning("round published but not recorded: %s", exc)
        return False


def _review(
    settings: GitHubSettings,
    api: RestApi,
    pr: PullRequestInfo,
    state: State | None,
    git_token: str | None,
    perms: Permissions,
) -> tuple[Review, dict[str, frozenset[int]], Code, str]:
    """The core's review of the PR as its next round, the lines a review comment may target, and
    the report's language (the settings', else the repository's `[review] lang`)."""
    code = load_code(settings, api, pr, git_token)
    try:
        chosen = review_settings(settings, code, pr, perms.role)
        review = review_change(code.change, chosen)
        previous = previous_round(
            state,
            repo=pr.repo,
            pr=pr.number,
            head_sha=pr.head_sha,
            db_url=settings.db_url,
            use_store=settings.record_rounds,
        )
        dismissed = dismissals_for(
            pr.repo, pr.number, db_url=settings.db_url, use_store=settings.record_rounds
        )
        if code.repo_path is not None:
            review = continue_round(
                code.repo_path,
                code.change,
                review,
                previous,
                repository=pr.repo,
                pr=pr.number,
                dismissals=dismissed,
            )
        else:  # no clone: the previous head cannot be compared, so this round is a full review
            review = apply_round(
                review, code.change, previous, repository=pr.repo, pr=pr.number, dismissals=dismissed
            )
        if any(n.reason is SkipReason.BAD_CONFIG for n in review.notes):
            # The repository's .reviewbot.toml was refused: whatever was found, no verdict (neutral).
            review = replace(review, status=Status.INCOMPLETE)
        return review, commentable_lines(code.change), code, chosen.lang
    finally:
        code.change.close()


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
    args: dict[str, Any] = dict(
        post=post,
        sleep=sleep,
        requested_by=requested_by,
        command=command,
        installation_id=installation_id,
        before_publish=before_publish,
    )
    try:
        return _run(settings, repo_full_name, pr_number, expected_head=expected_head, **args)
    except HeadMoved as moved:
        log.warning("%s #%d: %s; the round runs again on the new head", repo_full_name, pr_number, moved)
        outcome = _run(settings, repo_full_name, pr_number, expected_head=moved.head_sha, **args)
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
    outcome = PrRoundOutcome("incomplete", repo, n)
    conn: Connection | None = None
    try:
        conn = connect(settings, repo, counter, sleep=sleep, installation_id=installation_id)
        api = RestApi(conn.client)
        pr = api.get_pull(repo, n)  # a 401 on an App token renews it in the client (github.auth)
        outcome.head_sha = pr.head_sha
        skip = _skip_reason(settings, pr, expected_head)
        if skip:
            outcome.status, outcome.reason = "skipped", skip
            log.info("%s #%d: skipped: %s", repo, n, skip)
            return outcome
        bot_comment = find_bot_comment(api.list_issue_comments(repo, n), conn.bot_login)
        state = decode_state(bot_comment.body) if bot_comment else None
        git_token = getattr(conn.github.requester.auth, "token", None)
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
                outcome.status, outcome.reason = "skipped", refused
                log.info("%s #%d: %s", repo, n, refused)
                return outcome
        review, lines, code, lang = _review(settings, api, pr, state, git_token, perms)
        settings = replace(settings, lang=lang)
        outcome.code_source = code.source
        outcome.review = review
        outcome.held_back = held_back(code.change)
        existing = (bot_comment.id, bot_comment.body) if bot_comment else None
        threads, threads_note = threads_for_round(conn.client, review, repo, n, conn.bot_login)
        _, _, _, plan = _plan(review, settings, pr, lines, existing, False, threads, outcome.held_back)
        review_exists = False
        if plan.review is not None and state is not None and state.head_sha == pr.head_sha:
            # A re-run of a head that was published before: its review may exist already.
            review_exists = (
                find_bot_review(api.list_reviews(repo, n), conn.bot_login, pr.head_sha) is not None
            )
        # A head published before (a re-run, or the retry of a round the store failed to record):
        # its check run is updated in place, never created twice.
        same_head = state is not None and state.head_sha == pr.head_sha
        check_run = find_check_run(api, plan) if post and same_head else None
        if post and before_publish is not None:
            # The last moment before the first write: a PR closed while the round ran gets nothing.
            cancelled = before_publish() or _closed_meanwhile(api, repo, n)
            if cancelled:
                outcome.status, outcome.reason = "skipped", cancelled
                log.info("%s #%d: nothing published: %s", repo, n, cancelled)
                return outcome
        _kpi(
            review,
            counter,
            1
            + (0 if review_exists or plan.review is None else 1)
            + len(plan.resolve_threads)
            + len(plan.check_run.batches()),
            code,
            conn.bot_login,
        )
        review, outcome.markdown, outcome.json, outcome.plan = _plan(
            review, settings, pr, lines, existing, review_exists, threads, outcome.held_back
        )
        outcome.review = review
        if not post:
            outcome.status = "dry_run"
            return outcome
        outcome.published = Published(notes=[threads_note] if threads_note else [])
        publish_into(api, outcome.plan, conn.bot_login, outcome.published, existing_check_run=check_run)
        outcome.status = "published"
        if outcome.published.gate_refused:
            _say_gate_refused(api, outcome.plan, outcome.published)
        if settings.record_rounds:
            markdown_en = outcome.markdown if settings.lang == "en" else render_round(review, "en")[0]
            outcome.recorded = _record(settings, review, markdown_en, outcome.json, n)
        return outcome
    except RateLimited as exc:
        outcome.status, outcome.retry_at = "incomplete", exc.reset_at
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


def _say_gate_refused(api: RestApi, plan: PublicationPlan, done: Published) -> None:
    """Put the refused check run's line at the top of the summary comment just published (the
    next round's rewrite removes it). Best effort: the log and the job say it too."""
    comment = done.comment
    if comment is None:  # unchanged: the body on GitHub is the plan's
        if plan.summary_comment_id is None:
            return
        body, comment_id = plan.summary_body, plan.summary_comment_id
    else:
        body, comment_id = comment.body or plan.summary_body, comment.id
    try:
        done.comment = api.update_issue_comment(
            plan.repo,
            comment_id,
            with_line(body, gate_line(plan.check_run.name, plan.head_sha, done.gate_refused)),
        )
        done.steps.append(f"summary comment {comment_id}: the missing check run said on top")
    except ApiError as exc:
        log.error("%s #%d: could not say that the check run is missing: %s", plan.repo, plan.pr, exc)


def _closed_meanwhile(api: RestApi, repo: str, n: int) -> str:
    """Why nothing may be published on PR `n` now that the round is done: it is no longer open."""
    now = api.get_pull(repo, n)
    if now.state == "open":
        return ""
    return f"cancelled: the PR was {now.state} while the round ran; nothing was published"


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
