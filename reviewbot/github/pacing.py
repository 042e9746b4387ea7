"""Writes to GitHub spaced per installation across every worker on this machine: GitHub's secondary rate limit
counts an installation's writes, whichever worker sends them.

GitHub asks integrations to leave at least a second between content-creating requests and counts
them per installation (or per token), not per process: several workers, each pacing its own rounds,
still write concurrently and reach the secondary rate limit. A `WritePacer` keeps the time of the
last write of one installation in a file under the cache directory; a write takes the file's lock,
waits until `interval` has passed since the last one, notes its own time and lets go. Holding the
lock while waiting makes writers queue in turn instead of all waking at once.

A file lock reaches the workers of one host (the deployment docs/github-app.md describes: one state
and cache directory); workers on several hosts share nothing here.
"""

from __future__ import annotations

import fcntl
import hashlib
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["WritePacer"]


class WritePacer:
    def __init__(
        self,
        directory: Path,
        key: str,
        interval: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # The key may hold a token's login or an API host: hashed into a file name.
        name = hashlib.sha256(key.encode()).hexdigest()[:24]
        self.path = directory / f"{name}.writes"
        self.interval = interval
        self._sleep = sleep
        self._clock = clock

    def wait(self) -> float:
        """Wait for this installation's turn to write; returns the seconds waited."""
        if self.interval <= 0:
            return 0.0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+", encoding="ascii") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.seek(0)
                try:
                    last = float(handle.read().strip() or 0.0)
                except ValueError:
                    last = 0.0  # a torn or foreign file: no spacing owed
                waited = max(0.0, last + self.interval - self._clock())
                if waited > 0:
                    self._sleep(waited)
                handle.seek(0)
                handle.truncate()
                handle.write(f"{self._clock():.6f}")
                handle.flush()
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return waited
