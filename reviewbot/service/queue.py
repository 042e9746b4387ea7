"""The message queue: huey, with SQLite (default, no server) or Redis (REVIEWBOT_QUEUE_URL=redis://...).

Messages are only `(job id, dispatch)`; the job itself is a row of the jobs table (see jobs.py),
so a lost or duplicated message never loses or doubles a round. Both sides build the queue with
`JobQueue(settings)`; the worker passes the handler that runs a job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from huey import Huey, RedisHuey, SqliteHuey

from reviewbot.errors import UsageError
from reviewbot.service.jobs import Dispatch
from reviewbot.settings import Settings, redact_url

__all__ = ["JobQueue", "make_huey", "TASK_NAME"]

log = logging.getLogger(__name__)

TASK_NAME = "reviewbot.run_job"
Handler = Callable[[int, int], None]


def make_huey(settings: Settings) -> Huey:
    """RedisHuey for a redis:// URL, else SqliteHuey on the URL's file or the state directory's."""
    url = settings.queue_url
    if url and url.startswith(("redis://", "rediss://", "unix://")):
        # blocking: workers wait on BRPOP instead of polling, so a job starts as soon as it is sent.
        return RedisHuey(settings.queue_name, url=url, results=False, blocking=True, read_timeout=1)
    if url and url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))  # SQLAlchemy's convention: sqlite:////abs, sqlite:///rel
    elif url:
        raise UsageError(
            f"REVIEWBOT_QUEUE_URL {redact_url(url)!r} is neither redis://HOST:PORT/DB nor sqlite:///FILE"
        )
    else:
        path = settings.queue_file
    path = path.expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteHuey(settings.queue_name, filename=str(path), results=False, timeout=30)


class JobQueue:
    """Sends and (in workers) receives job messages."""

    def __init__(
        self, settings: Settings, handler: Handler | None = None, *, huey: Huey | None = None
    ) -> None:
        self.huey = huey if huey is not None else make_huey(settings)
        self._handler = handler

        def run_job(job_id: int, dispatch: int) -> None:
            if self._handler is None:
                raise RuntimeError("this process only sends jobs; run `reviewbot worker` to execute them")
            self._handler(job_id, dispatch)

        self._task = self.huey.task(name=TASK_NAME)(run_job)

    def set_handler(self, handler: Handler) -> None:
        self._handler = handler

    def send(self, messages: Iterable[Dispatch]) -> int:
        """Enqueue each message (after its delay); returns how many were sent."""
        n = 0
        for m in messages:
            if m.delay > 0:
                self._task.schedule(args=(m.job_id, m.dispatch), delay=m.delay)
            else:
                self._task(m.job_id, m.dispatch)
            n += 1
        return n

    def pending(self) -> int:
        """Messages waiting in the queue (ready now)."""
        return int(self.huey.pending_count())

    def scheduled(self) -> int:
        """Messages waiting for their time (retries and lock waits)."""
        return int(self.huey.scheduled_count())

    def messages(self) -> set[tuple[int, int]]:
        """The (job id, dispatch) of every message the queue holds, ready or waiting for its time:
        what the worker's sweep compares with the queued jobs to find lost messages."""
        out: set[tuple[int, int]] = set()
        for task in [*self.huey.pending(), *self.huey.scheduled()]:
            args = getattr(task, "args", None)
            if getattr(task, "name", None) == TASK_NAME and isinstance(args, tuple) and len(args) == 2:
                out.add((int(args[0]), int(args[1])))
        return out

    def describe(self) -> str:
        storage = self.huey.storage
        kind = type(self.huey).__name__
        where = getattr(storage, "filename", None) or getattr(storage, "queue_key", "")
        return f"{kind} {self.huey.name} ({where})"

    def close(self) -> None:
        close = getattr(self.huey.storage, "close", None)
        if callable(close):
            close()
