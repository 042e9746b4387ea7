"""Shared fixtures: a running fake GitHub and the bundled example served as the PR's remote."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from reviewbot.github.auth import forget_app_cache
from reviewbot.github.settings import GitHubSettings
from tests.fakegithub import ExampleRemote, FakeGitHub, example_remote
from tests.fakegithub.keys import app_keypair

REPO = "acme/rtp-llm"
PR = 1361
AUTHOR = "junna2016"
APP_ID = 4242
APP_SLUG = "reviewbot"


@dataclass
class Seeded:
    fake: FakeGitHub
    remote: ExampleRemote
    token: str  # a personal access token of the human developer `reviewbot-dev`
    private_key: str
    installation_id: int
    author_token: str  # the PR author's own token (to post as someone else)


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as gh:
        yield gh


@pytest.fixture
def seeded(fake: FakeGitHub, tmp_path: Path) -> Seeded:
    """acme/rtp-llm with PR 1361 at the example's round 1, an App installed on it, two users."""
    remote = example_remote(tmp_path / "remote")
    token = fake.add_user("reviewbot-dev")
    author_token = fake.add_user(AUTHOR)
    private, public = app_keypair()
    fake.add_repo(REPO, remote.bare)
    fake.add_app(APP_ID, APP_SLUG, public, owner="acme")
    inst = fake.add_installation(APP_ID, "acme", [REPO])
    fake.add_pull(
        REPO,
        PR,
        user=AUTHOR,
        head_sha=remote.round1,
        base_sha=remote.base,
        title="feat: skip the fused rope/KV-cache kernel for embedding models",
    )
    return Seeded(fake, remote, token, private, inst, author_token)


@pytest.fixture(autouse=True)
def _fresh_app_cache() -> Iterator[None]:
    """Ports are reused between tests: an App token cached for one fake must not reach the next."""
    forget_app_cache()
    yield
    forget_app_cache()


FIXED_NOW = datetime(2026, 9, 1, 4, 0, tzinfo=timezone.utc)


def settings(seeded: Seeded, tmp_path: Path, *, app: bool = False, **overrides: Any) -> GitHubSettings:
    """Settings against the fake: fast retries, no throttle, a private cache and store, a fixed clock."""
    values: dict[str, Any] = dict(
        api_url=seeded.fake.api_url,
        cache_dir=tmp_path / "cache",
        db_url=f"sqlite:///{tmp_path / 'rounds.sqlite3'}",
        seconds_between_requests=0.0,
        seconds_between_writes=0.0,
        backoff_base=0.01,
        backoff_max=0.05,
        timeout=5.0,
        run_tests=False,
        now=lambda: FIXED_NOW,
    )
    if app:
        values.update(app_id=APP_ID, private_key=seeded.private_key)
    else:
        values.update(token=seeded.token)
    values.update(overrides)
    return GitHubSettings(**values)


def bot_comments(seeded: Seeded, login: str) -> list[Any]:
    return [c for c in seeded.fake.comments(REPO, PR) if c.user == login]
