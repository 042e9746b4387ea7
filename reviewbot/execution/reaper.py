"""Sandboxes die with reviewbot: the process groups of running sandboxes, killed when reviewbot stops.

Every sandbox runs in its own session and process group (`run_sandboxed`), so that its timeout can
kill all of it; the same separation means a Ctrl-C at the terminal never reaches it. What stops
reviewbot must therefore stop the sandboxes explicitly:

- an exception (KeyboardInterrupt included) while `run_sandboxed` waits: it kills its own group;
- SIGINT and SIGTERM under `killed_on_signals` (the CLI): every registered group is killed at once,
  later sandboxes are refused (`check_open`), and `Interrupted` is raised in the main thread, so
  threads running mutants are not left waiting on live sandboxes while the main thread unwinds;
- the interpreter's exit (`atexit`, e.g. a worker stopped with SIGINT while rounds run in threads);
- reviewbot killed outright (SIGKILL): the launcher asks the kernel to kill the sandbox when the
  thread that started it dies (PR_SET_PDEATHSIG); `bwrap` and `unshare` pass that on to their pid
  namespace, whose processes all die with it.

Nothing here imports the rest of reviewbot: the CLI installs the handlers without loading the stack.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence

__all__ = ["Interrupted", "register", "unregister", "check_open", "kill_all", "killed_on_signals"]

# Process group ids of the sandboxes running now. A set, not a lock: the signal handler runs in the
# main thread between two bytecodes, possibly while that thread itself registers a group.
_LIVE: set[int] = set()
_CLOSED = threading.Event()
_CLOSED_BY: list[int] = []  # the signal that closed the sandboxes, for `check_open`'s exception


class Interrupted(KeyboardInterrupt):
    """reviewbot was told to stop (SIGINT, SIGTERM) and its sandboxes were killed."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signum)


def _kill(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def register(pgid: int) -> None:
    """A sandbox started in process group `pgid`; killed at once if the sandboxes are closed."""
    _LIVE.add(pgid)
    if _CLOSED.is_set():  # closed between the caller's check and its start
        _kill(pgid)


def unregister(pgid: int) -> None:
    _LIVE.discard(pgid)


def check_open() -> None:
    """Raise `Interrupted` when reviewbot is stopping: no sandbox may start any more."""
    if _CLOSED.is_set():
        raise Interrupted(_CLOSED_BY[-1] if _CLOSED_BY else signal.SIGINT)


def kill_all(signum: int | None = None) -> int:
    """SIGKILL every running sandbox's process group and refuse new ones; returns how many."""
    if signum is not None:
        _CLOSED_BY.append(signum)
    _CLOSED.set()
    groups = list(_LIVE)
    for pgid in groups:
        _kill(pgid)
    return len(groups)


def _on_signal(signum: int, frame: object) -> None:
    kill_all(signum)
    raise Interrupted(signum)


@contextlib.contextmanager
def killed_on_signals(signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """Within this block SIGINT and SIGTERM kill every sandbox, then raise `Interrupted`.

    Only in the main thread (elsewhere Python cannot install handlers), and a signal the process was
    started ignoring stays ignored (a background job of a script is not meant to see Ctrl-C). The
    previous handlers come back afterwards, and sandboxes may start again."""
    previous: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in signals:
            current = signal.getsignal(signum)
            if current is signal.SIG_IGN:
                continue
            previous[signum] = current
            signal.signal(signum, _on_signal)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)  # type: ignore[arg-type]
        _CLOSED.clear()
        _CLOSED_BY.clear()


atexit.register(kill_all)
