"""A bad `.reviewbot.toml` on the GitHub path: the App says so (a note in the report) and the
check run is neutral, never silently ignored; `reviewbot run --pr` fails with exit 2 instead.
`reviewbot run --pr` reads the settings file named by $REVIEWBOT_CONFIG, as serve and worker do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot import cli
from reviewbot.github import GitHubSettings, run_pr_round
from reviewbot.model.change import SkipReason
from reviewbot.model.review import Status
from tests.config.helpers import ConfiguredPR, configured_pr
from tests.fakegithub import FakeGitHub

REPO = "acme/cfg"
PR = 7
BAD = '[review]\ndisabled = ["no-such-rule"]\n'


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as gh:
        gh.options.allow_pat_check_runs = True  # a check run without setting up an App
        yield gh


def _serve(fake: FakeGitHub, pr: ConfiguredPR) -> str:
    token = fake.add_user("reviewbot-dev")
    fake.add_user("author")
    fake.add_repo(REPO, pr.bare)
    fake.add_pull(REPO, PR, user="author", head_sha=pr.head, base_sha=pr.base)
    return token


def _settings(fake: FakeGitHub, token: str, tmp: Path, **overrides: object) -> GitHubSettings:
    return GitHubSettings(
        api_url=fake.api_url,
        token=token,
        cache_dir=tmp / "cache",
        db_url=f"sqlite:///{tmp / 'rounds.sqlite3'}",
        seconds_between_requests=0.0,
        seconds_between_writes=0.0,
        run_tests=False,
        **overrides,  # type: ignore[arg-type]
    )


def test_the_app_reviews_with_the_defaults_says_why_and_concludes_neutral(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    pr = configured_pr(tmp_path, BAD)
    token = _serve(fake, pr)
    outcome = run_pr_round(_settings(fake, token, tmp_path), REPO, PR, post=True)

    assert outcome.status == "published" and outcome.review is not None
    assert outcome.review.status is Status.INCOMPLETE
    (note,) = [n for n in outcome.review.notes if n.reason is SkipReason.BAD_CONFIG]
    assert "[review] disabled: unknown rule id(s) no-such-rule" in note.message
    (check,) = fake.check_runs(REPO)
    assert check.conclusion == "neutral"
    (comment,) = fake.comments(REPO, PR)
    assert "unknown rule id(s) no-such-rule" in comment.body  # visible to the maintainers


def test_the_app_honours_a_good_config(fake: FakeGitHub, tmp_path: Path) -> None:
    pr = configured_pr(tmp_path, '[review]\ndisabled = ["missing-tests"]\n')
    token = _serve(fake, pr)
    outcome = run_pr_round(_settings(fake, token, tmp_path), REPO, PR, post=False)
    assert outcome.review is not None
    assert not any(n.reason is SkipReason.BAD_CONFIG for n in outcome.review.notes)
    assert all(f.rule != "missing-tests" for f in outcome.review.findings)


def test_the_command_line_round_fails_on_a_bad_config(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr = configured_pr(tmp_path, "[revew]\n")
    token = _serve(fake, pr)
    _isolate(monkeypatch, tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("REVIEWBOT_API_URL", fake.api_url)
    assert cli.main(["run", "--pr", str(PR), "--repo", REPO, "--no-tests"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "reviewbot: .reviewbot.toml (base): unknown section(s) [revew]; allowed: [review], [tests], [cpp]"
    ]
    assert fake.writes() == []


def test_run_pr_reads_the_settings_file_named_by_reviewbot_config(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pr = configured_pr(tmp_path, '[review]\nchecklists = ["general"]\n')
    token = _serve(fake, pr)
    _isolate(monkeypatch, tmp_path)
    config = tmp_path / "reviewbot.toml"
    # Only the file names the API and the token: the round reaches the fake only if it is read.
    config.write_text(
        f'api_url = "{fake.api_url}"\ngithub_token = "{token}"\n'
        f'db_url = "sqlite:///{tmp_path / "r.sqlite3"}"\ncache_dir = "{tmp_path / "cache"}"\n'
        "request_interval = 0\nwrite_interval = 0\n"
    )
    monkeypatch.setenv("REVIEWBOT_CONFIG", str(config))
    assert cli.main(["run", "--pr", str(PR), "--repo", REPO, "--no-tests", "--format", "json"]) == 0
    assert '"status": "dry_run"' in capsys.readouterr().out
    # The environment wins over the file: a wrong API URL there is what the round uses.
    monkeypatch.setenv("REVIEWBOT_API_URL", "ftp://nowhere")
    assert cli.main(["run", "--pr", str(PR), "--repo", REPO, "--no-tests"]) == 2
    assert "REVIEWBOT_API_URL must start with http:// or https://" in capsys.readouterr().err


def _isolate(monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    for var in (
        "GITHUB_TOKEN",
        "GITHUB_ACTIONS",
        "REVIEWBOT_CONFIG",
        "REVIEWBOT_API_URL",
        "REVIEWBOT_APP_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp / "xdg-cache"))
