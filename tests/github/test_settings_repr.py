from __future__ import annotations

from reviewbot.github.settings import GitHubSettings


def test_repr_hides_token_and_database_password() -> None:
    text = repr(GitHubSettings(token="ghp_secret", db_url="postgresql://bot:hunter2@127.0.0.1/rb"))
    assert "ghp_secret" not in text and "hunter2" not in text
    assert "postgresql://bot:***@127.0.0.1/rb" in text
