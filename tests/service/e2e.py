"""The whole App on loopback: fake GitHub, the webhook server in a thread, workers as processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from reviewbot.service.app import create_app
from reviewbot.service.jobs import Job
from reviewbot.service.runtime import Runtime
from reviewbot.settings import Settings
from reviewbot.store.store import RoundRecord
from tests.fakegithub import ExampleRemote, FakeGitHub, example_remote, push
from tests.fakegithub.keys import app_keypair
from tests.gitrepo import git
from tests.service.helpers import ServerThread, deliver, pull_request_event, wait_for

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/rtp-llm"
PR = 1361
AUTHOR = "junna2016"
BOT = "reviewbot-dev"  # the user of the personal token
APP_ID = 4242
APP_BOT = "reviewbot[bot]"  # the App's login when it authenticates with its private key


def worker_env(settings: Settings, api_url: str, token: str | None, home: Path) -> dict[str, str]:
    """The environment a deployed worker would get, pointing at the fake and the test's state.

    `token` None: authenticate as the GitHub App (settings.app_id, settings.private_key_path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        REVIEWBOT_API_URL=api_url,
        REVIEWBOT_WEBHOOK_SECRET=settings.require_secret().decode(),
        REVIEWBOT_DB_URL=str(settings.db_url),
        REVIEWBOT_QUEUE_NAME=settings.queue_name,
        REVIEWBOT_STATE_DIR=str(settings.state_dir),
        REVIEWBOT_CACHE_DIR=str(settings.cache_dir),
        REVIEWBOT_JOB_LEASE_SECONDS=str(settings.job_lease_seconds),
        REVIEWBOT_RETRY_BASE_SECONDS=str(settings.retry_base_seconds),
        REVIEWBOT_RETRY_MAX_SECONDS=str(settings.retry_max_seconds),
        REVIEWBOT_LOCK_RETRY_SECONDS=str(settings.lock_retry_seconds),
        REVIEWBOT_REQUEST_INTERVAL="0",
        REVIEWBOT_WRITE_INTERVAL="0",
    )
    if settings.queue_url:
        env["REVIEWBOT_QUEUE_URL"] = settings.queue_url
    env["REVIEWBOT_GITHUB_TIMEOUT_SECONDS"] = str(settings.github_timeout_seconds)
    env["REVIEWBOT_GITHUB_REQUEST_LIMIT_SECONDS"] = str(settings.github_request_limit_seconds)
    if token is not None:
        env["GITHUB_TOKEN"] = token
    else:
        env["REVIEWBOT_APP_ID"] = str(settings.app_id)
        env["REVIEWBOT_PRIVATE_KEY_PATH"] = str(settings.private_key_path)
    return env


@dataclass
class Stack:
    """A running App: fake GitHub with the example PR, the server, and worker processes."""

    settings: Settings
    fake: FakeGitHub
    remote: ExampleRemote
    runtime: Runtime
    server: ServerThread
    token: str | None  # None: the workers authenticate as the App
    home: Path
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(self, threads: int = 1) -> subprocess.Popen[bytes]:
        n = len(self.workers)
        log = (self.home / f"worker-{n}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "reviewbot.cli", "-v", "worker", "--workers", str(threads)],
            env=worker_env(self.settings, self.fake.api_url, self.token, self.home),
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.home,
        )
        log.close()
        self.workers.append(proc)
        wait_for(
            lambda: "reviewbot worker:" in self.worker_log(n) or proc.poll() is not None,
            timeout=30,
            what="the worker to start",
        )
        assert proc.poll() is None, self.worker_log(n)
        return proc

    def worker_log(self, n: int) -> str:
        return (self.home / f"worker-{n}.log").read_text(errors="replace")

    def push(self, sha: str, delivery: str | None = None, action: str = "synchronize") -> str:
        """Move the PR's head (as a push does) and deliver the webhook GitHub would send."""
        self.fake.set_head(REPO, PR, sha)
        return self.announce(sha, delivery, action)

    def announce(
        self,
        sha: str,
        delivery: str | None = None,
        action: str = "synchronize",
        client: httpx.Client | None = None,
    ) -> str:
        """Deliver the webhook of a push to `sha` (the fake's head is moved by the caller)."""
        event = pull_request_event(action, REPO, PR, sha)
        r = deliver(self.server.url, "pull_request", event, delivery=delivery, client=client)
        assert r.status_code in (200, 202), r.text
        return str(r.json()["outcome"])

    def rapid_pushes(self, heads: list[str]) -> float:
        """A push to each head in turn, webhooks back to back as GitHub sends them after a burst of
        pushes; returns the seconds the burst took. The PR's head moves with each (the last one also
        moves refs/pull/N/head; workers fetch the exact commit of an earlier head)."""
        started = time.monotonic()
        with httpx.Client(timeout=10) as client:
            for sha in heads:
                with self.fake.world.lock:
                    self.fake.world.pulls[(REPO, PR)].head_sha = sha
                assert self.announce(sha, client=client) == "queued"
        elapsed = time.monotonic() - started
        self.fake.set_head(REPO, PR, heads[-1])
        return elapsed

    def jobs(self) -> list[Job]:
        return self.runtime.book.list(repository=REPO, pr=PR)

    def settled(self) -> list[Job] | None:
        """All jobs of the PR, once none is queued or running."""
        jobs = self.jobs()
        return jobs if jobs and all(j.state not in ("queued", "running") for j in jobs) else None

    def wait_settled(self, timeout: float = 40) -> list[Job]:
        try:
            return wait_for(self.settled, timeout=timeout, what="the PR's jobs to finish", interval=0.1)
        except AssertionError:
            logs = "\n".join(
                f"--- worker {i}\n{self.worker_log(i)[-4000:]}" for i in range(len(self.workers))
            )
            raise AssertionError(f"jobs did not finish: {self.jobs()}\n{logs}") from None

    def rounds(self) -> list[RoundRecord]:
        history = self.runtime.store.history(REPO, PR)
        out = [self.runtime.store.get_round(REPO, PR, h.round) for h in history]
        return [r for r in out if r is not None]

    def bot_comments(self) -> list[Any]:
        bot = BOT if self.token is not None else APP_BOT
        return [c for c in self.fake.comments(REPO, PR) if c.user == bot]

    def commits_on_top(self, n: int) -> list[str]:
        """`n` more commits on the PR branch, pushed to the fake's remote; returns their shas."""
        path = self.remote.example.path
        git(path, "checkout", "-q", "--detach", self.remote.round2)
        shas = []
        for i in range(n):
            (path / "NOTES.txt").write_text(f"push {i}\n")
            git(path, "add", "NOTES.txt")
            git(path, "commit", "-q", "-m", f"push {i}")
            shas.append(git(path, "rev-parse", "HEAD"))
        push(path, self.remote.bare, shas[-1], "refs/heads/feature")
        return shas

    def stop_workers(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.workers:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def seeded_fake(tmp: Path) -> Iterator[tuple[FakeGitHub, ExampleRemote, str]]:
    """A fake GitHub with the example PR (#1361 at round 1); yields (fake, remote, the bot's token)."""
    with FakeGitHub() as fake:
        remote = example_remote(tmp / "remote")
        token = fake.add_user(BOT)
        fake.add_user(AUTHOR)
        fake.add_repo(REPO, remote.bare)
        fake.add_pull(REPO, PR, user=AUTHOR, head_sha=remote.round1, base_sha=remote.base)
        yield fake, remote, token


@contextmanager
def app_stack(settings: Settings, tmp: Path, *, as_app: bool = False) -> Iterator[Stack]:
    """The example PR on a fake GitHub, served by the App (server in a thread); no worker yet.

    `as_app`: workers authenticate as a GitHub App installed on the repository (JWT, then an
    installation token) instead of with a personal token."""
    home = tmp / "home"
    home.mkdir()
    with seeded_fake(tmp) as (fake, remote, token):
        if as_app:
            private, public = app_keypair()
            fake.add_app(APP_ID, "reviewbot", public, owner="acme")
            fake.add_installation(APP_ID, "acme", [REPO])
            key = home / "app.pem"
            key.write_text(private)
            key.chmod(0o600)
            settings = settings.with_(app_id=APP_ID, private_key_path=key, github_token=None)
        runtime = Runtime.open(settings)
        try:
            app = create_app(settings, runtime.book, runtime.queue)
            with ServerThread(app) as server:
                stack = Stack(settings, fake, remote, runtime, server, None if as_app else token, home)
                try:
                    yield stack
                finally:
                    stack.stop_workers()
        finally:
            runtime.close()
