"""Writes paced per installation across workers (issue 15 item 9): github.pacing's file lock.

Before, each round's PyGithub requester spaced its own writes (`seconds_between_writes`), so two
workers writing for the same installation sent them at the same moment.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path
from typing import Any

from reviewbot.github.api import RestApi
from reviewbot.github.auth import connect
from reviewbot.github.client import ApiCounter
from reviewbot.github.pacing import WritePacer
from tests.github.conftest import PR, REPO, Seeded, settings

INTERVAL = 0.3


def _writer(directory: str, out: str) -> None:
    pacer = WritePacer(Path(directory), "app 4242 on acme", INTERVAL)
    times = []
    for _ in range(4):
        pacer.wait()
        times.append(time.time())
    Path(out).write_text("\n".join(map(repr, times)))


def test_three_processes_writing_for_one_installation_take_turns(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), str(tmp_path / f"{i}.out"))) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    times = sorted(float(t) for i in range(3) for t in (tmp_path / f"{i}.out").read_text().split())
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(times) == 12 and min(gaps) >= INTERVAL - 0.01, gaps


def test_another_installation_is_not_held_up(tmp_path: Path) -> None:
    a = WritePacer(tmp_path, "app 4242 on acme", 5.0)
    b = WritePacer(tmp_path, "app 4242 on other", 5.0)
    assert a.wait() == 0.0 and b.wait() == 0.0  # different files: no wait for either


def test_two_rounds_connections_space_their_writes_on_the_fake(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True, seconds_between_writes=INTERVAL)
    sent: list[float] = []
    lock = threading.Lock()

    def round_writes() -> None:
        conn = connect(s, REPO, ApiCounter())
        original = conn.client.requester.requestJsonAndCheck

        def timed(*args: Any, **kwargs: Any) -> Any:
            if args[0] == "POST":
                with lock:
                    sent.append(time.time())
            return original(*args, **kwargs)

        conn.client.requester.requestJsonAndCheck = timed  # type: ignore[method-assign]
        try:
            for i in range(3):
                RestApi(conn.client).create_issue_comment(REPO, PR, f"write {i}")
        finally:
            conn.close()

    threads = [threading.Thread(target=round_writes) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    sent.sort()
    gaps = [b - a for a, b in zip(sent, sent[1:], strict=False)]
    assert len(seeded.fake.comments(REPO, PR)) == 6 and len(sent) == 6
    assert min(gaps) >= INTERVAL - 0.01, gaps
