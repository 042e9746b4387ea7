"""Shared fixtures: a running fake GitHub and the bundled example served as the PR's remote."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

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
