"""Who a worker is and whether it still runs, and huey's consumer that carries a worker's threads.

`owner_is_dead` lets any worker re-queue the rounds of a worker on its own host that stopped,
without waiting for their lease; `make_consumer` is huey's consumer as `reviewbot worker` and
`serve --with-worker` run it.
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

from huey.consumer import Consumer

from reviewbot.service.queue import JobQueue

__all__ = ["EmbeddedConsumer", "make_consumer", "owner_is_dead", "worker_name"]


def worker_name() -> str:
    """A new worker's owner name, "host:pid:token" (the token tells incarnations of one pid apart)."""
    return f"{_host()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


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
