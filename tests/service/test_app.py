"""The webhook server on loopback (uvicorn in a thread), without a worker: what gets queued."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from reviewbot.service.app import create_app
from reviewbot.service.job_records import DeliveryRecord
from reviewbot.service.runtime import Runtime
from reviewbot.service.signature import sign
from tests.service.helpers import (
    SECRET,
    ServerThread,
    check_run_event,
    comment_event,
    deliver,
    ping_event,
    pull_request_event,
)

REPO = "acme/rtp-llm"
HEAD = "a" * 40


@pytest.fixture
def server(runtime: Runtime) -> Iterator[ServerThread]:
    app = create_app(runtime.settings, runtime.book, runtime.queue)
    with ServerThread(app) as srv:
        yield srv


def nothing_queued(runtime: Runtime) -> None:
    assert runtime.book.list() == []
    assert runtime.queue.pending() == 0
    assert runtime.book.read_counters().get("deliveries") is None


def recorded(runtime: Runtime, delivery: str) -> DeliveryRecord:
    row = runtime.book.delivery(delivery)
    assert row is not None, f"delivery {delivery} was not recorded"
    return row


def alive(server: ServerThread) -> None:
    assert httpx.get(f"{server.url}/healthz", timeout=5).json()["status"] == "ok"


def test_signed_pull_request_is_queued_with_its_head(server: ServerThread, runtime: Runtime) -> None:
    r = deliver(server.url, "pull_request", pull_request_event("opened", REPO, 7, HEAD), delivery="d-1")
    assert r.status_code == 202, r.text
    assert r.json()["outcome"] == "queued"
    (job,) = runtime.book.list()
    assert (job.repository, job.pr, job.head_sha, job.state, job.trigger) == (
        REPO,
        7,
        HEAD,
        "queued",
        "pull_request.opened",
    )
    assert job.installation_id == 77
    assert runtime.queue.pending() == 1
    assert recorded(runtime, "d-1").outcome == "queued"


@pytest.mark.parametrize(
    "case",
    [
        "no signature",
        "bad signature",
        "wrong secret",
        "truncated body",
        "sha1 only",
        "signature of another body",
    ],
)
def test_unauthenticated_deliveries_get_401_and_nothing_is_queued(
    case: str, server: ServerThread, runtime: Runtime
) -> None:
    payload = pull_request_event("opened", REPO, 7, HEAD)
    raw = json.dumps(payload).encode()
    kwargs: dict[str, object] = {}
    if case == "no signature":
        kwargs["signature"] = ""
    elif case == "bad signature":
        kwargs["signature"] = "sha256=" + "0" * 64
    elif case == "wrong secret":
        kwargs["secret"] = "not the secret"
    elif case == "truncated body":
        kwargs["body"] = raw[: len(raw) // 2]  # signed whole, sent half (a cut connection)
    elif case == "sha1 only":
        kwargs["signature"] = "sha1=" + "0" * 40
    else:
        kwargs["signature"] = sign(SECRET.encode(), raw + b" ")
    r = deliver(server.url, "pull_request", payload, **kwargs)  # type: ignore[arg-type]
    assert r.status_code == 401
    assert "X-Hub-Signature-256" in r.json()["error"]
    nothing_queued(runtime)
    alive(server)
    metrics = httpx.get(f"{server.url}/metrics", timeout=5).text
    reason = "no_signature" if case == "no signature" else "bad_signature"
    assert f'reviewbot_webhook_rejected_total{{reason="{reason}"}} 1.0' in metrics


def test_body_cut_off_mid_stream_is_refused_and_the_server_stays_up(
    server: ServerThread, runtime: Runtime
) -> None:
    raw = json.dumps(pull_request_event("opened", REPO, 7, HEAD)).encode()
    host, port = server.url.removeprefix("http://").split(":")
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: cut-1\r\n"
        f"X-Hub-Signature-256: {sign(SECRET.encode(), raw)}\r\nContent-Length: {len(raw)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(head + raw[:100])
        sock.shutdown(socket.SHUT_WR)  # the sender stops; the rest of the body never comes
        answer = sock.recv(4096)
    assert not answer.startswith(b"HTTP/1.1 2")
    nothing_queued(runtime)
    alive(server)


def test_oversized_bodies_are_refused_by_declared_and_by_streamed_size(
    server: ServerThread, runtime: Runtime
) -> None:
    limit = runtime.settings.max_body_bytes
    host, port = server.url.removeprefix("http://").split(":")
    # Declared too big: refused before a byte of the body is read.
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            f"POST /webhook HTTP/1.1\r\nHost: {host}\r\nX-GitHub-Event: ping\r\nX-GitHub-Delivery: big-1\r\n"
            f"Content-Length: {limit + 1}\r\n\r\n".encode()
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 413")
    # Chunked, no length: refused once the stream passes the limit.
    chunk = b"x" * (1024 * 1024)

    def body() -> Iterator[bytes]:
        for _ in range(limit // len(chunk) + 2):
            yield chunk

    r = httpx.post(
        f"{server.url}/webhook",
        content=body(),
        headers={"X-GitHub-Event": "ping", "X-GitHub-Delivery": "big-2", "X-Hub-Signature-256": "sha256=00"},
        timeout=30,
    )
    assert r.status_code == 413
    nothing_queued(runtime)
    alive(server)


def test_the_same_delivery_three_times_queues_one_job(server: ServerThread, runtime: Runtime) -> None:
    payload = pull_request_event("synchronize", REPO, 7, HEAD)
    outcomes = [
        deliver(server.url, "pull_request", payload, delivery="same-1").json()["outcome"] for _ in range(3)
    ]
    assert outcomes == ["queued", "duplicate_delivery", "duplicate_delivery"]
    assert len(runtime.book.list()) == 1
    assert runtime.queue.pending() == 1


def test_a_second_delivery_for_the_same_head_adds_no_job(server: ServerThread, runtime: Runtime) -> None:
    first = deliver(server.url, "pull_request", pull_request_event("opened", REPO, 7, HEAD))
    again = deliver(server.url, "pull_request", pull_request_event("reopened", REPO, 7, HEAD))
    assert (first.json()["outcome"], again.json()["outcome"]) == ("queued", "duplicate_round")
    assert len(runtime.book.list()) == 1


def test_drafts_are_skipped_and_said_why(server: ServerThread, runtime: Runtime) -> None:
    r = deliver(
        server.url, "pull_request", pull_request_event("opened", REPO, 7, HEAD, draft=True), delivery="dr"
    )
    assert r.status_code == 200
    assert r.json()["outcome"] == "ignored"
    assert "draft" in r.json()["detail"]
    assert runtime.book.list() == []
    assert recorded(runtime, "dr").outcome == "ignored"


def test_review_command_queues_a_forced_round_for_the_worker_to_authorise(
    server: ServerThread, runtime: Runtime
) -> None:
    ok = deliver(server.url, "issue_comment", comment_event(REPO, 7, "please\n/reviewbot review\n"))
    assert ok.json()["outcome"] == "queued"
    (job,) = runtime.book.list()
    assert (job.force, job.head_sha, job.requested_by) == (True, None, "maintainer")
    # author_association NONE is not a refusal here: GitHub's permission API decides in the worker
    # (tests/github/test_commands.py); a second forced request of the same head is merged.
    outsider = deliver(
        server.url,
        "issue_comment",
        comment_event(REPO, 7, "/reviewbot review", association="NONE", comment_id=2),
    )
    assert outsider.json()["outcome"] == "duplicate_round"
    assert len(runtime.book.list()) == 1
    # A dismissal is never merged into another job: its arguments would be lost.
    dismiss = comment_event(REPO, 7, "/reviewbot dismiss abcd1234 not ours", comment_id=3)
    assert deliver(server.url, "issue_comment", dismiss).json()["outcome"] == "queued"
    jobs = runtime.book.list()
    assert [j.trigger for j in jobs] == ["issue_comment.dismiss", "issue_comment.created"]
    assert jobs[0].command is not None and "abcd1234" in jobs[0].command


def test_check_run_rerequested_queues_its_pull_requests(server: ServerThread, runtime: Runtime) -> None:
    r = deliver(server.url, "check_run", check_run_event(REPO, [7, 8], HEAD))
    assert r.json()["outcome"] == "queued"
    assert sorted(j.pr for j in runtime.book.list()) == [7, 8]


def test_ping_is_answered_and_recorded(server: ServerThread, runtime: Runtime) -> None:
    r = deliver(server.url, "ping", ping_event(), delivery="p-1")
    assert r.status_code == 200
    assert r.json()["outcome"] == "ping"
    assert recorded(runtime, "p-1").event == "ping"
    assert runtime.book.list() == []


def test_signed_garbage_is_a_400(server: ServerThread, runtime: Runtime) -> None:
    r = deliver(
        server.url, "pull_request", None, body=b"{not json", signature=sign(SECRET.encode(), b"{not json")
    )
    assert r.status_code == 400
    r = deliver(server.url, "pull_request", {"action": "opened"})
    assert r.status_code == 400
    assert "repository" in r.json()["error"]
    nothing_queued(runtime)


def test_metrics_count_deliveries_by_event_and_outcome(server: ServerThread, runtime: Runtime) -> None:
    deliver(server.url, "pull_request", pull_request_event("opened", REPO, 7, HEAD), delivery="m-1")
    deliver(server.url, "pull_request", pull_request_event("opened", REPO, 7, HEAD), delivery="m-1")
    deliver(server.url, "pull_request", pull_request_event("labeled", REPO, 7, HEAD))
    deliver(server.url, "pull_request", pull_request_event("closed", REPO, 8, HEAD))  # no job of its own
    text = httpx.get(f"{server.url}/metrics", timeout=5).text
    assert 'reviewbot_deliveries_total{event="pull_request",outcome="queued"} 1.0' in text
    assert 'reviewbot_deliveries_total{event="pull_request",outcome="duplicate_delivery"} 1.0' in text
    assert 'reviewbot_deliveries_total{event="pull_request",outcome="ignored"} 1.0' in text
    assert 'reviewbot_deliveries_total{event="pull_request",outcome="cancelled"} 1.0' in text
    assert 'reviewbot_jobs{state="queued"} 1.0' in text
    assert "reviewbot_queue_depth 1.0" in text
    assert 'reviewbot_queue_messages{kind="ready"} 1.0' in text
    assert "reviewbot_store_up 1.0" in text


def test_healthz_reports_the_database_and_the_queue(server: ServerThread) -> None:
    body = httpx.get(f"{server.url}/healthz", timeout=5).json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["queue"].startswith("ok")
