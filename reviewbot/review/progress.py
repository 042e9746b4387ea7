"""Stage timings of a round, and progress on a terminal for long runs.

A review of a real repository can take seconds to a minute (index, tests); a user at a terminal
should see which stage runs and what it has done so far, while CI logs, JSON on stdout and the App's
worker stay as they are. So progress goes to stderr only when it is a terminal, `CI` is not set, and
the round has run for more than `delay` seconds (a timer shows the stage then); each line replaces
the previous one and the last is cleared when the round ends.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress", "StageClock", "TerminalProgress", "terminal_progress"]

Progress = Callable[[str, str], None]  # (stage that starts, what the previous stages found)


class StageClock:
    """Stage timings in milliseconds, for the KPI block; tells `progress` when a stage starts."""

    def __init__(self, timings: dict[str, float], progress: Progress | None = None) -> None:
        self.timings = timings
        self.progress = progress
        self._start = time.perf_counter()

    def lap(self, stage: str, starting: str = "", detail: str = "") -> None:
        """`stage` ended; `starting` (if any) begins, after what `detail` says."""
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (now - self._start) * 1000
        self._start = now
        if self.progress is not None and starting:
            self.progress(starting, detail)

    def done(self) -> None:
        if self.progress is not None:
            self.progress("", "")


class TerminalProgress:
    """One self-replacing status line on a terminal, shown once a round has run `delay` seconds.

    Stages report when they start; a timer shows the current one when the delay passes (so a long
    first stage is shown too), and every later stage is shown as it starts."""

    def __init__(self, stream: TextIO, delay: float = 1.0) -> None:
        self.stream = stream
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._current = ("parse", "")
        self._shown = False
        self._ended = False
        self._timer = threading.Timer(delay, self._show)
        self._timer.daemon = True
        self._timer.start()

    def __call__(self, stage: str, detail: str) -> None:
        if not stage:  # the round ended: stop the timer, clear what was shown
            self._timer.cancel()
            with self._lock:
                self._ended = True
                if self._shown:
                    self.stream.write("\r\033[K")
                    self.stream.flush()
            return
        with self._lock:
            self._current = (stage, detail)
        if not self._timer.is_alive():
            self._show()

    def _show(self) -> None:
        with self._lock:
            if self._ended:
                return
            stage, detail = self._current
            elapsed = time.monotonic() - self._started
            line = f"reviewbot: {stage}…" + (f" ({detail})" if detail else "") + f" {elapsed:.0f} s"
            self.stream.write("\r\033[K" + line)
            self.stream.flush()
            self._shown = True


def terminal_progress(stream: TextIO, environ: dict[str, str] | None = None) -> TerminalProgress | None:
    """Progress on `stream` when it is a terminal outside CI; None otherwise."""
    env = os.environ if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    if env.get("CI") or not callable(isatty) or not isatty():
        return None
    return TerminalProgress(stream)
