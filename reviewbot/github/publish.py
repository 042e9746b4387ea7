"""Carry out a publication plan on GitHub, idempotently, in the order that keeps a PR consistent.

1. The summary comment: created once, then edited in place (found by its hidden marker AND the
   bot's login; a comment by anyone else is never touched). A body equal to the one on GitHub is
   not sent again.
2. The review with the new findings' inline comments (skipped when this head already has one).
3. The review threads of findings fixed this round, resolved (GraphQL; resolving twice is harmless).
4. The check run, last, so that the gate never turns green before the report exists; its
   annotations beyond the first 50 follow in PATCH requests of 50.

A create that failed without a clear answer (timeout, 5xx) is looked up before it is sent again
(reviewbot.github.client), so a flaky network never leaves two summary comments or two reviews.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from reviewbot.errors import GitHubError
from reviewbot.github.api import IssueComment, RestApi, ReviewInfo
from reviewbot.github.checkrun import ANNOTATION_BATCH
from reviewbot.github.client import ApiError
from reviewbot.github.payloads import CheckRunJson, CheckRunUpdateBody, ReviewBody
from reviewbot.github.plan import PublicationPlan, review_marker
from reviewbot.github.resilience import errors_of
from reviewbot.github.threads import resolve_thread
from reviewbot.report import sanitize
from reviewbot.report.marker import decode_state

__all__ = [
    "HeadMoved",
    "Published",
    "publish",
    "publish_into",
    "find_bot_comment",
    "find_bot_review",
    "find_check_run",
]

log = logging.getLogger(__name__)
_STATE_PREFIX = "<!-- reviewbot:state v"


@dataclass
class Published:
    comment: IssueComment | None = None
    comment_action: str = ""  # created | updated | unchanged
    review: ReviewInfo | None = None
    check_run_id: int | None = None
    resolved_threads: list[str] = field(default_factory=list)  # GraphQL ids of the threads resolved
    gate_refused: str = ""  # why the check run could not be created (GitHub's 403), else empty
    steps: list[str] = field(default_factory=list)  # what was done, in order
    notes: list[str] = field(default_factory=list)  # what could not be done and why


def find_bot_comment(comments: list[IssueComment], bot_login: str) -> IssueComment | None:
    """The bot's summary comment: carries the state marker AND is authored by the bot (first such)."""
    for c in comments:
        if (
            c.user.lower() == bot_login.lower()
            and _STATE_PREFIX in c.body
            and decode_state(c.body) is not None
        ):
            return c
    return None


def find_bot_review(reviews: list[ReviewInfo], bot_login: str, head_sha: str) -> ReviewInfo | None:
    marker = review_marker(head_sha)
    for r in reviews:
        if r.user.lower() == bot_login.lower() and marker in r.body:
            return r
    return None


def _summary(api: RestApi, plan: PublicationPlan, bot_login: str, done: Published) -> None:
    if plan.summary_action == "unchanged":
        done.comment_action = "unchanged"
        done.steps.append("summary comment unchanged")
        return
    if plan.summary_action == "update" and plan.summary_comment_id is not None:
        done.comment = api.update_issue_comment(plan.repo, plan.summary_comment_id, plan.summary_body)
        done.comment_action = "updated"
        done.steps.append(f"summary comment {done.comment.id} edited")
        return

    def already_there() -> IssueComment | None:
        found = find_bot_comment(api.list_issue_comments(plan.repo, plan.pr), bot_login)
        state = decode_state(found.body) if found else None
        return found if state is not None and state.head_sha == plan.head_sha else None

    done.comment = api.create_issue_comment(plan.repo, plan.pr, plan.summary_body, reconcile=already_there)
    done.comment_action = "created"
    done.steps.append(f"summary comment {done.comment.id} created")


class HeadMoved(GitHubError):
    """GitHub refused the review because its commit is no longer the PR's head (a force-push
    mid-round): the round is planned again on `head_sha`."""

    def __init__(self, head_sha: str, reason: str) -> None:
        super().__init__(reason)
        self.head_sha = head_sha


# GitHub's errors[] for an inline comment it cannot place on the diff (the only 422 that a review
# without inline comments fixes); anything else is not a placement problem and is not retried so.
_PLACEMENT = ("part of the diff", "could not be resolved", "same hunk", "line must be", "position")


def _review(api: RestApi, plan: PublicationPlan, bot_login: str, done: Published) -> None:
    if plan.review is None:
        return

    def already_there() -> ReviewInfo | None:
        found = find_bot_review(api.list_reviews(plan.repo, plan.pr), bot_login, plan.head_sha)
        return found if found is None or found.commit_id in ("", plan.head_sha) else None

    try:
        done.review = api.create_review(plan.repo, plan.pr, plan.review.payload(), reconcile=already_there)
        done.steps.append(f"review {done.review.id} with {len(plan.review.comments)} inline comment(s)")
        return
    except ApiError as exc:
        if exc.status != 422:
            raise
        errors = errors_of(exc.data) or [str(exc)]
        refused = exc
    # The head may have moved (a force-push): GitHub then refuses the review's commit, whatever
    # errors[] says. Asked of GitHub, not guessed from the message.
    head = api.get_pull(plan.repo, plan.pr).head_sha
    if head != plan.head_sha:
        raise HeadMoved(head, f"the PR's head moved from {plan.head_sha[:12]} to {head[:12]} ({refused})")
    if not plan.review.comments or not any(p in e.lower() for e in errors for p in _PLACEMENT):
        raise refused
    # GitHub placed the diff differently than we did; the findings are in the summary anyway.
    places = "\n".join(f"- {sanitize.code_span(f'{c.path}:{c.line}')}" for c in plan.review.comments)
    payload: ReviewBody = {
        **plan.review.payload(),
        "body": f"{plan.review.body}\n\nGitHub refused the inline placement of:\n{places}",
        "comments": [],
    }
    done.review = api.create_review(plan.repo, plan.pr, payload, reconcile=already_there)
    done.notes.append(f"inline comments refused by GitHub ({refused}); posted a review without them")
    done.steps.append(f"review {done.review.id} without inline comments")


def _resolve_threads(api: RestApi, plan: PublicationPlan, done: Published) -> None:
    for th in plan.resolve_threads:
        try:
            resolved = resolve_thread(api.client, th.id)
        except ApiError as exc:
            # The finding reads as fixed in the report either way; an open thread is no reason to
            # hold back the check run.
            done.notes.append(f"review thread of {th.path} not resolved: {exc}")
            log.warning("%s #%d: review thread %s not resolved: %s", plan.repo, plan.pr, th.id, exc)
            continue
        if resolved:
            done.resolved_threads.append(th.id)
    if plan.resolve_threads:
        done.steps.append(f"{len(done.resolved_threads)} review thread(s) of fixed findings resolved")


def find_check_run(
    api: RestApi, repo: str, head_sha: str, name: str, external_id: str
) -> CheckRunJson | None:
    """This head's check run from an earlier run of the round (same name, head and external_id):
    a retry after the round published but could not record it, or a re-run of the head."""
    for run in api.list_check_runs(repo, head_sha, name):
        if run.get("external_id") == external_id:
            return run
    return None


def _annotations_on(run: CheckRunJson) -> int:
    output = run.get("output")
    return int(output.get("annotations_count") or 0) if output else 0


def _append_annotations(api: RestApi, plan: PublicationPlan, run_id: int, have: int) -> int:
    """Send the plan's annotations from number `have` on, 50 per PATCH; returns the requests sent.

    GitHub appends annotations, so a PATCH that was answered late (or not at all) must not be sent
    again once it landed: each one is reconciled by the run's `annotations_count`."""
    rest = list(plan.check_run.annotations[have:])
    sent = 0
    for at in range(0, len(rest), ANNOTATION_BATCH):
        batch = rest[at : at + ANNOTATION_BATCH]
        target = have + at + len(batch)

        def landed(target: int = target) -> CheckRunJson | None:
            run = api.get_check_run(plan.repo, run_id)
            return run if _annotations_on(run) >= target else None

        payload = CheckRunUpdateBody(output=plan.check_run.output_with(batch))
        api.update_check_run(plan.repo, run_id, payload, reconcile=landed)
        sent += 1
    return sent


def _check_run(
    api: RestApi, plan: PublicationPlan, done: Published, found: CheckRunJson | None = None
) -> None:
    details = done.comment.html_url if done.comment and done.comment.html_url else None
    if found is not None:
        # Updated in place, without the annotations it has: GitHub appends annotations, so sending
        # them again would list each twice. The ones an earlier run did not get to are sent.
        done.check_run_id = int(found["id"])
        api.update_check_run(plan.repo, done.check_run_id, plan.check_run.in_place_payload(details))
        added = _append_annotations(api, plan, done.check_run_id, _annotations_on(found))
        done.steps.append(
            f"check run {done.check_run_id} of this head updated in place: {plan.check_run.conclusion}"
            + (f", {added} annotation batch(es) it lacked" if added else "")
        )
        return
    check = plan.check_run
    try:
        run = api.create_check_run(
            plan.repo,
            check.create_payload(details),
            reconcile=lambda: find_check_run(api, plan.repo, plan.head_sha, check.name, check.external_id),
        )
    except ApiError as exc:
        if exc.status == 403:
            done.gate_refused = _gate_refused(api, plan, exc)
            done.notes.append(done.gate_refused)
            log.error("%s #%d: %s", plan.repo, plan.pr, done.gate_refused)
            return
        raise
    done.check_run_id = int(run["id"])
    first = min(len(plan.check_run.annotations), ANNOTATION_BATCH)
    batches = _append_annotations(api, plan, done.check_run_id, max(_annotations_on(run), first))
    total = len(plan.check_run.annotations)
    done.steps.append(
        f"check run {done.check_run_id} {plan.check_run.conclusion} with {total} annotation(s) "
        f"in {1 + batches} request(s)"
    )


def _gate_refused(api: RestApi, plan: PublicationPlan, exc: ApiError) -> str:
    """Why GitHub refused the check run, for the log, the job and the PR: an App without the
    `checks: write` permission, or credentials that are not an App's at all."""
    name = plan.check_run.name
    if api.client.renew is not None:  # App credentials
        return (
            f"check run `{name}` not created: GitHub refused it ({exc.status}: "
            f"{exc.data.get('message') if isinstance(exc.data, dict) else exc}); the App lacks the "
            "`checks: write` permission on this repository. Grant it (the App's settings, Permissions, "
            "Checks: Read and write) and accept it on the installation"
        )
    return (
        f"check run `{name}` not created: GitHub accepts check runs only from a GitHub App (or the "
        "Actions GITHUB_TOKEN with `checks: write`); run reviewbot with App credentials to get one"
    )


def publish(api: RestApi, plan: PublicationPlan, bot_login: str) -> Published:
    """Send the plan. RateLimited and other GitHubErrors propagate (see `publish_into` to keep
    what was done before the error)."""
    done = Published()
    publish_into(api, plan, bot_login, done)
    return done


def publish_into(
    api: RestApi,
    plan: PublicationPlan,
    bot_login: str,
    done: Published,
    *,
    existing_check_run: CheckRunJson | None = None,
) -> None:
    """Like `publish`, recording into `done` step by step (it holds what happened if this raises).

    `existing_check_run`: this head's check run from an earlier run (`find_check_run`), updated
    in place instead of creating a second one."""
    _summary(api, plan, bot_login, done)
    _review(api, plan, bot_login, done)
    _resolve_threads(api, plan, done)
    _check_run(api, plan, done, existing_check_run)
    log.info("%s #%d at %s: %s", plan.repo, plan.pr, plan.head_sha[:12], "; ".join(done.steps))
