"""Retention (issue 15 item 15): old deliveries, finished jobs and old rounds are pruned by age,
on SQLite and PostgreSQL; what is kept still shows in `reviewbot rounds`; the worker prunes on
its schedule."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
import sqlalchemy as sa

from reviewbot import cli
from reviewbot.service.events import Decision, RoundRequest
from reviewbot.service.jobs import JobBook, utcnow
from reviewbot.service.retention import prune
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import RoundResult
from reviewbot.settings import Settings
from reviewbot.store.records import FindingRecord, RoundRecord
from reviewbot.store.store import Store, round_findings, rounds
from reviewbot.store.tables import commands, deliveries, jobs
from tests.rounds.records import finding
from tests.service.helpers import wait_for
from tests.service.test_worker import consuming

REPO = "acme/rtp-llm"
OLD = timedelta(days=400)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, settings: Settings) -> Iterator[Store]:
    url = settings.db_url if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = Store.open(url)
    yield s
    s.close()


def _ignored(delivery: str) -> Decision:
    return Decision("check_run", "completed", "ignored", "not a check run of this App", (), REPO, None)


def _round(delivery: str, pr: int, head: str, *, command: str | None = None) -> Decision:
    request = RoundRequest(REPO, pr, head, None, "pull_request.synchronize")
    return Decision("pull_request", "synchronize", "round", "test", (request,), REPO, pr, command_key=command)


def _record(pr: int, index: int) -> RoundRecord:
    f = FindingRecord.from_finding(finding("default-changed", f"anchor{index}", 10 + index))
    return RoundRecord(
        repository=REPO,
        pr=pr,
        round_index=index,
        base_sha="b" * 40,
        head_sha=f"{pr:02d}{index:02d}".ljust(40, "0"),
        merge_base="b" * 40,
        previous_head=None,
        reviewed_at="2025-01-01 00:00 UTC",
        status="LGTM",
        summary={"P0": 0, "P1": 0, "P2": 1, "P3": 0},
        kpi={},
        full_review=index == 1,
        force_pushed=False,
        report_markdown=f"# round {index} of PR {pr}\n",
        report_json=json.dumps({"round": index}),
        findings=(f,),
    )


def _age(store: Store, table: sa.Table, column: str, where: sa.ColumnElement[bool]) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.update(table).where(where).values({column: utcnow() - OLD}))


def _count(store: Store, table: sa.Table, *where: sa.ColumnElement[bool]) -> int:
    with store.engine.begin() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table).where(*where)).scalar() or 0)


def test_prune_removes_what_is_older_than_its_age_and_keeps_the_rest(
    store: Store, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    book = JobBook(store.engine)
    # Deliveries: ignored check_run events (old and new), deliveries that queued rounds (old, new).
    for i in range(7):
        book.accept(f"ignored-old-{i}", _ignored(f"ignored-old-{i}"))
    book.accept("ignored-new", _ignored("ignored-new"))
    old_round = book.accept("queued-old", _round("queued-old", 1, "a" * 40, command="c1:2025"))
    new_round = book.accept("queued-new", _round("queued-new", 2, "c" * 40))
    running = book.accept("running-old", _round("running-old", 3, "d" * 40))
    _age(store, deliveries, "received_at", deliveries.c.delivery_id != "ignored-new")
    _age(store, deliveries, "received_at", deliveries.c.delivery_id.in_(["queued-new"]))
    with store.engine.begin() as conn:  # queued-new: 10 days, inside keep_deliveries_days
        conn.execute(
            sa.update(deliveries)
            .where(deliveries.c.delivery_id == "queued-new")
            .values(received_at=utcnow() - timedelta(days=10))
        )
    _age(store, commands, "received_at", commands.c.command_key == "c1:2025")
    # Jobs: one finished long ago, one finished now, one running since long ago (never pruned).
    for accepted, owner in ((old_round, "h:1:a"), (new_round, "h:1:b"), (running, "h:1:c")):
        claim = book.claim(accepted.job_ids[0], 1, owner, lease_seconds=60, wait_seconds=1)
        assert claim.job is not None
        if accepted is not running:
            book.finish(claim.job, "done", "round 1 published")
    _age(store, jobs, "finished_at", jobs.c.id == old_round.job_ids[0])
    _age(store, jobs, "started_at", jobs.c.id == running.job_ids[0])
    # Rounds: PR 10 has five old rounds, PR 11 one old round, PR 12 three recent ones.
    for pr, n in ((10, 5), (11, 1), (12, 3)):
        for index in range(1, n + 1):
            store.save_round(_record(pr, index))
    _age(store, rounds, "created_at", rounds.c.pr.in_([10, 11]))

    pruned = prune(store.engine, settings)

    assert pruned.counts == {
        "service_deliveries": 9,  # 7 old ignored + the two old deliveries that queued rounds
        "service_commands": 1,
        "service_jobs": 1,
        "rounds": 3,  # rounds 1-3 of PR 10: a PR's newest two are kept whatever their age
    }
    with store.engine.begin() as conn:
        left = {r[0] for r in conn.execute(sa.select(deliveries.c.delivery_id))}
    assert left == {"ignored-new", "queued-new"}  # a job outlives its delivery's row
    assert _count(store, jobs) == 2 and _count(store, jobs, jobs.c.state == "running") == 1
    kept = [(pr, h.round) for pr in (10, 11, 12) for h in store.history(REPO, pr)]
    assert kept == [(10, 4), (10, 5), (11, 1), (12, 1), (12, 2), (12, 3)]
    # The findings of pruned rounds went with them (ON DELETE CASCADE).
    assert _count(store, round_findings) == 6
    assert prune(store.engine, settings).total == 0  # nothing more to do
    counters = book.read_counters()["pruned"]
    assert counters == {
        '{"table":"rounds"}': 3.0,
        '{"table":"service_commands"}': 1.0,
        '{"table":"service_deliveries"}': 9.0,
        '{"table":"service_jobs"}': 1.0,
    }

    # `reviewbot rounds` lists the kept history and still prints a kept round's report.
    url = str(store.url) if not str(store.url).startswith("postgresql") else _plain(store)
    assert cli.main(["rounds", "--pr", "10", "--repo", REPO, "--db", url]) == 0
    table = capsys.readouterr().out
    assert "PR #10: 2 round(s) (rounds 1-3 no longer kept: retention)" in table
    assert [line.split()[0] for line in table.splitlines()[2:4]] == ["4", "5"]
    assert cli.main(["rounds", "--pr", "10", "--repo", REPO, "--db", url, "--round", "4"]) == 0
    assert capsys.readouterr().out == "# round 4 of PR 10\n"


def _plain(store: Store) -> str:
    return store.engine.url.render_as_string(hide_password=False).replace("+psycopg", "")


def test_an_age_of_zero_keeps_that_kind_for_good(store: Store, settings: Settings) -> None:
    book = JobBook(store.engine)
    book.accept("ignored-old", _ignored("ignored-old"))
    _age(store, deliveries, "received_at", deliveries.c.delivery_id == "ignored-old")
    for index in range(1, 4):
        store.save_round(_record(10, index))
    _age(store, rounds, "created_at", rounds.c.pr == 10)
    keep_all = settings.with_(keep_ignored_days=0, keep_deliveries_days=0, keep_rounds_days=0)
    assert prune(store.engine, keep_all).total == 0
    assert _count(store, deliveries) == 1 and _count(store, rounds) == 3


def test_ignored_deliveries_follow_their_own_age_not_the_deliveries_one(
    store: Store, settings: Settings
) -> None:
    """keep_ignored_days=0 keeps them for good even while deliveries that queued rounds are pruned
    (the deliveries' age deleted every old delivery, ignored ones included)."""
    book = JobBook(store.engine)
    book.accept("ignored-old", _ignored("ignored-old"))
    book.accept("queued-old", _round("queued-old", 1, "a" * 40))
    _age(store, deliveries, "received_at", deliveries.c.delivery_id.in_(["ignored-old", "queued-old"]))
    prune(store.engine, settings.with_(keep_ignored_days=0, keep_deliveries_days=30, keep_jobs_days=0))
    with store.engine.connect() as conn:
        kept = {d for (d,) in conn.execute(sa.select(deliveries.c.delivery_id))}
    assert kept == {"ignored-old"}


def test_the_worker_prunes_on_its_schedule(settings: Settings) -> None:
    # A day of retention for ignored deliveries and a prune every half second; the old ones are dated
    # back rather than waited for, so a slow machine cannot age the recent one past the limit too.
    fast = settings.with_(keep_ignored_days=1, prune_interval_seconds=0.5)
    rt = Runtime.open(fast)
    try:
        for i in range(20):
            rt.book.accept(f"ignored-{i}", _ignored(f"ignored-{i}"))
        _age(rt.store, deliveries, "received_at", deliveries.c.delivery_id.like("ignored-%"))
        rt.book.accept("ignored-recent", _ignored("ignored-recent"))
        with consuming(rt, lambda job: RoundResult("done", "not reached", 1, job.head_sha), threads=1):
            wait_for(lambda: rt.book.read_counters().get("pruned"), timeout=30, what="the worker to prune")
            wait_for(lambda: _count_rows(rt) == 1, timeout=30, what="the ignored deliveries to go")
    finally:
        rt.close()
    assert rt.book.read_counters()["pruned"] == {'{"table":"service_deliveries"}': 20.0}


def _count_rows(rt: Runtime) -> int:
    with rt.store.engine.begin() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(deliveries)).scalar() or 0)
