"""Dry run (exact bodies, no writes), the API-call KPI, and the `reviewbot run --pr` command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reviewbot import cli
from reviewbot.github import run_pr_round
from reviewbot.github.dryrun import plan_text
from tests.github.conftest import PR, REPO, Seeded, bot_comments, settings
from tests.gitrepo import Repo


def _untimed(body: str) -> str:
    """A report without its stage timings (the only part two runs of one head may differ in)."""
    return re.sub(r'"timings_ms": \{[^}]*\}', '"timings_ms": {}', body)


def test_the_dry_run_shows_exactly_what_post_sends_and_writes_nothing(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.options.allow_pat_check_runs = True
    s = settings(seeded, tmp_path)
    dry = run_pr_round(s, REPO, PR, post=False)
    assert dry.status == "dry_run" and dry.plan is not None and dry.plan.review is not None
    assert seeded.fake.writes() == []
    printed = plan_text(dry.plan)
    assert dry.plan.summary_body.rstrip() in printed
    assert all(c.body.rstrip() in printed for c in dry.plan.review.comments)
    assert dry.plan.check_run.summary.rstrip() in printed

    posted = run_pr_round(s, REPO, PR, post=True)
    assert posted.status == "published"
    (comment,) = bot_comments(seeded, "reviewbot-dev")
    assert posted.plan is not None and comment.body == posted.plan.summary_body  # sent as planned
    assert _untimed(comment.body) == _untimed(dry.plan.summary_body)  # and planned as the dry run showed
    assert sorted(c.body for c in seeded.fake.review_comments(REPO, PR)) == sorted(
        c.body for c in dry.plan.review.comments
    )
    (review,) = seeded.fake.reviews(REPO, PR)
    assert review.body == dry.plan.review.body
    (run,) = seeded.fake.check_runs(REPO)
    sent = dry.plan.check_run.create_payload()
    assert (run.conclusion, run.output["title"], run.output["summary"], _untimed(run.output["text"])) == (
        sent["conclusion"],
        sent["output"]["title"],
        sent["output"]["summary"],
        _untimed(sent["output"]["text"]),
    )
    assert run.annotations == list(dry.plan.check_run.annotations)


def test_api_calls_for_a_one_file_pr_stay_within_eight(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.options.allow_pat_check_runs = True
    s = settings(seeded, tmp_path)
    changed = []
    for head in (seeded.remote.round1, seeded.remote.round2):
        seeded.fake.set_head(REPO, PR, head)
        seeded.fake.clear_log()
        outcome = run_pr_round(s, REPO, PR, post=True)
        assert outcome.review is not None
        made = len(seeded.fake.log)  # what the server saw
        assert outcome.api["api_calls"] == made <= 8
        assert outcome.review.kpi["api_calls"] == made  # the report's KPI, written before posting
        changed.append(outcome.review.kpi["files"]["changed"])
    assert changed == [1, 3]  # the one-file PR, then its second push


def test_api_calls_with_app_credentials_count_the_handshake_apart(seeded: Seeded, tmp_path: Path) -> None:
    outcome = run_pr_round(settings(seeded, tmp_path, app=True), REPO, PR, post=True)
    app_calls = [r for r in seeded.fake.log if r.operation.startswith("apps/")]
    assert outcome.api["api_auth_calls"] == len(app_calls) == 3
    assert outcome.api["api_calls"] == len(seeded.fake.log) - 3 <= 8


def test_a_personal_token_cannot_create_check_runs_and_the_round_says_so(
    seeded: Seeded, tmp_path: Path
) -> None:
    outcome = run_pr_round(settings(seeded, tmp_path), REPO, PR, post=True)
    assert outcome.status == "published" and outcome.published is not None
    assert any("GitHub App" in n for n in outcome.published.notes)
    assert seeded.fake.check_runs(REPO) == [] and len(seeded.fake.comments(REPO, PR)) == 1


def _env(monkeypatch: pytest.MonkeyPatch, seeded: Seeded, tmp_path: Path) -> None:
    for var in ("REVIEWBOT_APP_ID", "REVIEWBOT_PRIVATE_KEY_PATH", "REVIEWBOT_BOT_LOGIN", "GITHUB_ACTIONS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", seeded.token)
    monkeypatch.setenv("REVIEWBOT_API_URL", seeded.fake.api_url)
    monkeypatch.setenv("REVIEWBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REVIEWBOT_DB_URL", f"sqlite:///{tmp_path / 'rounds.sqlite3'}")


def test_the_command_dry_runs_by_default(
    seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _env(monkeypatch, seeded, tmp_path)
    assert cli.main(["run", "--pr", str(PR), "--repo", REPO, "--no-tests"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("=" * 20) and "DRY RUN" in out and f"PR #{PR} round 1 review — BLOCKING" in out
    assert "--- inline comment at rtp_llm/cpp/config/ModelConfig.cc:20 (RIGHT) ---" in out
    assert seeded.fake.writes() == []


def test_the_command_posts_and_fails_on_blocking(
    seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _env(monkeypatch, seeded, tmp_path)
    code = cli.main(
        ["run", "--pr", str(PR), "--repo", REPO, "--post", "--format", "json", "--fail-on-blocking"]
    )
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "published" and doc["review"]["status"] == "BLOCKING"
    assert doc["api"]["api_calls"] == len(seeded.fake.log)
    assert doc["published"]["comment_url"].endswith(f"#issuecomment-{seeded.fake.comments(REPO, PR)[0].id}")


def test_the_command_reads_the_repository_from_the_checkout(
    seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _env(monkeypatch, seeded, tmp_path)
    checkout = Repo(tmp_path / "checkout")
    checkout.git("remote", "add", "origin", f"git@github.com:{REPO}.git")
    monkeypatch.chdir(checkout.path)
    assert cli.main(["run", "--pr", str(PR), "--no-tests", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["repository"] == REPO


def test_the_command_without_credentials_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for var in ("GITHUB_TOKEN", "REVIEWBOT_APP_ID", "REVIEWBOT_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(var, raising=False)
    assert cli.main(["run", "--pr", "5", "--repo", "acme/x", "--cache-dir", str(tmp_path)]) == 2
    assert "GITHUB_TOKEN" in capsys.readouterr().err


def test_the_command_reports_a_rate_limited_round_as_incomplete(
    seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _env(monkeypatch, seeded, tmp_path)
    seeded.fake.exhaust_rate_limit(seeded.token, reset_in=3600)
    assert cli.main(["run", "--pr", str(PR), "--repo", REPO, "--post"]) == 3
    err = capsys.readouterr().err
    assert "INCOMPLETE" in err and "rate limit" in err and seeded.fake.writes() == []
