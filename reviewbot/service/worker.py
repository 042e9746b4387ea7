"""The worker: runs queued round jobs, one per PR at a time, retries transient failures with
backoff, records exhausted ones as failed, and re-queues rounds a dead worker left behind.

`Worker.handle` is the queue's handler. `Worker.start` begins the heartbeat/sweeper thread and
re-queues interrupted jobs; `run_consumer` runs huey's consumer around it (the `worker` command,
and `serve --with-worker` in a thread).
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from huey.consumer import Consumer

from reviewbot.errors import EnvironmentProblem, GitHubError, RateLimited, UsageError
from reviewbot.service.jobs import Job, JobBook
from reviewbot.service.queue import JobQueue
from reviewbot.settings import Settings

__all__ = [
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
    """What running one job's round came to."""

    state: str  # "done" | "skipped"
    reason: str
    round_index: int | None = None
    head_sha: str | None = None
    api: Mapping[str, int] = field(default_factory=dict)  # GitHub requests by kind: read/write/auth/retry


RoundFn = Callable[[Job], RoundResult]

# Failures that a retry cannot fix: the configuration or the environment is wrong.
_PERMANENT = (UsageError, EnvironmentProblem)


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


def _host() -> str:
    return socket.gethostname()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child nobody has reaped yet still answers kill(0)
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def owner_is_dead(owner: str, *, me: str) -> bool:
    """True when `owner` ("host:pid:token") is a worker on this host that no longer runs.

    Workers on other hosts are judged by their heartbeats instead (we cannot see their processes).
    The same pid with another token is an earlier incarnation (a container restarted as pid 1).
    """
    try:
        host, pid_text, token = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    my_host, my_pid, my_token = me.rsplit(":", 2)
    if host != my_host:
        return False
    if pid == int(my_pid):
        return token != my_token
    return not _pid_alive(pid)


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
        self.owner = f"{_host()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._scrub = scrub or _default_scrub(settings)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        queue.set_handler(self.handle)

    # --- one message ---------------------------------------------------------------------------

    def handle(self, job_id: int, dispatch: int) -> None:
        """Run job `job_id` if message `dispatch` is still current and its PR is free."""
        s = self.settings
        claim = self.book.claim(
            job_id, dispatch, self.owner, lease_seconds=s.job_lease_seconds, wait_seconds=s.lock_retry_seconds
        )
        if claim.status == "blocked":
            assert claim.retry is not None
            log.debug("job %d: another round of its PR is running; waiting", job_id)
            self.queue.send([claim.retry])
            return
        if claim.status != "run" or claim.job is None:
            log.debug("job %d: message %d is stale; nothing to do", job_id, dispatch)
            return
        job = claim.job
        where = f"{job.repository}#{job.pr}"
        head = (job.head_sha or "current head")[:12]
        log.info(
            "job %d: round for %s at %s (attempt %d, %s)", job.id, where, head, job.attempts, job.trigger
        )
        started = time.monotonic()
        try:
            result = self.run_round(job)
        except Exception as exc:  # every failure is recorded: retried, or failed with its reason
            self._attempt_failed(job, exc)
            return
        duration = time.monotonic() - started
        log.info("job %d: %s %s: %s (%.1fs)", job.id, where, result.state, result.reason, duration)
        nxt = self.book.finish(
            job,
            result.state,
            result.reason,
            round_index=result.round_index,
            result_head=result.head_sha,
            duration=duration,
            api=result.api,
        )
        if nxt is not None:
            self.queue.send([nxt])

    def _attempt_failed(self, job: Job, exc: Exception) -> None:
        reason = self._scrub(f"{type(exc).__name__}: {exc}")
        where = f"{job.repository}#{job.pr}"
        if is_permanent(exc) or job.attempts >= self.settings.max_attempts:
            log.error("job %d: %s failed after %d attempt(s): %s", job.id, where, job.attempts, reason)
            nxt = self.book.finish(job, "failed", f"failed after {job.attempts} attempt(s): {reason}")
            if nxt is not None:
                self.queue.send([nxt])
            return
        delay = self.backoff(job.attempts, exc)
        log.warning(
            "job %d: %s attempt %d failed (%s); retrying in %.1fs", job.id, where, job.attempts, reason, delay
        )
        retry, nxt = self.book.retry_later(
            job, f"attempt {job.attempts} failed: {reason}; retrying in {delay:.0f}s", delay
        )
        self.queue.send([d for d in (retry, nxt) if d is not None])

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
            resend_queued_older_than=0.0 if startup else 10 * lease,
        )
        for m in found.requeued:
            log.warning("job %d: re-queued; the worker running it stopped", m.job_id)
        if found.resent:
            log.debug("re-sent the messages of %d queued job(s)", len(found.resent))
        self.queue.send([*found.requeued, *found.resent])
        return len(found.requeued)

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

    def _keepalive(self) -> None:
        lease = self.settings.job_lease_seconds
        beat = min(max(lease / 4, 0.2), 15.0)
        last_sweep = time.monotonic()
        while not self._stop.wait(beat):
            try:
                self.book.heartbeat(self.owner)
                if time.monotonic() - last_sweep >= lease:
                    last_sweep = time.monotonic()
                    self.recover(startup=False)
            except Exception:  # the thread must outlive a database hiccup
                log.exception("heartbeat failed; retrying in %.1fs", beat)


def _default_scrub(settings: Settings) -> Callable[[str], str]:
    secrets = settings.secret_values()

    def scrub(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    return scrub


class EmbeddedConsumer(Consumer):  # type: ignore[misc]
    """huey's consumer without signal handlers, for running inside `serve` (not the main thread)."""

    def _set_signal_handlers(self) -> None:
        return


def make_consumer(queue: JobQueue, workers: int, *, embedded: bool = False) -> Consumer:
    """huey's consumer for `workers` threads; polls SQLite at most every second when idle.

    SIGTERM (what service managers send) lets running rounds finish before exiting; SIGINT exits at
    once — the rounds it cut short are re-run by the next worker that starts.
    """
    cls = EmbeddedConsumer if embedded else Consumer
    return cls(
        queue.huey,
        workers=workers,
        worker_type="thread",
        periodic=False,
        initial_delay=0.05,
        backoff=1.3,
        max_delay=1.0,
        scheduler_interval=1,
        check_worker_health=True,
        graceful_signal="TERM",
    )
