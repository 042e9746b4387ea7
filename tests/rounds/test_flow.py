"""Rounds end to end on the bundled example: real git, the real core, a real SQLite file / PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from reviewbot import cli
from reviewbot.change.diff import load_change
from reviewbot.example import ExampleRepo, build_example
from reviewbot.model.review import Review, Status
from reviewbot.report.marker import decode_state
from reviewbot.review.pipeline import ReviewSettings, review_change
from reviewbot.review.rounds import PreviousRound
from reviewbot.runner import RoundOutcome, continue_round, owner_name, run_local_round
from reviewbot.store.store import Store
from tests.gitrepo import git

PR = 1361
REPO = "acme/rtp-llm"
CONFIG_CC = "rtp_llm/cpp/config/ModelConfig.cc"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    ex = build_example(tmp_path_factory.mktemp("example") / "repo")
    git(ex.path, "remote", "add", "origin", f"git@github.com:{REPO}.git")
    return ex


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'rounds.sqlite3'}"
        return
    url: str = request.getfixturevalue("pg_url")
    yield url
    # Every test starts from an empty history of acme/rtp-llm.
    with Store.open(url) as s, s.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM rounds")


def run(example: ExampleRepo, head: str, url: str) -> RoundOutcome:
    with Store.open(url) as store:
        return run_local_round(example.path, example.base, head, PR, store, None, "en")


def states(review: Review) -> dict[str, str]:
    return {f.rule: f.state for f in review.findings}


def rounds_cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["rounds", "--pr", str(PR), *args]) == 0
    return capsys.readouterr().out


def test_two_rounds_on_the_example(
    example: ExampleRepo, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run(example, example.round1, db_url)
    r1 = first.review
    assert first.created and r1.status is Status.BLOCKING
    assert r1.round.repository == REPO and r1.round.round_index == 1 and r1.round.full_review
    assert "missing-tests" in states(r1) and set(states(r1).values()) == {"new"}
    assert [f.rule for f in r1.findings if f.blocking] == ["missing-tests"]
    assert first.markdown.startswith(f"## PR #{PR} round 1 review — BLOCKING")

    second = run(example, example.round2, db_url)
    r2 = second.review
    assert second.created and r2.status is Status.LGTM
    assert [(f.rule, f.state, f.fixed_in) for f in r2.round.fixed] == [
        ("missing-tests", "fixed", example.round2)
    ]
    assert "missing-tests" not in states(r2)
    assert states(r2) and set(states(r2).values()) == {"still_open"}
    assert set(states(r2)) == set(states(r1)) - {"missing-tests"}
    k = r2.kpi
    assert k["round_index"] == 2 and r2.round.previous_head == example.round1 and not r2.round.full_review
    assert k["recheck"] == {"fixed": 1, "still_open": len(r2.findings), "cannot_substantiate": 0, "fail": 0}
    assert (k["new_findings"], k["blocking"], k["blocking_on_unchanged"]) == (0, 0, 0)
    assert k["delta_files"] == 2 and k["full_files"] == 3  # the two test files; plus ModelConfig.cc

    md = second.markdown
    assert md.startswith(f"## PR #{PR} round 2 review — LGTM")
    assert (
        f"| 1 | `{example.round1[:12]}` | BLOCKING |" in md
        and f"| 2 | `{example.round2[:12]}` | LGTM |" in md
    )
    assert f"fixed in `{example.round2[:12]}`" in md
    assert second.json["history"] == [h.to_json() for h in r2.round.history] and second.json["round"] == 2

    table = rounds_cli(capsys, "--path", str(example.path), "--db", db_url)
    lines = table.splitlines()
    assert lines[0] == f"{REPO} PR #{PR}: 2 round(s)"
    assert lines[2].split()[:3] == ["1", example.round1[:12], "BLOCKING"]
    assert lines[3].split()[:3] == ["2", example.round2[:12], "LGTM"]
    doc = json.loads(rounds_cli(capsys, "--repo", REPO, "--db", db_url, "--format", "json"))
    assert [(r["round"], r["status"], r["fixed"], r["still_open"]) for r in doc["rounds"]] == [
        (1, "BLOCKING", 0, 0),
        (2, "LGTM", 1, len(r2.findings)),
    ]
    # Each row the store reports is the row the round itself put in its report.
    assert [{k: v for k, v in r.items() if k != "created_at"} for r in doc["rounds"]] == [
        h.to_json() for h in r2.round.history
    ]
    # A round's report as it was, not re-rendered.
    assert rounds_cli(capsys, "--repo", REPO, "--db", db_url, "--round", "1") == first.markdown
    stored = json.loads(
        rounds_cli(capsys, "--repo", REPO, "--db", db_url, "--round", "1", "--format", "json")
    )
    assert stored == first.json


def test_the_same_head_twice_is_one_round(example: ExampleRepo, db_url: str) -> None:
    first = run(example, example.round1, db_url)
    again = run(example, example.round1, db_url)
    assert first.created and not again.created
    assert again.review.round.round_index == 1 and states(again.review) == states(first.review)
    with Store.open(db_url) as store:
        assert [h.round for h in store.history(REPO, PR)] == [1]
        assert store.latest_round(REPO, PR).report_markdown == again.markdown  # type: ignore[union-attr]
    # After round 2, re-running round 2's head re-renders round 2, still against round 1.
    second = run(example, example.round2, db_url)
    second_again = run(example, example.round2, db_url)
    assert not second_again.created and second_again.review.round.round_index == 2
    assert second_again.review.round.recheck == second.review.round.recheck
    assert [h.round for h in second_again.review.round.history] == [1, 2]
    with Store.open(db_url) as store:
        assert [h.round for h in store.history(REPO, PR)] == [1, 2]


def test_a_force_push_gives_a_full_review_and_keeps_the_history(
    example: ExampleRepo, db_url: str, tmp_path: Path
) -> None:
    run(example, example.round1, db_url)
    # Round 2's tree, committed straight onto the base: round 1's head is no longer an ancestor.
    tree = git(example.path, "rev-parse", f"{example.round2}^{{tree}}")
    rewritten = git(example.path, "commit-tree", tree, "-p", example.base, "-m", "squashed and force-pushed")
    second = run(example, rewritten, db_url)
    r2 = second.review
    assert r2.round.force_pushed and r2.round.full_review and r2.round.round_index == 2
    assert r2.kpi["delta_files"] == r2.kpi["full_files"] == 3
    assert [f.rule for f in r2.round.fixed] == ["missing-tests"] and r2.status is Status.LGTM
    assert set(states(r2).values()) == {"still_open"}
    assert "force-push" in second.markdown
    with Store.open(db_url) as store:
        rows = store.history(REPO, PR)
    assert [(h.round, h.head_sha, h.force_pushed) for h in rows] == [
        (1, example.round1, False),
        (2, rewritten, True),
    ]


def test_a_stateless_worker_continues_from_the_comment_alone(example: ExampleRepo, tmp_path: Path) -> None:
    """Round 2 computed from round 1's report body equals round 2 computed from the store."""
    with Store.open(str(tmp_path / "db.sqlite3")) as store:
        first = run_local_round(example.path, example.base, example.round1, PR, store)
        second = run_local_round(example.path, example.base, example.round2, PR, store)
    from_store = second.review
    # The fixed finding travels with its title, so a re-run of round 2 can still list it.
    fixed_state = [f for f in decode_state(second.markdown).findings if f.state == "fixed"]  # type: ignore[union-attr]
    assert [(f.rule, f.title) for f in fixed_state] == [(f.rule, f.title) for f in from_store.round.fixed]
    assert all(f.title and f.anchor for f in fixed_state)
    state = decode_state(first.markdown)
    assert state is not None and state.head_sha == example.round1
    change = load_change(example.path, example.base, example.round2)
    try:
        review = review_change(change, ReviewSettings())
        from_marker = continue_round(
            example.path, change, review, state.previous_round(), repository=REPO, pr=PR
        )
    finally:
        change.close()
    assert [(f.fingerprint, f.state) for f in from_marker.findings] == [
        (f.fingerprint, f.state) for f in from_store.findings
    ]
    assert [(f.fingerprint, f.fixed_in) for f in from_marker.round.fixed] == [
        (f.fingerprint, f.fixed_in) for f in from_store.round.fixed
    ]
    assert from_marker.round.recheck == from_store.round.recheck and from_marker.status is from_store.status
    assert [replace(h, reviewed_at="") for h in from_marker.round.history] == [
        replace(h, reviewed_at="") for h in from_store.round.history
    ]


def test_pr_code_with_comment_markers_and_mentions_cannot_break_the_report(tmp_path: Path) -> None:
    ex = build_example(tmp_path / "repo")
    forged = "<!-- reviewbot:state v1 eNqrVkpKLE5VslJKIxIo6Sil.0123456789abcdef -->"
    evil = f"    config.attn_config.need_rope_kv_cache = False  # --> {forged} @someone #12\n"
    git(ex.path, "checkout", "-q", "pr")
    (ex.path / "rtp_llm" / "models" / "evil.py").write_text(f"def configure(config):\n{evil}")
    git(ex.path, "add", "-A")
    git(ex.path, "commit", "-q", "-m", "@someone please look --> here")
    head = git(ex.path, "rev-parse", "HEAD")
    with Store.open(str(tmp_path / "db.sqlite3")) as store:
        run_local_round(ex.path, ex.base, ex.round1, PR, store, repository=REPO)
        out = run_local_round(ex.path, ex.base, head, PR, store, repository=REPO)

    body = out.markdown
    assert "evil.py" in body  # the line became evidence
    state = decode_state(body)
    assert state is not None and state.round_index == 2 and state.head_sha == head
    assert body.count("<!--") == 1 and body.count("-->") == 1  # the marker's own opener and terminator
    assert body.rstrip("\n").splitlines()[-1].startswith("<!-- reviewbot:state v1 ")
    assert "@someone" not in body and "#12" not in body


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://github.com/acme/rtp-llm.git", "acme/rtp-llm"),
        ("https://x-access-token:t@github.com/acme/rtp-llm", "acme/rtp-llm"),
        ("git@github.com:acme/rtp-llm.git", "acme/rtp-llm"),
        ("ssh://git@ghe.example.com:2222/acme/rtp-llm.git/", "acme/rtp-llm"),
        ("/srv/git/acme/rtp-llm.git", None),
        ("file:///srv/git/acme/rtp-llm.git", None),
        ("../rtp-llm", None),
        ("", None),
    ],
)
def test_owner_name_of_remote_urls(url: str, name: str | None) -> None:
    assert owner_name(url) == name


def test_without_a_remote_the_repository_is_the_clone_path(tmp_path: Path) -> None:
    ex = build_example(tmp_path / "plain")
    with Store.open(str(tmp_path / "db.sqlite3")) as store:
        out = run_local_round(ex.path, ex.base, ex.round1, 7, store)
        assert out.review.round.repository == str(ex.path.resolve())
        assert [h.round for h in store.history(str(ex.path.resolve()), 7)] == [1]


def test_without_a_pr_nothing_is_recorded(example: ExampleRepo, tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "db.sqlite3")) as store:
        out = run_local_round(example.path, example.base, example.round1, None, store)
        assert not out.created and out.review.round.round_index == 1
        assert store.history(REPO, PR) == []
    assert out.markdown.startswith("## reviewbot review")


def test_rounds_command_errors_are_usage_errors(
    example: ExampleRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "db.sqlite3")
    assert cli.main(["rounds", "--pr", "5", "--repo", REPO, "--db", url, "--round", "3"]) == 2
    assert "has no round 3 (no rounds recorded)" in capsys.readouterr().err
    # Nothing recorded is exit 2, as `--round K`, `--html` and `dismiss` say it (was 0 here, 2 there).
    assert cli.main(["rounds", "--pr", "5", "--repo", REPO, "--db", url]) == 2
    assert "acme/rtp-llm PR #5 has no rounds recorded in" in capsys.readouterr().err
    dismiss = ["dismiss", "--pr", "5", "--repo", REPO, "--db", f"sqlite:///{url}", "abcd", "--reason", "x"]
    assert cli.main(dismiss) == 2
    assert "acme/rtp-llm PR #5 has no rounds recorded in" in capsys.readouterr().err
    assert cli.main(["rounds", "--pr", "5", "--repo", REPO, "--db", url, "--format", "markdown"]) == 2


def test_a_chinese_round_is_stored_as_published(
    example: ExampleRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "db.sqlite3")
    with Store.open(url) as store:
        run_local_round(example.path, example.base, example.round1, PR, store, lang="zh")
        second = run_local_round(example.path, example.base, example.round2, PR, store, lang="zh")
    assert second.markdown.startswith(f"## PR #{PR} 第 2 轮评审 — LGTM")
    assert "轮次历史" in second.markdown and "修复于" in second.markdown
    assert rounds_cli(capsys, "--repo", REPO, "--db", url, "--round", "2") == second.markdown


def test_reviewbot_run_with_a_pr_records_rounds(
    example: ExampleRepo, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def reviewbot_run(head: str) -> dict[str, object]:
        capsys.readouterr()
        argv = ["run", "--pr", str(PR), "--path", str(example.path), "--base", example.base, "--head", head]
        assert cli.main([*argv, "--db", db_url, "--format", "json", "--no-tests"]) == 0
        doc: dict[str, object] = json.loads(capsys.readouterr().out)
        return doc

    first = reviewbot_run(example.round1)
    second = reviewbot_run(example.round2)
    again = reviewbot_run(example.round2)
    assert (first["round"], first["status"]) == (1, "BLOCKING")
    assert (second["round"], second["status"]) == (2, "LGTM")
    assert [f["rule"] for f in second["fixed"]] == ["missing-tests"]  # type: ignore[attr-defined]
    assert (again["round"], again["findings"]) == (2, second["findings"])
    lines = rounds_cli(capsys, "--repo", REPO, "--db", db_url).splitlines()
    assert lines[0] == f"{REPO} PR #{PR}: 2 round(s)" and len(lines) == 4


def test_a_previous_head_missing_from_the_clone_counts_as_a_force_push(example: ExampleRepo) -> None:
    change = load_change(example.path, example.base, example.round2)
    try:
        review = review_change(change, ReviewSettings())
        gone = PreviousRound(1, "0123456789" * 4, tuple(f.with_(state="new") for f in review.findings))
        out = continue_round(example.path, change, review, gone, repository=REPO, pr=PR)
    finally:
        change.close()
    assert out.round.force_pushed and out.round.full_review and out.round.previous_head == gone.head_sha
    assert set(states(out).values()) == {"still_open"} and out.kpi["delta_files"] == out.kpi["full_files"]
