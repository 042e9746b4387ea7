from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.errors import UsageError
from reviewbot.github.settings import GitHubSettings
from reviewbot.settings import Settings


def test_repr_hides_token_and_database_password() -> None:
    text = repr(GitHubSettings(token="ghp_secret", db_url="postgresql://bot:hunter2@127.0.0.1/rb"))
    assert "ghp_secret" not in text and "hunter2" not in text
    assert "postgresql://bot:***@127.0.0.1/rb" in text


def test_built_from_the_one_settings_model(tmp_path: Path) -> None:
    settings = Settings(
        github_token="ghp_secret",
        bot_login="bot",
        state_dir=tmp_path,
        cache_dir=tmp_path / "c",
        request_interval=0.0,
        review_drafts=False,
    )
    gh = GitHubSettings.from_settings(settings, lang="zh", api_url=None)
    assert (gh.token, gh.bot_login, gh.cache_root, gh.lang) == ("ghp_secret", "bot", tmp_path / "c", "zh")
    assert gh.db_url == f"sqlite:///{tmp_path / 'reviewbot.sqlite3'}" and gh.seconds_between_requests == 0.0
    assert gh.seconds_between_writes == 1.0  # not set: GitHub's recommended pacing
    assert not gh.review_drafts and gh.repo_config_errors == "note"  # the App's policy


def test_a_command_line_round_reads_the_config_file_and_refuses_a_bad_repo_config(tmp_path: Path) -> None:
    config = tmp_path / "reviewbot.yaml"
    config.write_text("api_url: https://ghe.example.com/api/v3\nbot_login: from-file\n")
    gh = GitHubSettings.from_env({"REVIEWBOT_CONFIG": str(config), "GITHUB_TOKEN": "t"})
    assert (gh.api_url, gh.bot_login, gh.token) == ("https://ghe.example.com/api/v3", "from-file", "t")
    assert gh.review_drafts and gh.repo_config_errors == "raise"


def test_drafts_are_reviewed_as_the_settings_say_unless_a_person_asked(tmp_path: Path) -> None:
    import argparse

    from reviewbot.commands.github_run import settings_from_args

    # One default, the settings' (docs/github-app.md: drafts are skipped unless review_drafts).
    assert Settings().review_drafts is False
    assert GitHubSettings().review_drafts is False
    assert GitHubSettings.from_settings(Settings()).review_drafts is False
    assert GitHubSettings.from_settings(Settings(review_drafts=True)).review_drafts is True
    # `reviewbot run --pr N`: a person asked for this PR, so a draft is reviewed.
    args = argparse.Namespace(
        api_url=None, db=None, cache_dir=None, lang=None, no_tests=False, checklist=None
    )
    assert settings_from_args(args, Settings()).review_drafts is True
    assert GitHubSettings.from_env({"GITHUB_TOKEN": "t"}).review_drafts is True


def test_the_process_settings_are_derived_not_copied(tmp_path: Path) -> None:
    gh = GitHubSettings(token="t", timeout=5.0, seconds_between_writes=0.0, cache_dir=tmp_path, lang="zh")
    assert gh.process.token() == "t" and gh.process.github_timeout_seconds == 5.0
    assert (gh.timeout, gh.seconds_between_writes, gh.seconds_between_requests) == (5.0, 0.0, 0.25)
    assert gh.cache_root == tmp_path and gh.db_url == gh.process.database_url
    changed = gh.with_(lang="en", bot_login="bot", api_url=None)
    assert (changed.lang, changed.bot_login, changed.process.bot_login, changed.token) == (
        "en",
        "bot",
        "bot",
        "t",
    )
    assert gh.bot_login is None and gh.lang == "zh"  # the original is unchanged
    with pytest.raises(TypeError, match="unexpected option.*github_token"):
        GitHubSettings.from_settings(Settings(), github_token="t")  # the settings' name, not the GitHub one
    with pytest.raises(UsageError, match="^timeout "):
        GitHubSettings(timeout=0)
    with pytest.raises(UsageError, match="^max_attempts must be at least 1"):
        GitHubSettings(max_attempts=0)
