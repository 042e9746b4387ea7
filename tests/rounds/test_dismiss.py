"""Dismissals on a local PR: the CLI end to end on the bundled example, with a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from reviewbot import cli
from reviewbot.errors import UsageError
from reviewbot.example import ExampleRepo, build_example
from reviewbot.model.finding import Finding, Severity
from reviewbot.store.db import VERSION_TABLE
from reviewbot.store.dismissals import match_prefix, metadata
from reviewbot.store.store import Store
from tests.gitrepo import git

PR = 1361
REPO = "acme/rtp-llm"


@pytest.fixture
def example(tmp_path: Path) -> ExampleRepo:
    return build_example(tmp_path / "repo")


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _run(
    capsys: pytest.CaptureFixture[str], ex: ExampleRepo, head: str, db: str, fmt: str
) -> tuple[int, str]:
    code, out, err = _cli(
        capsys,
        "run", "--path", str(ex.path), "--base", ex.base, "--head", head, "--pr", str(PR),
        "--repo", REPO, "--db", db, "--no-tests", "--format", fmt, "--fail-on-blocking",
    )  # fmt: skip
    assert code in (0, 1), err
    return code, out


def test_a_dismissed_finding_stops_blocking_in_later_rounds(
    example: ExampleRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'rounds.sqlite3'}"
    code, out = _run(capsys, example, example.round1, db, "json")
    first = json.loads(out)
    assert code == 1 and first["status"] == "BLOCKING"
    blocking = [f for f in first["findings"] if f["blocking"]]
    assert [f["rule"] for f in blocking] == ["missing-tests"]
    fp = blocking[0]["fingerprint"]

    # Unknown and malformed prefixes: one line, exit 2, nothing recorded.
    unknown = "ffff" if not any(f["fingerprint"].startswith("ffff") for f in first["findings"]) else "eeee"
    for prefix, says in ((unknown, "no open finding"), ("xyz", "not a fingerprint prefix")):
        code, out, err = _cli(
            capsys, "dismiss", "--pr", str(PR), "--repo", REPO, "--db", db, prefix, "--reason", "r"
        )
        assert code == 2 and out == "" and says in err and err.count("\n") == 1, err

    reason = "covered by the integration suite in ci/embedding.yml"
    code, out, err = _cli(
        capsys,
        "dismiss",
        "--pr",
        str(PR),
        "--repo",
        REPO,
        "--db",
        db,
        fp[:8],
        "--reason",
        reason,
        "--by",
        "alice",
    )
    assert code == 0, err
    assert fp in out and "missing-tests" in out and reason in out

    # A new head that still adds no test: the finding is there, dismissed, and the round is not BLOCKING.
    git(example.path, "checkout", "-q", "--detach", example.round1)
    (example.path / "NOTES.txt").write_text("unrelated\n")
    git(example.path, "add", "NOTES.txt")
    git(example.path, "commit", "-q", "-m", "notes only")
    head = git(example.path, "rev-parse", "HEAD")
    code, out = _run(capsys, example, head, db, "json")
    second = json.loads(out)
    assert code == 0 and second["status"] != "BLOCKING"
    again = next(f for f in second["findings"] if f["fingerprint"] == fp)
    assert again["state"] == "still_open" and again["blocking"] is False
    assert again["dismissal"]["reason"] == reason and again["dismissal"]["by"] == "alice"
    assert second["kpi"]["dismissed"] == 1 and second["kpi"]["blocking"] == 0

    # The stored round-2 report shows the dismissal with its reason and who, outside the blocking list.
    code, out, _ = _cli(capsys, "rounds", "--pr", str(PR), "--repo", REPO, "--db", db, "--round", "2")
    assert code == 0
    blocking_part, _, after = out.partition("### Dismissed (shown, not blocking)")
    assert after and "No blocking issues." in blocking_part and fp[:12] not in blocking_part
    line = next(x for x in after.splitlines() if fp[:12] in x)
    assert "dismissed by alice at" in line and "covered by the integration suite" in line

    # History: the table and the JSON name the dismissed finding of round 2, none in round 1.
    code, out, _ = _cli(capsys, "rounds", "--pr", str(PR), "--repo", REPO, "--db", db)
    assert "dismissed in round 2:" in out and fp in out and reason in out
    code, out, _ = _cli(capsys, "rounds", "--pr", str(PR), "--repo", REPO, "--db", db, "--format", "json")
    doc = json.loads(out)
    assert [r["status"] for r in doc["rounds"]][0] == "BLOCKING" and doc["rounds"][1]["status"] != "BLOCKING"
    assert [(d["round"], d["fingerprint"], d["dismissal"]["by"]) for d in doc["dismissed"]] == [
        (2, fp, "alice")
    ]


def _f(anchor: str, fp: str) -> Finding:
    return Finding("missing-tests", Severity.P1, "a.py", 1, "t", anchor, fingerprint_override=fp)


def test_prefixes_must_name_exactly_one_finding() -> None:
    found = [_f("a", "abcd1234" + "0" * 8), _f("b", "abcd9999" + "0" * 8)]
    assert match_prefix(found, "ABCD12", "round 1").anchor == "a"
    with pytest.raises(UsageError, match="ambiguous in round 1: abcd1234"):
        match_prefix(found, "abcd", "round 1")
    with pytest.raises(UsageError, match="4 to 64 hex digits"):
        match_prefix(found, "abc", "round 1")


def test_migration_0004_creates_the_dismissals_table_the_code_declares(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'm.sqlite3'}") as store, store.engine.connect() as conn:
        mine = set(metadata.tables)
        ctx = MigrationContext.configure(
            conn,
            opts={"version_table": VERSION_TABLE, "include_name": lambda n, t, p: t != "table" or n in mine},
        )
        assert compare_metadata(ctx, metadata) == []
        assert "command" in {c["name"] for c in sa.inspect(conn).get_columns("service_jobs")}
