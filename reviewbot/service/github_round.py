"""The worker's round function: one job -> `reviewbot.github.round.run_pr_round` on GitHub.

The job's head is passed as `expected_head`, so a job whose push has been superseded skips itself
(and says so) instead of reviewing a head nobody looks at any more: pushes coalesce.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from reviewbot.errors import RateLimited, StoreError
from reviewbot.service.jobs import Job
from reviewbot.service.worker import RoundFn, RoundResult, cancel_check, is_permanent
from reviewbot.settings import Settings

if TYPE_CHECKING:  # the GitHub client (PyGithub) is loaded by the worker that runs rounds only
    from reviewbot.github.settings import GitHubSettings

__all__ = ["github_round", "github_settings"]

log = logging.getLogger(__name__)


def github_settings(settings: Settings) -> GitHubSettings:
    """The GitHub client settings of the service settings (credentials, API URL, store, cache)."""
    from reviewbot.github.settings import GitHubSettings

    return GitHubSettings.from_settings(settings)


def github_round(settings: Settings) -> RoundFn:
    """A RoundFn that reviews the job's PR on GitHub, publishing unless `settings.post` is off."""
    from reviewbot.github.round import run_pr_round

    gh = github_settings(settings)
    gh.require_credentials()
    if gh.uses_app:
        gh.app_private_key()  # an unreadable key fails the worker's start, not every job
    if gh.use_git:
        from reviewbot.github.workspace import require_git

        require_git()  # git too old or missing fails the worker's start with the reason

    def run(job: Job) -> RoundResult:
        try:
            return run_job(job)
        except Exception as exc:
            # The job fails for good: say so on the PR, with a neutral check run (never blocking).
            if settings.post and (is_permanent(exc) or job.attempts >= settings.max_attempts):
                _report_failure(settings, gh, job, exc)
            raise

    def run_job(job: Job) -> RoundResult:
        from reviewbot.github.commands import CommentCommand

        if (job.reason or "").startswith("re-queued:"):
            # The attempt before was cut off mid-round (its worker died), maybe mid-write: a write it
            # sent may still land. The round looks for what landed only once that can no longer
            # happen, so that it finds it instead of sending it a second time.
            log.info(
                "job %d: interrupted before; waiting %.0fs for its writes to land",
                job.id,
                gh.late_write_window,
            )
            time.sleep(gh.late_write_window)
        comment = job.trigger.startswith("issue_comment.")
        cancelled = cancel_check.get()

        def before_publish() -> str:
            # A `closed` delivery marked the job (service.deliveries); the round also asks GitHub.
            if cancelled is None:
                return ""
            try:
                return cancelled()
            except StoreError as exc:
                log.warning("job %d: could not ask the store whether it was cancelled: %s", job.id, exc)
                return ""

        outcome = run_pr_round(
            gh,
            job.repository,
            job.pr,
            post=settings.post,
            expected_head=job.head_sha,
            # A comment command runs only for users GitHub says may write to the repository.
            requested_by=job.requested_by if comment else None,
            command=CommentCommand.from_json(job.command) if comment and job.command else None,
            installation_id=job.installation_id,
            before_publish=before_publish,
        )
        if outcome.status == "incomplete":
            # GitHub's rate limit stopped the round part-way; the retry re-runs it (publication
            # finds and edits what was already posted) once the limit resets.
            raise RateLimited(outcome.reason or "GitHub's rate limit stopped the round", outcome.retry_at)
        head = outcome.head_sha
        kpi = outcome.api
        api = {
            "read": int(kpi.get("api_reads", 0)),
            "write": int(kpi.get("api_writes", 0)),
            "auth": int(kpi.get("api_auth_calls", 0)),
            "retry": int(kpi.get("api_retries", 0)),
        }
        if outcome.status == "skipped":
            return RoundResult("skipped", outcome.reason, None, head, api, refusal=outcome.refusal)
        index = outcome.round_index
        if outcome.status == "published" and gh.record_rounds and not outcome.recorded:
            _require_recorded(gh.db_url, job, str(head), index)
        verb = "published" if outcome.status == "published" else "computed (dry run, nothing posted)"
        status = outcome.review.status.value if outcome.review is not None else "?"
        reason = f"round {index} {verb}: {status}, head {str(head)[:12]}"
        if outcome.gate_refused:
            # Published without its gate: the job says so (the log and the PR's comment too).
            reason += f"; NO CHECK RUN: {outcome.gate_refused}"
        if outcome.replanned:
            reason += f"; planned again: {outcome.replanned}"
        severities = outcome.review.summary() if outcome.review is not None else None
        return RoundResult("done", reason, index, head, api, severities=severities)

    return run


def _require_recorded(db_url: str | None, job: Job, head: str, index: int | None) -> None:
    """Raise StoreError unless the store holds the round of `head` (the round saves it, and swallows
    a store error after publishing). The job is then retried: the retry finds what was published
    (the summary comment by its marker, the review and check run of the head) instead of posting
    them again, and records the round."""
    from reviewbot.store.store import Store

    with Store.open(db_url) as store:
        if store.round_for_head(job.repository, job.pr, head) is not None:
            return  # recorded before (a re-run of the head): nothing is missing
    raise StoreError(
        f"round {index} was published but the store did not record it; "
        "the retry reconciles with what was published and records it"
    )


def _report_failure(settings: Settings, gh: GitHubSettings, job: Job, exc: Exception) -> None:
    """Best effort: the neutral check run and the one-line note of a round that failed for good."""
    from reviewbot.github.failure import report_failure

    reason = f"{type(exc).__name__}: {exc}"
    for secret in settings.secret_values():
        reason = reason.replace(secret, "***")
    try:
        done = report_failure(gh, job.repository, job.pr, job.head_sha, reason)
        log.warning("job %d: %s#%d failed; published %s", job.id, job.repository, job.pr, "; ".join(done))
    except Exception as failure:  # GitHub itself may be what failed: the job's reason still says why
        log.error("job %d: the failure could not be published either: %s", job.id, failure)
