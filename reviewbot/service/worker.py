"""The worker: runs queued round jobs, one per PR at a time, retries transient failures with
backoff, records exhausted ones as failed, and re-queues rounds a dead worker left behind.

`Worker.handle` is the queue's handler. `Worker.start` begins the heartbeat/sweeper thread and
re-queues interrupted jobs; `make_consumer` (service/consumer.py) is huey's consumer around it (the
`worker` command, and `serve --with-worker` in a thread).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from reviewbot.errors import EnvironmentProblem, GitHubError, RateLimited, StoreError, UsageError
from reviewbot.service.beater import Beating
from reviewbot.service.consumer import EmbeddedConsumer, make_consumer, owner_is_dead, worker_name
from reviewbot.service.jobs import Dispatch, Job, JobBook
from reviewbot.service.logs import job_line
from reviewbot.service.queue import JobQueue
from reviewbot.service.retention import prune
from reviewbot.settings import Settings

__all__ = [
    "cancel_check",
    "RoundResult",
    "RoundFn",
    "Worker",
    "EmbeddedConsumer",
    "make_consumer",
    "owner_is_dead",
    "is_permanent",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoundResult:
    """What running one job's round came to, as the job records it (no GitHub types: the worker
    does not load the GitHub client).

    Made by a `RoundFn`: service.github_round, from the GitHub round's `PrRoundOutcome`. Read by
    `Worker` (the job's state, reason, API counts and severities)."""

    state: str  # "done" | "skipped"
    reason: str
    round_index: int | None = None
    head_sha: str | None = None
    api: Mapping[str, int] = field(default_factory=dict)  # GitHub requests by kind: read/write/auth/retry
    refusal: str = ""  # a refused command: what was done (github.commands.Refusal), counted
    severities: Mapping[str, int] | None = None  # the round's findings by severity (P0..P3), if it ran


RoundFn = Callable[[Job], RoundResult]

# While a job's round runs: why it must publish nothing (its PR was closed meanwhile), or "". The round
# function asks it right before its first write (service.github_round); the worker sets it.
cancel_check: ContextVar[Callable[[], str] | None] = ContextVar("reviewbot_cancel_check", default=None)

# Failures that a retry cannot fix: the configuration or the environment is wrong.
_PERMANENT = (UsageError, EnvironmentProblem)
# Past the analysis budget: git's fetch timeout (900 s) and publishing with its late-write waits.
GIT_AND_PUBLISH_S = 1200.0


def is_permanent(exc: Exception) -> bool:
    """True for failures a retry cannot fix: bad configuration, or GitHub refusing a request for
    good (a 4xx other than timeouts and rate limits, e.g. 404 for a deleted PR, 403 no permission)."""
    if isinstance(exc, _PERMANENT):
        return True
    status = getattr(exc, "status", None)
    return (
        isinstance(exc, GitHubError)
        and isinstance(status, int)
        and 400 <= status < 500
        and status
        not in (
            408,
            409,
            429,
        )
    )


class Worker:
    """Executes job messages for one process (any number of huey worker threads)."""

    def __init__(
        self,
        settings: Settings,
        book: JobBook,
        queue: JobQueue,
        run_round: RoundFn,
        *,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.settings = settings
        self.book = book
        self.queue = queue
        self.run_round = run_round
        self.owner = worker_name()
        self._scrub = scrub or _default_scrub(settings)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._running: set[int] = set()  # jobs whose round runs in this process: they get heartbeats
        self._owed: list[tuple[int, Callable[[], list[Dispatch]]]] = []  # outcomes the store refused
        self._next_prune = 0.0  # the first beat prunes; then every prune_interval_seconds
        self._db_url = book.engine.url.render_as_string(hide_password=False)  # for the job's beater
        queue.set_handler(self.handle)

    # --- one message ---------------------------------------------------------------------------

    def handle(self, job_id: int, dispatch: int) -> None:
        """Run job `job_id` if message `dispatch` is still current and its PR is free."""
        s = self.settings
        try:
            claim = self.book.claim(
                job_id,
                dispatch,
                self.owner,
                lease_seconds=s.job_lease_seconds,
                wait_seconds=s.lock_retry_seconds,
            )
        except StoreError as exc:
            # The job stays queued; the sweep sends its message again once the store answers.
            log.warning("job %d: cannot claim it: %s", job_id, exc)
            return
        if claim.status == "blocked":
            assert claim.retry is not None and claim.job is not None
            log.debug("job %d: another round of its PR is running; waiting", job_id)
            self._send([claim.retry._replace(delay=self.blocked_wait(claim.job.dispatch))])
            return
        if claim.status != "run" or claim.job is None:
            log.debug("job %d: message %d is stale; nothing to do", job_id, dispatch)
            return
        job = claim.job
        with self._lock:
            self._running.add(job.id)
        try:
            self._run(job)
        finally:
            with self._lock:
                self._running.discard(job.id)

    def _run(self, job: Job) -> None:
        where = f"{job.repository}#{job.pr}"
        head = (job.head_sha or "current head")[:12]
        log.info(
            "job %d: round for %s at %s (attempt %d, %s)", job.id, where, head, job.attempts, job.trigger
        )
        started = time.monotonic()
        # A process of its own keeps this job's heartbeat fresh while the round runs, even when a
        # stage holds the interpreter (and so the heartbeat thread) in one long call: service/beater.py.
        # Beats stop after the round's own bounds (analysis, git, publishing) with room to spare.
        lifetime = self.settings.budget.seconds + GIT_AND_PUBLISH_S
        beating = Beating.start(self._db_url, self.owner, job.id, self._beat(), lifetime)
        token = cancel_check.set(lambda: self.book.cancelled(job.id))
        try:
            try:
                result = self.run_round(job)
            finally:
                cancel_check.reset(token)
                beating.stop()  # before the outcome is written: an ended round must not look alive
        except Exception as exc:  # every failure is recorded: retried, or failed with its reason
            self._attempt_failed(job, exc, time.monotonic() - started)
            return
        duration = time.monotonic() - started
        self._outcome_line(job, result.state, duration, result.reason, result)

        def write() -> list[Dispatch]:
            nxt = self.book.finish(
                job,
                result.state,
                result.reason,
                round_index=result.round_index,
                result_head=result.head_sha,
                duration=duration,
                api=result.api,
                refusal=result.refusal,
            )
            return [] if nxt is None else [nxt]

        self._settle(job, write)

    def _outcome_line(
        self,
        job: Job,
        state: str,
        seconds: float,
        reason: str,
        result: RoundResult | None = None,
        level: int = logging.INFO,
    ) -> None:
        """The job's outcome in the log (service.logs.job_line): one line per attempt that ended."""
        job_line(
            log,
            job=job.id,
            repo=job.repository,
            pr=job.pr,
            head=(result.head_sha if result is not None and result.head_sha else job.head_sha),
            trigger=job.trigger,
            attempt=job.attempts,
            state=state,
            seconds=seconds,
            reason=reason,
            severities=result.severities if result is not None else None,
            api=result.api if result is not None else None,
            level=level,
        )

    def _attempt_failed(self, job: Job, exc: Exception, seconds: float = 0.0) -> None:
        reason = self._scrub(f"{type(exc).__name__}: {exc}")
        if is_permanent(exc) or job.attempts >= self.settings.max_attempts:
            why = f"failed after {job.attempts} attempt(s): {reason}"
            self._outcome_line(job, "failed", seconds, why, level=logging.ERROR)

            def fail() -> list[Dispatch]:
                nxt = self.book.finish(job, "failed", f"failed after {job.attempts} attempt(s): {reason}")
                return [] if nxt is None else [nxt]

            self._settle(job, fail)
            return
        delay = self.backoff(job.attempts, exc)
        why = f"attempt {job.attempts} failed ({reason}); retrying in {delay:.1f}s"
        self._outcome_line(job, "retry", seconds, why, level=logging.WARNING)

        def retry() -> list[Dispatch]:
            pair = self.book.retry_later(
                job, f"attempt {job.attempts} failed: {reason}; retrying in {delay:.0f}s", delay
            )
            return [d for d in pair if d is not None]

        self._settle(job, retry)

    def _settle(self, job: Job, write: Callable[[], list[Dispatch]]) -> None:
        """Record how the job's attempt ended and send the messages that follow from it.

        When the store refuses (an outage), the write is kept and tried again on every heartbeat
        until the store answers, and the job's heartbeat stops meanwhile: if this worker dies
        first, the job's lease runs out and any worker re-queues it. The write only applies to a
        job still `running` under this owner, so a late one never undoes a recovery.
        """
        with self._lock:
            self._running.discard(job.id)
        try:
            messages = write()
        except StoreError as exc:
            log.warning("job %d: the store refused its outcome (%s); writing it when it is back", job.id, exc)
            with self._lock:
                self._owed.append((job.id, write))
            return
        self._send(messages)

    def _send(self, messages: list[Dispatch]) -> None:
        try:
            self.queue.send(messages)
        except Exception as exc:  # the jobs are queued in the store; the sweep sends them when it can
            log.warning("could not send %d job message(s) to the queue: %s", len(messages), exc)

    def pay_owed(self) -> int:
        """Write the outcomes the store refused earlier, oldest first; returns how many remain."""
        with self._lock:
            owed, self._owed = self._owed, []
        for i, (job_id, write) in enumerate(owed):
            try:
                messages = write()
            except StoreError:
                with self._lock:
                    self._owed[:0] = owed[i:]
                    return len(self._owed)
            log.info("job %d: its outcome is recorded now that the store answers", job_id)
            self._send(messages)
        with self._lock:
            return len(self._owed)

    def blocked_wait(self, dispatch: int) -> float:
        """Seconds before a job blocked by its PR's running round asks again: doubling from
        `lock_retry_seconds` up to the lease. The round that ends sends the next job of its PR
        itself, so this is only the safety net, and a long round does not re-dispatch every second."""
        s = self.settings
        cap = max(s.job_lease_seconds, s.lock_retry_seconds)
        return float(min(s.lock_retry_seconds * 2 ** min(max(dispatch - 1, 0), 20), cap))

    def backoff(self, attempts: int, exc: Exception) -> float:
        """Seconds before the next attempt: exponential with jitter, or until a rate limit resets."""
        s = self.settings
        if isinstance(exc, RateLimited) and exc.reset_at is not None:
            return float(max(exc.reset_at - time.time() + 1.0, s.retry_base_seconds))
        delay = min(s.retry_base_seconds * (2 ** max(attempts - 1, 0)), s.retry_max_seconds)
        return float(delay) * (1.0 + 0.2 * random.random())  # noqa: S311 - jitter, not security

    # --- liveness and recovery -----------------------------------------------------------------

    def recover(self, *, startup: bool) -> int:
        """Re-queue jobs interrupted by dead workers; at startup also re-send every queued job's
        message (duplicates are harmless, lost ones are not). Returns how many were re-queued."""
        lease = self.settings.job_lease_seconds
        found = self.book.recover(
            lease_seconds=lease,
            dead_owner=lambda owner: owner_is_dead(owner, me=self.owner),
            resend_queued_older_than=0.0 if startup else None,
        )
        for m in found.requeued:
            log.warning("job %d: re-queued; the worker running it stopped", m.job_id)
        if found.resent:
            log.debug("re-sent the messages of %d queued job(s)", len(found.resent))
        self.queue.send([*found.requeued, *found.resent])
        return len(found.requeued)

    def resend_lost(self) -> int:
        """Send again the messages of queued jobs the queue no longer holds (Redis restarted without
        its data, a send that failed); returns how many."""
        lost = self.book.unsent(self.queue.messages(), grace_seconds=self._beat())
        if lost:
            log.warning("the queue had lost the messages of %d queued job(s); sent them again", len(lost))
            self._send(lost)
        return len(lost)

    def start(self) -> None:
        """Recover interrupted jobs, then keep heartbeats fresh and sweep for dead workers."""
        requeued = self.recover(startup=True)
        if requeued:
            log.warning("re-queued %d interrupted job(s) left by stopped workers", requeued)
        self._thread = threading.Thread(target=self._keepalive, name="reviewbot-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _beat(self) -> float:
        return min(max(self.settings.job_lease_seconds / 4, 0.2), 15.0)

    def _keepalive(self) -> None:
        """Each beat: write owed outcomes, refresh the heartbeats of the rounds running here, look
        for lost messages; each lease: re-queue the jobs of dead workers; and prune on schedule."""
        lease = self.settings.job_lease_seconds
        beat = self._beat()
        last_sweep = time.monotonic()

        def sweep() -> None:
            nonlocal last_sweep
            if time.monotonic() - last_sweep >= lease:
                last_sweep = time.monotonic()
                self.recover(startup=False)

        # Each step on its own: the queue being down must not stop heartbeats, nor the store retention.
        steps = (self.pay_owed, self._heartbeat, self.resend_lost, sweep, self.prune_when_due)
        while not self._stop.wait(beat):
            for step in steps:
                try:
                    step()
                except Exception as exc:  # the thread must outlive a database or queue outage
                    log.warning(
                        "%s failed (%s: %s); retrying in %.1fs",
                        step.__name__.strip("_"),
                        type(exc).__name__,
                        exc,
                        beat,
                    )

    def _heartbeat(self) -> None:
        with self._lock:
            running = set(self._running)
        self.book.heartbeat(self.owner, running)

    def prune_when_due(self) -> None:
        """Retention (see `reviewbot.service.retention`), at most once per `prune_interval_seconds`."""
        interval = self.settings.prune_interval_seconds
        if interval <= 0 or time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + interval
        pruned = prune(self.book.engine, self.settings)
        if pruned.total:
            log.info("retention: %s", pruned.describe())


def _default_scrub(settings: Settings) -> Callable[[str], str]:
    secrets = settings.secret_values()

    def scrub(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    return scrub
