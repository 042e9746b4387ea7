"""A round that holds the interpreter longer than the lease keeps its job: no second worker takes it.

The round holds the GIL in one C call (libc's sleep through ctypes.PyDLL, which does not release it),
as tree-sitter on a huge file or a regular expression over a 750 KB line does: the worker's heartbeat
thread cannot run meanwhile. A second worker, in a process of its own and on "another host" (it judges
the job by its heartbeat alone, as a worker elsewhere must), sweeps for stale jobs all along.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import threading
import time

from reviewbot.service.jobs import Job
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import RoundResult
from reviewbot.settings import Settings
from tests.service.helpers import wait_for
from tests.service.test_worker import consuming, enqueue, final

LEASE = 4.0
HOLD = 9  # seconds the round holds the interpreter: more than two leases

SECOND_WORKER = """
import json, sys, time
from reviewbot.service.jobs import JobBook
from reviewbot.service.job_records import utcnow
from reviewbot.store.db import open_engine

book = JobBook(open_engine(sys.argv[1]))
lease, until = float(sys.argv[2]), time.monotonic() + float(sys.argv[3])
requeued, ages = [], []
print("ready", flush=True)
while time.monotonic() < until:
    found = book.recover(lease_seconds=lease, dead_owner=lambda owner: False, resend_queued_older_than=None)
    requeued += [d.job_id for d in found.requeued]
    ages += [(utcnow() - j.heartbeat_at).total_seconds() for j in book.list(states=["running"])]
    time.sleep(0.2)
print(json.dumps({"requeued": requeued, "max_age": max(ages, default=None), "seen": len(ages)}))
"""


def test_a_stage_holding_the_interpreter_past_the_lease_keeps_its_job(settings: Settings) -> None:
    runtime = Runtime.open(settings.with_(job_lease_seconds=LEASE))
    try:
        sweeper = subprocess.Popen(
            [sys.executable, "-c", SECOND_WORKER, runtime.settings.database_url, str(LEASE), str(HOLD + 6)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert sweeper.stdout is not None
        assert sweeper.stdout.readline().strip() == "ready"
        libc = ctypes.PyDLL(None)  # PyDLL: the call keeps the GIL
        started = threading.Event()
        held: list[float] = []

        def long_stage(job: Job) -> RoundResult:
            started.set()
            t0 = time.monotonic()
            libc.sleep(HOLD)
            held.append(time.monotonic() - t0)
            return RoundResult("done", "round 1 published", 1, job.head_sha)

        job_id = enqueue(runtime, "d1", 1, "a" * 40)
        with consuming(runtime, long_stage, threads=1):
            done = wait_for(lambda: final(runtime, job_id), timeout=HOLD + 30, what="the long round to end")
        out, _ = sweeper.communicate(timeout=30)
        seen = json.loads(out.strip().splitlines()[-1])
        print(f"\nheld the interpreter {held[0]:.1f} s (lease {LEASE:g} s); second worker: {seen}")
        assert held and held[0] >= HOLD - 0.5
        assert done.state == "done" and done.attempts == 1  # ran once, by the first worker
        assert seen["requeued"] == []  # the second worker never took the live job
        assert seen["seen"] > 0 and seen["max_age"] < LEASE  # it saw it running, heartbeat fresh
    finally:
        runtime.close()


def test_the_heartbeat_process_stops_after_its_lifetime(settings: Settings) -> None:
    """A round stuck past every bound of its own (one C call that never returns) must come to look
    dead, so that another worker can take the job: the beater beats for its lifetime, no longer."""
    import sqlalchemy as sa

    from reviewbot.service.beater import Beating
    from reviewbot.service.events import Decision, RoundRequest
    from reviewbot.service.jobs import JobBook
    from reviewbot.store.store import Store
    from reviewbot.store.tables import jobs

    store = Store.open(str(settings.db_url))
    try:
        book = JobBook(store.engine)
        request = RoundRequest("acme/r", 1, "a" * 40, 77, "pull_request.synchronize")
        (dispatch,) = book.accept(
            "d1", Decision("pull_request", "synchronize", "round", "t", (request,), "acme/r", 1)
        ).dispatches
        assert (
            book.claim(dispatch.job_id, dispatch.dispatch, "w1", lease_seconds=60, wait_seconds=1).job
            is not None
        )
        url = store.engine.url.render_as_string(hide_password=False)
        beating = Beating.start(url, "w1", dispatch.job_id, 0.2, lifetime=1.5)

        def beat_at() -> object:
            with store.engine.connect() as conn:
                return conn.execute(
                    sa.select(jobs.c.heartbeat_at).where(jobs.c.id == dispatch.job_id)
                ).scalar()

        first = beat_at()
        wait_for(lambda: beat_at() != first, timeout=10, what="a beat")  # it beats
        time.sleep(2.5)  # past its lifetime
        last = beat_at()
        time.sleep(1.0)
        assert beat_at() == last  # and then no more
        beating.stop()
    finally:
        store.close()
