"""A job's heartbeat from a process of its own, for as long as its round runs.

The worker's heartbeat thread shares the interpreter with the rounds: a stage that holds it in one
long C call (tree-sitter on a huge file, a regular expression over a 750 KB line, a JSON dump of
10 MB) stops that thread too, the heartbeat goes stale past the lease, and another worker takes a
job that is still running. So while a round runs, a small child process refreshes that job's
heartbeat every beat. It reads its orders from stdin (never argv: the database URL may hold a
password) and stops when stdin closes: when the round ends (`Beating.stop`), or when the worker
dies, whatever way (the pipe closes with it).

    python -m reviewbot.service.beater   # stdin: {"db_url": ..., "owner": ..., "job_id": ..., "beat": ...}
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO

from reviewbot.model.jsonvalue import JSONObject, JSONValue

__all__ = ["BeatOrders", "Beating", "main"]

log = logging.getLogger(__name__)


def _number(orders: JSONObject, key: str) -> float:
    value = orders[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"the beater's orders: {key} is not a number")
    return value


@dataclass(frozen=True)
class BeatOrders:
    """What a beater is told on its stdin, as one JSON line."""

    db_url: str
    owner: str  # the worker that runs the job
    job_id: int
    beat: float  # seconds between beats
    lifetime: float = float("inf")  # seconds; past them the beater stops

    def to_line(self) -> str:
        return json.dumps(
            {
                "db_url": self.db_url,
                "owner": self.owner,
                "job_id": self.job_id,
                "beat": self.beat,
                "lifetime": self.lifetime,
            }
        )

    @classmethod
    def from_line(cls, line: str) -> BeatOrders:
        orders: JSONValue = json.loads(line)
        if not isinstance(orders, dict):
            raise ValueError("the beater's orders are not a JSON object")
        return cls(
            str(orders["db_url"]),
            str(orders["owner"]),
            int(_number(orders, "job_id")),
            _number(orders, "beat"),
            _number(orders, "lifetime") if "lifetime" in orders else float("inf"),
        )


class Beating:
    """The beater of one running job (started by `start`, ended by `stop`)."""

    def __init__(self, proc: subprocess.Popen[bytes] | None) -> None:
        self._proc = proc

    @classmethod
    def start(cls, db_url: str, owner: str, job_id: int, beat: float, lifetime: float) -> Beating:
        """Start beating for `job_id` for at most `lifetime` seconds (a round stuck past every bound
        of its own must look dead, so another worker can take the job); a beater that cannot start is
        logged, and the worker's heartbeat thread still refreshes the job as before."""
        orders = BeatOrders(db_url, owner, job_id, beat, lifetime).to_line()
        try:
            proc = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed module
                [sys.executable, "-m", "reviewbot.service.beater"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                close_fds=True,
            )
            assert proc.stdin is not None
            proc.stdin.write(orders.encode("utf-8") + b"\n")
            proc.stdin.flush()
        except OSError as exc:
            log.warning("job %d: no heartbeat process (%s); the heartbeat thread goes on", job_id, exc)
            return cls(None)
        return cls(proc)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stop(self) -> None:
        """End the beating: close its stdin; a beater that does not exit at once is killed."""
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


def _closed(stream: IO[str], timeout: float) -> bool:
    """Wait up to `timeout` seconds; True when `stream` reached its end (the worker let go)."""
    ready, _, _ = select.select([stream], [], [], timeout)
    return bool(ready) and os.read(stream.fileno(), 4096) == b""


def main(stdin: IO[str] = sys.stdin) -> int:
    orders = BeatOrders.from_line(stdin.readline())
    # JobBook.heartbeat's update for one job, without importing the jobs book and what it pulls in
    # (a second of start-up for every round).
    import sqlalchemy as sa

    from reviewbot.service.job_records import utcnow
    from reviewbot.store.db import engine_url
    from reviewbot.store.tables import jobs

    url = engine_url(orders.db_url)
    engine = sa.create_engine(url, connect_args={"timeout": 30} if url.get_backend_name() == "sqlite" else {})
    owner, job_id, beat = orders.owner, orders.job_id, orders.beat
    ends = time.monotonic() + orders.lifetime
    refresh = sa.update(jobs).where(jobs.c.owner == owner, jobs.c.state == "running", jobs.c.id == job_id)
    try:
        while True:
            try:
                with engine.begin() as conn:
                    if conn.execute(refresh.values(heartbeat_at=utcnow())).rowcount == 0:
                        return 0  # the job is no longer this worker's running job
            except sa.exc.SQLAlchemyError as exc:  # a store outage: the next beat tries again
                print(f"reviewbot beater: job {job_id}: {type(exc).__name__}", file=sys.stderr)
            if _closed(stdin, beat):
                return 0
            if time.monotonic() > ends:
                print(f"reviewbot beater: job {job_id}: past its lifetime; no more beats", file=sys.stderr)
                return 0
    finally:
        engine.dispose()


if __name__ == "__main__":
    sys.exit(main())
