"""`reviewbot serve` and `reviewbot worker` as commands: a one-machine install, and refusals."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from reviewbot.service.runtime import Runtime
from reviewbot.settings import Settings
from tests.service.e2e import BOT, PR, REPO, seeded_fake, worker_env
from tests.service.helpers import deliver, pull_request_event, wait_for

NOWHERE = "http://127.0.0.1:9/api/v3"  # never contacted: these commands stop before any request


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reviewbot.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_with_worker_reviews_a_pull_request_in_one_process(settings: Settings, tmp_path: Path) -> None:
    with seeded_fake(tmp_path) as (fake, remote, token):
        env = worker_env(settings, fake.api_url, token, tmp_path)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        log = tmp_path / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "reviewbot.cli", "-v", "serve", "--port", str(port), "--with-worker"],
                env=env,
                cwd=tmp_path,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

        def up() -> bool:
            assert proc.poll() is None, log.read_text()
            try:
                return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        try:
            wait_for(up, timeout=30, what="reviewbot serve to answer")
            r = deliver(url, "pull_request", pull_request_event("opened", REPO, PR, remote.round1))
            assert r.status_code == 202, r.text
            rt = Runtime.open(settings)
            try:

                def finished() -> bool:
                    jobs = rt.book.list(repository=REPO, pr=PR)
                    return bool(jobs) and jobs[0].state == "done"

                wait_for(finished, timeout=40, what="the round to finish")
            finally:
                rt.close()
            assert len([c for c in fake.comments(REPO, PR) if c.user == BOT]) == 1
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        text = log.read_text()
        # uvicorn shuts down cleanly on SIGTERM, then re-raises the signal so the caller sees it.
        assert code in (0, -signal.SIGTERM), text
        assert "Application shutdown complete" in text and "All workers have stopped" in text
        assert "reviewbot serve: http://127.0.0.1" in text and "with 1 worker thread(s)" in text
        assert token not in text and settings.require_secret().decode() not in text


def test_serve_refuses_to_start_without_a_webhook_secret(settings: Settings, tmp_path: Path) -> None:
    env = worker_env(settings, NOWHERE, "x", tmp_path)
    del env["REVIEWBOT_WEBHOOK_SECRET"]
    done = _run(["serve", "--port", str(_free_port())], env, tmp_path)
    assert done.returncode == 2
    assert "REVIEWBOT_WEBHOOK_SECRET" in done.stderr


def test_worker_refuses_to_start_without_credentials(settings: Settings, tmp_path: Path) -> None:
    env = worker_env(settings, NOWHERE, "x", tmp_path)
    del env["GITHUB_TOKEN"]
    done = _run(["worker"], env, tmp_path)
    assert done.returncode == 2
    assert "GITHUB_TOKEN" in done.stderr and "REVIEWBOT_APP_ID" in done.stderr
    assert _run(["worker", "--workers", "0"], env, tmp_path).returncode == 2


def test_service_settings_hide_the_config_file_and_state_from_sandboxes(tmp_path: Path) -> None:
    import argparse

    from reviewbot.commands._service import service_settings
    from reviewbot.execution.sandbox import hidden_paths

    state = tmp_path / "elsewhere-state"
    state.mkdir()
    config = tmp_path / "reviewbot.yaml"
    config.write_text(f"state_dir: {state}\nwebhook_secret: s3cret\n")
    assert config not in hidden_paths() and state not in hidden_paths()
    service_settings(argparse.Namespace(workers=1, config=str(config)), secret=True, credentials=False)
    hidden = hidden_paths()
    assert config in hidden and state in hidden
