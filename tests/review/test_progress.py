"""Progress on a terminal: shown after the delay, stage by stage, cleared at the end; never off a tty or in CI."""

from __future__ import annotations

import io
import time

from reviewbot.review.progress import StageClock, TerminalProgress, terminal_progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_before_the_delay_and_cleared_at_the_end() -> None:
    out = Tty()
    progress = TerminalProgress(out, delay=5.0)
    clock = StageClock({}, progress)
    clock.lap("parse", "index", "3 changed files parsed")
    clock.lap("index", "checks", "12 files read, 4 parsed")
    clock.lap("checks")
    clock.done()
    assert out.getvalue() == ""  # a fast round shows nothing


def test_a_long_stage_is_shown_then_each_next_stage() -> None:
    out = Tty()
    progress = TerminalProgress(out, delay=0.05)
    clock = StageClock({}, progress)
    clock.lap("parse", "index", "3 changed files parsed")
    time.sleep(0.3)  # the index runs long: the timer shows it
    assert "reviewbot: index… (3 changed files parsed)" in out.getvalue()
    clock.lap("index", "tests", "724 files read, 158 parsed")
    assert "reviewbot: tests… (724 files read, 158 parsed)" in out.getvalue()
    clock.done()
    assert out.getvalue().endswith("\r\033[K")
    assert set(clock.timings) == {"parse", "index"}


def test_no_progress_off_a_terminal_or_in_ci() -> None:
    assert terminal_progress(io.StringIO(), {}) is None
    assert terminal_progress(Tty(), {"CI": "true"}) is None
    shown = terminal_progress(Tty(), {})
    assert isinstance(shown, TerminalProgress)
    shown("", "")
