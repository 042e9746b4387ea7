from __future__ import annotations

from pathlib import Path

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
