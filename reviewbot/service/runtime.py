"""What `serve` and `worker` open at start: the store (migrated), the jobs book and the queue."""

from __future__ import annotations

from dataclasses import dataclass

from reviewbot.service.jobs import JobBook
from reviewbot.service.queue import JobQueue
from reviewbot.settings import Settings
from reviewbot.store.store import Store

__all__ = ["Runtime"]


@dataclass
class Runtime:
    settings: Settings
    store: Store
    book: JobBook
    queue: JobQueue

    @classmethod
    def open(cls, settings: Settings) -> Runtime:
        """Open (and migrate) the database named by the settings, and connect to the queue."""
        store = Store.open(settings.database_url)
        try:
            queue = JobQueue(settings)
        except Exception:
            store.close()
            raise
        return cls(settings, store, JobBook(store.engine, max_attempts=settings.max_attempts), queue)

    def describe(self) -> str:
        """Where state lives, without secrets (for the start-up line)."""
        return f"database {self.store.url}, queue {self.queue.describe()}"

    def close(self) -> None:
        self.queue.close()
        self.store.close()
