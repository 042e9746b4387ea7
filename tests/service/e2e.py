"""The whole App on loopback: fake GitHub, the webhook server in a thread, workers as processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.service.app import create_app
from reviewbot.service.jobs import Job
from reviewbot.service.runtime import Runtime
from reviewbot.service.store import RoundRecord
from reviewbot.settings import Settings
from tests.fakegithub import ExampleRemote, FakeGitHub, example_remote, push
from tests.gitrepo import git
from tests.service.helpers import ServerThread, deliver, pull_request_event, wait_for

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/rtp-llm"
PR = 1361
AUTHOR = "junna2016"
BOT = "reviewbot-dev"


def worker_env(settings: Settings, fake: FakeGitHub, token: str, home: Path) -> dict[str, str]:
    """The environment a deployed worker would get, pointing at the fake and the test's state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        GITHUB_TOKEN=token,
        REVIEWBOT_API_URL=fake.api_url,
        REVIEWBOT_WEBHOOK_SECRET=str(settings.webhook_secret),
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
    return env


@dataclass
class Stack:
    """A running App: fake GitHub with the example PR, the server, and worker processes."""

    settings: Settings
    fake: FakeGitHub
    remote: ExampleRemote
    runtime: Runtime
    server: ServerThread
    token: str
    home: Path
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(self, threads: int = 1) -> subprocess.Popen[bytes]:
        n = len(self.workers)
        log = (self.home / f"worker-{n}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "reviewbot.cli", "-v", "worker", "--workers", str(threads)],
            env=worker_env(self.settings, self.fake, self.token, self.home),
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
        r = deliver(
            self.server.url, "pull_request", pull_request_event(action, REPO, PR, sha), delivery=delivery
        )
        assert r.status_code in (200, 202), r.text
        return str(r.json()["outcome"])

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
        out = [self.runtime.store.get_round(REPO, PR, h.round_index) for h in history]
        return [r for r in out if r is not None]

    def bot_comments(self) -> list[object]:
        return [c for c in self.fake.comments(REPO, PR) if c.user == BOT]

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
def app_stack(settings: Settings, tmp: Path) -> Iterator[Stack]:
    """The example PR (#1361 at round 1) on a fake GitHub, served by the App; no worker yet."""
    home = tmp / "home"
    home.mkdir()
    with FakeGitHub() as fake:
        remote = example_remote(tmp / "remote")
        token = fake.add_user(BOT)
        fake.add_user(AUTHOR)
        fake.add_repo(REPO, remote.bare)
        fake.add_pull(REPO, PR, user=AUTHOR, head_sha=remote.round1, base_sha=remote.base)
        runtime = Runtime.open(settings)
        try:
            app = create_app(settings, runtime.book, runtime.queue)
            with ServerThread(app) as server:
                stack = Stack(settings, fake, remote, runtime, server, token, home)
                try:
                    yield stack
                finally:
                    stack.stop_workers()
        finally:
            runtime.close()
