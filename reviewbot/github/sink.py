"""Where a GitHub round ends (`review.round.Sink`): its report, its plan, published, recorded.

The report's KPI counts the API calls the round makes, its writes among them, so the writes are
counted before the report is rendered: `github.plan.planned_writes` tells them from the review
alone (the summary comment, the review when a new finding sits on the diff, the threads to resolve,
the check run's annotation batches). The report is then rendered once in the round's language, the
plan built once from it, and — with `post` — published. The store keeps the English report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from reviewbot.change.select import could_hold_derivation
from reviewbot.errors import StoreError
from reviewbot.github.api import IssueComment, PullRequestInfo, RestApi
from reviewbot.github.auth import Connection
from reviewbot.github.checkrun import external_id
from reviewbot.github.client import ApiCounter, ApiError, ApiKpi
from reviewbot.github.failure import gate_line, with_line
from reviewbot.github.plan import PublicationPlan, build_plan, commentable_lines, inline_split, planned_writes
from reviewbot.github.publish import Published, find_bot_review, find_check_run, publish_into
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.threads import threads_for_round
from reviewbot.model.change import ChangeSet, SkipReason
from reviewbot.model.review import Review
from reviewbot.report.marker import State
from reviewbot.report.render import ReportJson
from reviewbot.review.round import Code, CodeOrigin, Reviewed
from reviewbot.runner import fit_round, render_round

__all__ = ["PrRoundOutcome", "Publication", "PullRequestSink", "held_back"]

log = logging.getLogger(__name__)


class Publication(StrEnum):
    """What a GitHub round did on the PR."""

    PUBLISHED = "published"  # posted
    DRY_RUN = "dry_run"  # built, nothing sent
    SKIPPED = "skipped"  # nothing to do (`reason` says why)
    INCOMPLETE = "incomplete"  # stopped by GitHub's rate limit (`reason`, `retry_at`)


@dataclass
class PrRoundOutcome:
    """What a GitHub round came to: skipped, dry run, published or cut by the rate limit, with the
    review, report, plan and what was published.

    Made by github.round.run_pr_round and filled by `PullRequestSink` as the round goes; read by
    commands.github_run (the CLI's output) and service.github_round (the job's `RoundResult`)."""

    status: Publication
    repo: str
    pr: int
    head_sha: str | None = None
    reason: str = ""
    review: Review | None = None
    markdown: str = ""
    json: ReportJson | None = None  # the round's JSON document (reviewbot.report)
    plan: PublicationPlan | None = None
    published: Published | None = None
    api: ApiKpi = field(default_factory=lambda: ApiCounter().kpi())  # the round's requests, once it ends
    code_source: CodeOrigin | None = None
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


# Why a changed file was not analysed, when that may hide a derivation: over the file or diff limits
# (`ChangeSet.left_out`), the round's budget (files, parse size or depth), or too large to read.
_HELD_BACK_REASONS = (SkipReason.BUDGET, SkipReason.TOO_LARGE, SkipReason.TRUNCATED)


def held_back(change: ChangeSet) -> tuple[str, ...]:
    """The changed files this round left out that could hold a derivation (reviewbot.change.select):
    their check run must not conclude neutral."""
    skipped = [f.path for f in change.files if f.skipped in _HELD_BACK_REASONS]
    return tuple(p for p in dict.fromkeys([*skipped, *change.left_out]) if could_hold_derivation(p))


def _kpi(review: Review, counter: ApiCounter, planned: int, code: Code, bot: str) -> None:
    """The round's API figures, writes as planned (the report is written before it is posted)."""
    kpi = review.kpi
    kpi["api_calls"] = counter.calls + planned
    kpi["api_reads"] = counter.reads
    kpi["api_writes"] = planned
    kpi["api_auth_calls"] = counter.auth_calls
    kpi["code_source"] = code.source
    kpi["partial_clone"] = code.partial_clone
    kpi["bot_login"] = bot


@dataclass
class PullRequestSink:
    """The round of PR `pr` published through `api` (when `post`) and recorded; `outcome` is filled
    as it goes. `before_publish` (the App's worker) is asked right before the first write: a reason
    means publish nothing (the PR was closed while the round ran), and then the PR's state is asked
    of GitHub as well."""

    settings: GitHubSettings
    conn: Connection
    api: RestApi
    counter: ApiCounter
    pr: PullRequestInfo
    state: State | None  # decoded from `bot_comment`
    bot_comment: IssueComment | None
    post: bool
    before_publish: Callable[[], str] | None
    outcome: PrRoundOutcome

    def publish(self, reviewed: Reviewed) -> PrRoundOutcome:
        settings = replace(self.settings, lang=reviewed.lang)
        review, code, outcome = reviewed.review, reviewed.code, self.outcome
        repo, n, bot = self.pr.repo, self.pr.number, self.conn.bot_login
        outcome.code_source = code.source
        outcome.review = review
        outcome.held_back = held_back(code.change)
        lines = commentable_lines(code.change)
        threads, threads_note = threads_for_round(self.conn.client, review, repo, n, bot)
        # A head published before (a re-run, or the retry of a round the store failed to record):
        # its review may exist already, and its check run is updated in place, never created twice.
        same_head = self.state is not None and self.state.head_sha == self.pr.head_sha
        review_exists = False
        if same_head and inline_split(review, lines, threads, settings.max_inline_comments)[0]:
            review_exists = find_bot_review(self.api.list_reviews(repo, n), bot, self.pr.head_sha) is not None
        check_run = None
        if self.post and same_head:
            ext = external_id(repo, n, review.head_sha)
            check_run = find_check_run(self.api, repo, review.head_sha, settings.check_name, ext)
        cancelled = self._cancelled()
        if cancelled:
            outcome.status, outcome.reason = Publication.SKIPPED, cancelled
            log.info("%s #%d: nothing published: %s", repo, n, cancelled)
            return outcome
        writes = planned_writes(
            review,
            lines=lines,
            threads=threads,
            max_inline=settings.max_inline_comments,
            review_exists=review_exists,
        )
        _kpi(review, self.counter, writes, code, bot)
        review, outcome.markdown, outcome.json = fit_round(review, reviewed.lang)
        outcome.review = review
        outcome.plan = build_plan(
            review,
            outcome.markdown,
            repo=repo,
            pr=n,
            lines=lines,
            existing_comment=(self.bot_comment.id, self.bot_comment.body) if self.bot_comment else None,
            review_exists=review_exists,
            max_inline=settings.max_inline_comments,
            check_name=settings.check_name,
            lang=reviewed.lang,
            threads=threads,
            held_back=outcome.held_back,
            held_back_conclusion=settings.left_out_conclusion,
        )
        if not self.post:
            outcome.status = Publication.DRY_RUN
            return outcome
        outcome.published = Published(notes=[threads_note] if threads_note else [])
        publish_into(self.api, outcome.plan, bot, outcome.published, existing_check_run=check_run)
        outcome.status = Publication.PUBLISHED
        if outcome.published.gate_refused:
            _say_gate_refused(self.api, outcome.plan, outcome.published)
        if settings.record_rounds:
            markdown_en = outcome.markdown if reviewed.lang == "en" else render_round(review, "en")[0]
            outcome.recorded = _record(settings, review, markdown_en, outcome.json, n)
        return outcome

    def _cancelled(self) -> str:
        """Why nothing may be published now (the last moment before the first write), else ""."""
        if not self.post or self.before_publish is None:
            return ""
        return self.before_publish() or _closed_meanwhile(self.api, self.pr.repo, self.pr.number)


def _record(settings: GitHubSettings, review: Review, markdown_en: str, doc: ReportJson, pr: int) -> bool:
    from reviewbot.store.round_history import save_review
    from reviewbot.store.store import Store

    try:
        with Store.open(settings.db_url) as store:
            return save_review(
                store, review, repository=review.round.repository, pr=pr, markdown=markdown_en, doc=doc
            )
    except StoreError as exc:
        log.warning("round published but not recorded: %s", exc)
        return False


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
