"""The rounds store on a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from reviewbot.errors import StoreError
from reviewbot.model.finding import Finding, Location, Severity
from reviewbot.store.db import (
    MIGRATIONS_DIR,
    VERSION_TABLE,
    default_db_url,
    engine_url,
    known_revisions,
    schema_revision,
)
from reviewbot.store.store import FindingRecord, RoundRecord, Store, metadata


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = str(tmp_path / "rounds.sqlite3") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = Store.open(url)
    yield s
    s.close()


def repo_name() -> str:
    # PostgreSQL tests share one database per session: every test works on its own repository.
    return f"acme/{uuid.uuid4().hex[:10]}"


FULL = Finding(
    rule="missing-tests",
    severity=Severity.P1,
    path="rtp_llm/cpp/config/ModelConfig.cc",
    line=191,
    title="New branch `need_rope_kv_cache = false` has no test",
    anchor="if (config.rope_config.style == RopeStyle::No && !use_kvcache) {",
    evidence=("searched `getAttentionConfigs` in 3 test files", "`bert.py:38` sets it"),
    suggestion="Pin the truth table.",
    suggestion_code="def test_x():\n    assert True\n",
    suggestion_lang="python",
    replacement="if (a) {",
    checklist=("6.1-tests-focused",),
    extra=(("field", "need_rope_kv_cache"), ("function", "getAttentionConfigs")),
    state="still_open",
    related=(Location("rtp_llm/models/bert.py", 38, "config.need_rope_kv_cache = False"),),
)


def record(
    repository: str,
    round_index: int,
    head: str,
    findings: list[Finding],
    status: str = "BLOCKING",
    report: str = "report",
    pr: int = 1361,
) -> RoundRecord:
    summary = {s.value: sum(1 for f in findings if f.severity is s and f.state != "fixed") for s in Severity}
    return RoundRecord(
        repository=repository,
        pr=pr,
        round_index=round_index,
        base_sha="b" * 40,
        head_sha=head,
        merge_base="b" * 40,
        previous_head=None,
        reviewed_at="2026-09-01 03:46 UTC",
        status=status,
        summary=summary,
        kpi={"round_index": round_index, "recheck": {"fixed": 0}},
        full_review=round_index == 1,
        force_pushed=False,
        report_markdown=f"# {report}\n",
        report_json=json.dumps({"status": status}),
        findings=tuple(FindingRecord.from_finding(f) for f in findings),
    )


def test_open_migrates_to_the_newest_revision_and_the_tables_match_the_code(store: Store) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    script = ScriptDirectory.from_config(cfg)
    head = script.get_current_head()
    # Store.open skips Alembic when the database is at the newest file's number: keep ids = numbers.
    assert sorted(r.revision for r in script.walk_revisions()) == known_revisions()
    assert head == known_revisions()[-1] == schema_revision(store.engine)
    mine = set(metadata.tables)  # later migrations add other stages' tables; compare the store's own

    def only_mine(name: str | None, type_: str, parent: object) -> bool:
        return type_ != "table" or name in mine

    with store.engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn, opts={"version_table": VERSION_TABLE, "include_name": only_mine}
        )
        assert ctx.get_current_revision() == head
        assert compare_metadata(ctx, metadata) == []
        assert mine <= set(sa.inspect(conn).get_table_names())


def test_a_finding_survives_the_store_exactly(store: Store) -> None:
    name = repo_name()
    fixed = FULL.with_(
        rule="duplicated-predicate",
        severity=Severity.P3,
        state="fixed",
        fixed_in="c" * 40,
        related=(),
        extra=(),
    )
    saved, created = store.save_round(record(name, 1, "a" * 40, [FULL, fixed]))
    assert created and saved.id is not None and saved.created_at is not None
    loaded = store.get_round(name, 1361, 1)
    assert loaded is not None
    assert [r.to_finding() for r in loaded.findings] == [FULL, fixed]
    assert loaded.open_findings == [FULL]
    assert loaded.findings[0].data["evidence"] == list(FULL.evidence)  # the public JSON is kept too
    assert loaded.report_markdown == "# report\n" and loaded.kpi["recheck"] == {"fixed": 0}
    assert loaded.summary == {"P0": 0, "P1": 1, "P2": 0, "P3": 0}


def test_a_stored_fingerprint_wins_over_a_recomputed_one(store: Store) -> None:
    name = repo_name()
    rec = record(name, 1, "a" * 40, [FULL])
    legacy = FindingRecord(**{**rec.findings[0].__dict__, "fingerprint": "0123456789abcdef"})
    store.save_round(RoundRecord(**{**rec.__dict__, "findings": (legacy,)}))
    loaded = store.latest_round(name, 1361)
    assert loaded is not None and loaded.open_findings[0].fingerprint == "0123456789abcdef"


def test_the_same_head_again_replaces_its_round_in_place(store: Store) -> None:
    name = repo_name()
    first, first_created = store.save_round(record(name, 1, "a" * 40, [FULL], report="first"))
    again, again_created = store.save_round(record(name, 1, "a" * 40, [], status="LGTM", report="again"))
    assert first_created and not again_created
    assert again.id == first.id and again.created_at == first.created_at
    assert [h.round for h in store.history(name, 1361)] == [1]
    latest = store.latest_round(name, 1361)
    assert latest is not None and latest.report_markdown == "# again\n" and latest.findings == ()
    assert latest.status == "LGTM"


def test_another_head_cannot_take_a_recorded_round_index(store: Store) -> None:
    name = repo_name()
    store.save_round(record(name, 1, "a" * 40, [FULL]))
    with pytest.raises(StoreError, match="already recorded for head aaaaaaaaaaaa"):
        store.save_round(record(name, 1, "d" * 40, []))
    assert [h.head_sha for h in store.history(name, 1361)] == ["a" * 40]


def test_lookups_and_history(store: Store) -> None:
    name = repo_name()
    new = FULL.with_(state="new")
    fixed = FULL.with_(state="fixed", fixed_in="d" * 40)
    other = FULL.with_(rule="flag-overloading", severity=Severity.P3, state="still_open")
    store.save_round(record(name, 1, "a" * 40, [new, other]))
    store.save_round(record(name, 2, "d" * 40, [other, fixed], status="LGTM"))
    store.save_round(record(name, 1, "a" * 40, [new, other], report="again"))  # a re-run keeps the order
    assert store.latest_round(name, 1361).round_index == 2  # type: ignore[union-attr]
    assert store.round_for_head(name, 1361, "a" * 40).round_index == 1  # type: ignore[union-attr]
    assert store.round_for_head(name, 1361, "f" * 40) is None
    assert store.get_round(name, 1361, 3) is None
    assert store.latest_round(name, 1) is None and store.history("acme/nothing", 1361) == []
    rows = store.history(name, 1361)
    assert [(r.round, r.status, r.new, r.fixed, r.still_open) for r in rows] == [
        (1, "BLOCKING", 1, 0, 1),
        (2, "LGTM", 0, 1, 1),
    ]
    assert rows[1].summary == {"P0": 0, "P1": 0, "P2": 0, "P3": 1}


def test_reopening_keeps_every_round(tmp_path: Path) -> None:
    path = str(tmp_path / "db.sqlite3")
    with Store.open(path) as s:
        s.save_round(record("acme/x", 1, "a" * 40, [FULL]))
    with Store.open(path) as s:
        again = s.latest_round("acme/x", 1361)
    assert again is not None and again.open_findings == [FULL]


def test_concurrent_workers_open_migrate_and_save(tmp_path: Path) -> None:
    url = str(tmp_path / "shared.sqlite3")
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            with Store.open(url) as s:
                for k in range(1, 4):
                    s.save_round(record("acme/x", k, f"{i:x}{k:x}".ljust(40, "0"), [FULL], pr=i))
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store.open(url) as s:
        assert all([h.round for h in s.history("acme/x", i)] == [1, 2, 3] for i in range(1, 7))


def test_default_location_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REVIEWBOT_DB_URL", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_db_url() == f"sqlite:///{tmp_path / 'state' / 'reviewbot' / 'reviewbot.sqlite3'}"
    with Store.open(None) as s:
        s.save_round(record("acme/x", 1, "a" * 40, []))
    assert (tmp_path / "state" / "reviewbot" / "reviewbot.sqlite3").is_file()
    monkeypatch.setenv("REVIEWBOT_DB_URL", f"sqlite:///{tmp_path / 'env.sqlite3'}")
    with Store.open(None) as s:
        assert s.history("acme/x", 1361) == []
    assert (tmp_path / "env.sqlite3").is_file()


def test_urls_are_normalised() -> None:
    assert engine_url("postgresql://u:pw@db/rb").drivername == "postgresql+psycopg"
    assert engine_url("postgres://u@db/rb").drivername == "postgresql+psycopg"
    assert engine_url("rel/x.sqlite3").database == str(Path("rel/x.sqlite3").resolve())


def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as info:
        Store.open("postgresql://postgres:s3cret@127.0.0.1:1/reviewbot")
    message = str(info.value)
    assert "127.0.0.1:1" in message and "s3cret" not in message and "REVIEWBOT_DB_URL" in message


def test_a_postgres_database_that_does_not_exist_says_so(pg_url: str) -> None:
    missing = pg_url.rsplit("/", 1)[0] + "/reviewbot_no_such_db"
    with pytest.raises(StoreError, match="reviewbot_no_such_db"):
        Store.open(missing)


def test_sqlite_foreign_keys_cascade(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "fk.sqlite3")) as s:
        saved, _ = s.save_round(record("acme/x", 1, "a" * 40, [FULL]))
        with s.engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM rounds WHERE id = :id"), {"id": saved.id})
            left = conn.execute(sa.text("SELECT count(*) FROM round_findings")).scalar()
    assert left == 0


def test_a_database_from_a_newer_reviewbot_is_refused_with_advice(tmp_path: Path) -> None:
    path = str(tmp_path / "newer.sqlite3")
    with Store.open(path) as s, s.engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))
    with pytest.raises(StoreError, match="revision 9999, newer than this reviewbot"):
        Store.open(path)


def test_an_old_database_is_upgraded_in_place(tmp_path: Path) -> None:
    """A database left at the first migration (an older reviewbot) keeps its rounds when upgraded."""
    path = str(tmp_path / "old.sqlite3")
    with Store.open(path) as s:
        s.save_round(record("acme/x", 1, "a" * 40, [FULL]))
        if known_revisions() == ["0001"]:
            pytest.skip("only one migration exists: nothing to upgrade from")
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
        with s.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0001")
        assert schema_revision(s.engine) == "0001"
    with Store.open(path) as s:
        assert schema_revision(s.engine) == known_revisions()[-1]
        again = s.latest_round("acme/x", 1361)
    assert again is not None and again.open_findings == [FULL]
