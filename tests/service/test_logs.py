"""The App's log lines, read from the real processes: `reviewbot serve` (uvicorn on loopback) and
`reviewbot worker` against the fake GitHub, in text (the default) and `--log-format json`: one line
per delivery (accepted, ignored, refused 401) and one per job outcome (state, seconds, findings,
API calls)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from reviewbot.service.runtime import Runtime
from reviewbot.settings import Settings
from tests.service.e2e import PR, REPO, seeded_fake, worker_env
from tests.service.helpers import ServerThread, deliver, pull_request_event, wait_for
from tests.service.test_cli import _free_port


def _start(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "reviewbot.cli", *args],
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _run_the_app(settings: Settings, tmp_path: Path, fmt: str) -> tuple[str, str, dict[str, Any]]:
    """serve and worker in `fmt` (no -v: what an installer sees); three deliveries; the round.
    Returns the server's and the worker's output and what the store says of the job."""
    with seeded_fake(tmp_path) as (fake, remote, token):
        env = worker_env(settings, fake.api_url, token, tmp_path)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        serve_log, worker_log = tmp_path / "serve.log", tmp_path / "worker.log"
        extra = [] if fmt == "text" else ["--log-format", fmt]
        serve = _start(["serve", "--port", str(port), *extra], env, tmp_path, serve_log)
        worker = _start(["worker", *extra], env, tmp_path, worker_log)
        try:

            def up() -> bool:
                assert serve.poll() is None, serve_log.read_text()
                try:
                    return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
                except httpx.HTTPError:
                    return False

            wait_for(up, timeout=30, what="reviewbot serve to answer")
            opened = pull_request_event("opened", REPO, PR, remote.round1)
            assert deliver(url, "pull_request", opened, delivery="d-accepted").status_code == 202
            labeled = pull_request_event("labeled", REPO, PR, remote.round1)
            assert deliver(url, "pull_request", labeled, delivery="d-ignored").status_code == 200
            push = {"ref": "refs/heads/main", "repository": {"full_name": REPO}}
            assert deliver(url, "push", push, delivery="d-push").status_code == 200
            refused = deliver(url, "pull_request", opened, delivery="d-bad", secret="not the secret")
            assert refused.status_code == 401
            rt = Runtime.open(settings)
            try:

                def finished() -> Any:
                    jobs = rt.book.list(repository=REPO, pr=PR)
                    return jobs if jobs and jobs[0].state not in ("queued", "running") else None

                (job,) = wait_for(finished, timeout=60, what="the round to finish")
                assert job.state == "done", (job.reason, worker_log.read_text()[-3000:])
                record = rt.store.get_round(REPO, PR, job.round_index)
                assert record is not None
                facts = {"job": job.id, "findings": len(record.findings), "reason": job.reason}
            finally:
                rt.close()
        finally:
            _stop(worker)
            _stop(serve)
        served, worked = serve_log.read_text(), worker_log.read_text()
        for text in (served, worked):
            assert token not in text and settings.require_secret().decode() not in text
        return served, worked, facts


def test_json_lines_one_per_delivery_and_one_per_job_outcome(settings: Settings, tmp_path: Path) -> None:
    served, worked, facts = _run_the_app(settings, tmp_path, "json")
    # Every line of both processes is a JSON object: uvicorn's and huey's as well as the App's.
    server_lines = [json.loads(line) for line in served.splitlines() if line.strip()]
    worker_lines = [json.loads(line) for line in worked.splitlines() if line.strip()]
    assert all({"time", "level", "logger", "message"} <= set(x) for x in server_lines + worker_lines)
    assert not any(
        "color_message" in x or "\\u001b" in json.dumps(x) for x in server_lines
    )  # uvicorn's ANSI copy
    deliveries = {x["delivery"]: x for x in server_lines if x.get("kind") == "delivery"}
    assert len([x for x in server_lines if x.get("kind") == "delivery"]) == len(deliveries) == 4

    accepted = deliveries["d-accepted"]
    assert accepted["level"] == "INFO" and accepted["logger"] == "reviewbot.service.app"
    assert {k: accepted[k] for k in ("event", "action", "repo", "pr", "result", "outcome", "status")} == {
        "event": "pull_request",
        "action": "opened",
        "repo": REPO,
        "pr": PR,
        "result": "accepted",
        "outcome": "queued",
        "status": 202,
    }
    assert accepted["jobs"] == [facts["job"]] and f"job {facts['job']} queued" in accepted["reason"]

    ignored = deliveries["d-ignored"]
    assert (ignored["result"], ignored["status"], ignored["action"], ignored["pr"]) == (
        "ignored",
        200,
        "labeled",
        PR,
    )
    assert "'labeled' does not start a round" in ignored["reason"]
    push = deliveries["d-push"]
    assert (push["event"], push["repo"], push["result"], push["status"]) == ("push", REPO, "ignored", 200)
    assert "not handled" in push["reason"]

    bad = deliveries["d-bad"]
    assert (bad["level"], bad["result"], bad["status"], bad["outcome"]) == (
        "INFO",
        "refused",
        401,
        "bad_signature",
    )
    assert (
        bad["event"] == "pull_request" and bad["repo"] is None and bad["pr"] is None
    )  # the body is not read
    assert "REVIEWBOT_WEBHOOK_SECRET" in bad["reason"]

    (outcome,) = [x for x in worker_lines if x.get("kind") == "job"]
    assert outcome["level"] == "INFO" and outcome["logger"] == "reviewbot.service.worker"
    assert (outcome["job"], outcome["repo"], outcome["pr"], outcome["state"]) == (
        facts["job"],
        REPO,
        PR,
        "done",
    )
    assert outcome["trigger"] == "pull_request.opened" and outcome["attempt"] == 1
    assert 0 < outcome["seconds"] < 60
    assert outcome["findings"] == facts["findings"] == sum(outcome["severities"].values())
    assert set(outcome["severities"]) == {"P0", "P1", "P2", "P3"}
    assert outcome["api_calls"] == sum(outcome["api"].values()) and outcome["api"]["write"] >= 1
    assert outcome["reason"] == facts["reason"]
    # No -v: huey's per-task lines are left out, the worker's start line is in.
    assert any(x["message"].startswith("reviewbot worker: 1 thread(s)") for x in worker_lines)
    assert not any(x["logger"].startswith("huey") and "Executing" in x["message"] for x in worker_lines)


def test_text_lines_say_the_same_by_default(settings: Settings, tmp_path: Path) -> None:
    served, worked, facts = _run_the_app(settings, tmp_path, "text")
    head = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO reviewbot\.service\.app: "
    expected = {
        "d-accepted": rf"{head}delivery d-accepted: pull_request\.opened {REPO}#{PR}: accepted \(202 queued\): "
        rf"job {facts['job']} queued for {REPO}#{PR}$",
        "d-ignored": rf"{head}delivery d-ignored: pull_request\.labeled {REPO}#{PR}: ignored \(200 ignored\): "
        r"action 'labeled' does not start a round$",
        "d-push": rf"{head}delivery d-push: push {REPO}: ignored \(200 ignored\): event 'push' is not handled",
        "d-bad": rf"{head}delivery d-bad: pull_request: refused \(401 bad_signature\): X-Hub-Signature-256 does "
        r"not match the body: is REVIEWBOT_WEBHOOK_SECRET the App's webhook secret\?$",
    }
    for delivery, pattern in expected.items():
        lines = [line for line in served.splitlines() if f"delivery {delivery}:" in line]
        assert len(lines) == 1 and re.match(pattern, lines[0]), (pattern, lines)
    (line,) = [x for x in worked.splitlines() if re.search(r"INFO reviewbot\.service\.worker: job \d+ ", x)]
    match = re.search(
        rf"job {facts['job']} {REPO}#{PR}: done in (\d+\.\d)s, (\d+) finding\(s\) \((P\d \d+(, )?)+\), "
        r"(\d+) API call\(s\) \(read \d+, write \d+.*\): (.*)$",
        line,
    )
    assert match, line
    assert int(match.group(2)) == facts["findings"] and match.group(6) == facts["reason"]
    assert "reviewbot serve: http://127.0.0.1" in served and "reviewbot worker: 1 thread(s)" in worked


@pytest.mark.parametrize("header", ["", "sha256=" + "0" * 64])
def test_a_refusal_logs_no_header_that_is_not_shaped_like_githubs(
    settings: Settings, runtime: Runtime, header: str, caplog: pytest.LogCaptureFixture
) -> None:
    from reviewbot.service.app import create_app

    headers = {"X-GitHub-Event": "pull_request\tINFO forged", "X-GitHub-Delivery": "x" * 65}
    if header:
        headers["X-Hub-Signature-256"] = header
    with (
        caplog.at_level("INFO", logger="reviewbot.service.app"),
        ServerThread(create_app(settings, runtime.book, runtime.queue)) as server,
    ):
        assert httpx.post(f"{server.url}/webhook", content=b"{}", headers=headers).status_code == 401
    (record,) = [r for r in caplog.records if r.getMessage().startswith("delivery ")]
    assert record.getMessage().startswith("delivery -: ?: refused (401 ")
    assert ("no_signature" if not header else "bad_signature") in record.getMessage()
    assert "forged" not in record.getMessage() and "x" * 65 not in record.getMessage()
