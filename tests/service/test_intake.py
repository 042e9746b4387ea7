"""Webhook intake under hostile input (issue 16, item 5), over real HTTP to uvicorn on loopback.

- Signed but malformed payloads: a fuzz corpus of field mutations (wrong types, out-of-range and
  infinite numbers, deep nesting, odd headers) gets 400 with a one-line reason, never a 5xx.
- A `/reviewbot review` comment delivered again under a new delivery id runs no second round.
- Header and body deadlines: half-open and trickling connections are closed, not kept forever.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from reviewbot.service.app import create_app
from reviewbot.service.payload import MAX_DEPTH, MalformedPayload, depth, parse_body
from reviewbot.service.runtime import Runtime
from reviewbot.service.server import server_config
from reviewbot.service.signature import sign
from reviewbot.settings import Settings
from tests.service.helpers import (
    SECRET,
    check_run_event,
    comment_event,
    ping_event,
    pull_request_event,
    wait_for,
)

REPO = "acme/rtp-llm"
HEAD = "a" * 40


class GuardedServer:
    """uvicorn with `reviewbot serve`'s configuration (service.server) in a daemon thread."""

    def __init__(self, runtime: Runtime, settings: Settings) -> None:
        app = create_app(settings, runtime.book, runtime.queue)
        self.server = uvicorn.Server(server_config(app, settings, host="127.0.0.1", port=0, lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)
        self.url = ""
        self.address: tuple[str, int] = ("", 0)

    def __enter__(self) -> GuardedServer:
        self.thread.start()
        wait_for(lambda: self.server.started, timeout=15, what="uvicorn to start")
        self.address = self.server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{self.address[0]}:{self.address[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    def open_connections(self) -> int:
        return len(self.server.server_state.connections)


@pytest.fixture
def quick(settings: Settings) -> Settings:
    return settings.model_copy(update={"header_timeout_s": 1.0, "body_timeout_s": 1.0})


@pytest.fixture
def runtime_quick(quick: Settings) -> Iterator[Runtime]:
    rt = Runtime.open(quick)
    yield rt
    rt.close()


@pytest.fixture
def server(runtime_quick: Runtime, quick: Settings) -> Iterator[GuardedServer]:
    with GuardedServer(runtime_quick, quick) as srv:
        yield srv


def post_signed(
    url: str,
    event: str,
    body: bytes,
    *,
    delivery: str | None = None,
    headers: dict[str, str] | None = None,
    client: httpx.Client | None = None,
) -> httpx.Response:
    sent = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET.encode(), body),
        **(headers or {}),
    }
    if client is not None:
        return client.post(f"{url}/webhook", content=body, headers=sent)
    return httpx.post(f"{url}/webhook", content=body, headers=sent, timeout=20)


# --- the fuzz corpus -----------------------------------------------------------------------------

VALID: dict[str, Any] = {
    "pull_request": pull_request_event("opened", REPO, 7, HEAD),
    "issue_comment": comment_event(REPO, 7, "/reviewbot review"),
    "check_run": check_run_event(REPO, [7, 8], HEAD),
    "ping": ping_event(),
}
# Every field reviewbot reads, per event.
FIELDS = {
    "pull_request": [
        "action",
        "repository",
        "repository.full_name",
        "pull_request",
        "pull_request.number",
        "pull_request.state",
        "pull_request.draft",
        "pull_request.head",
        "pull_request.head.sha",
        "installation",
        "installation.id",
    ],
    "issue_comment": [
        "action",
        "repository.full_name",
        "issue",
        "issue.number",
        "issue.state",
        "issue.pull_request",
        "comment",
        "comment.id",
        "comment.body",
        "comment.user",
        "comment.user.login",
        "comment.user.type",
        "comment.author_association",
        "installation.id",
    ],
    "check_run": [
        "action",
        "repository.full_name",
        "check_run",
        "check_run.app",
        "check_run.app.id",
        "check_run.head_sha",
        "check_run.pull_requests",
        "sender",
        "sender.login",
    ],
    "ping": ["zen"],
}
INF = "__INF__"  # serialised as the literal 1e400 (Python's json reads it as inf)
VALUES: list[Any] = [
    None,
    [],
    [1, 2],
    {},
    {"a": {"b": 1}},
    "",
    "x" * 70_000,
    "../../etc/passwd\n\x00",
    0,
    -1,
    2**31,
    2**70,
    1.5,
    INF,
    True,
    False,
]


def _set(payload: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(payload)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return out


def _delete(payload: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(payload)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[key]
    node.pop(keys[-1], None)
    return out


def _body(payload: Any) -> bytes:
    return json.dumps(payload).replace(f'"{INF}"', "1e400").encode()


def corpus(values: list[Any] = VALUES) -> Iterator[tuple[str, str, bytes, dict[str, str]]]:
    """(label, event, body, extra headers) of signed deliveries that are not what GitHub sends."""
    for event, fields in FIELDS.items():
        for path in fields:
            for value in values:
                i = next(k for k, v in enumerate(VALUES) if v is value)
                yield f"{event}:{path}={i}", event, _body(_set(VALID[event], path, value)), {}
            yield f"{event}:-{path}", event, _body(_delete(VALID[event], path)), {}
        nested: Any = {}
        for _ in range(200):
            nested = {"x": nested}
        yield f"{event}:deep-field", event, _body(_set(VALID[event], "action", nested)), {}
    deep = b"[" * 100_000 + b"]" * 100_000
    for label, body in [
        ("deep-array", deep),
        ("deep-object", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
        ("list", b"[]"),
        ("null", b"null"),
        ("number", b"1e400"),
        ("string", b'"pull_request"'),
        ("nan", b'{"action": NaN}'),
        ("huge-int", b'{"action": ' + b"9" * 5000 + b"}"),
        ("not-utf8", b'{"action": "\xff\xfe"}'),
        ("truncated", _body(VALID["pull_request"])[:-10]),
        ("empty", b""),
    ]:
        yield label, "pull_request", body, {}
    good = _body(VALID["pull_request"])
    yield "event-header-long", "pull_request" * 300, good, {}
    yield "event-header-odd", "pull_request; drop table", good, {}
    yield "delivery-header-long", "pull_request", good, {"X-GitHub-Delivery": "d" * 500}
    yield "delivery-header-odd", "pull_request", good, {"X-GitHub-Delivery": "a b\tc"}
    yield "form-no-payload", "pull_request", b"x=1", {"Content-Type": "application/x-www-form-urlencoded"}
    yield (
        "form-bad-json",
        "pull_request",
        b"payload=%7B",
        {"Content-Type": "application/x-www-form-urlencoded"},
    )


def test_a_fuzz_corpus_of_signed_malformed_payloads_never_gets_a_5xx(
    server: GuardedServer, runtime_quick: Runtime
) -> None:
    statuses: dict[int, int] = {}
    refused: list[str] = []
    five_xx: list[str] = []
    started = time.monotonic()
    client = httpx.Client(timeout=20)
    for label, event, body, headers in corpus():
        r = post_signed(server.url, event, body, headers=headers, client=client)
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        if r.status_code >= 500:
            five_xx.append(f"{label}: {r.status_code} {r.text[:200]}")
        if r.status_code == 400:
            reason = r.json()["error"]
            assert reason and "\n" not in reason and len(reason) < 300, (label, reason)
            refused.append(label)
    elapsed = time.monotonic() - started
    client.close()
    assert five_xx == []
    total = sum(statuses.values())
    assert total > 500 and statuses.get(400, 0) > total // 2, statuses
    # The refusals name the field: one of them, from each kind of mutation.
    assert "pull_request:pull_request.number=1" in refused  # an empty list
    assert "pull_request:pull_request.number=13" in refused  # 1e400
    assert "deep-array" in refused and "deep-object" in refused and "event-header-long" in refused
    assert httpx.get(f"{server.url}/healthz", timeout=5).json()["status"] == "ok"
    print(
        f"\nfuzz corpus: {total} signed deliveries in {elapsed:.1f} s, statuses {dict(sorted(statuses.items()))}"
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([1], "pull_request.number must be an integer, not a list"),
        ({"n": 1}, "pull_request.number must be an integer, not an object"),
        (None, "pull_request.number must be an integer, not null"),
        (INF, "pull_request.number must be an integer, not an infinite number"),
        (0, "pull_request.number must be between 1 and 2147483647, not 0"),
        ("7", "pull_request.number must be an integer, not a string"),
        (True, "pull_request.number must be an integer, not a boolean"),
    ],
)
def test_a_bad_pull_request_number_is_a_400_that_says_so(
    server: GuardedServer, runtime_quick: Runtime, value: Any, reason: str
) -> None:
    body = _body(_set(VALID["pull_request"], "pull_request.number", value))
    r = post_signed(server.url, "pull_request", body)
    assert (r.status_code, r.json()["error"]) == (400, reason)
    assert runtime_quick.book.list() == []


def test_parse_body_bounds_nesting_and_refuses_non_json_numbers() -> None:
    assert depth({"a": [{"b": 1}]}) == 3
    nested: Any = 1
    for _ in range(MAX_DEPTH + 1):
        nested = [nested]
    with pytest.raises(MalformedPayload, match="deeper than"):
        parse_body(json.dumps({"a": nested}).encode(), "application/json")
    with pytest.raises(MalformedPayload, match="deeper than"):
        parse_body(b"[" * 200_000, "application/json")
    with pytest.raises(MalformedPayload, match="not valid JSON"):
        parse_body(b'{"a": Infinity}', "application/json")
    assert parse_body(b'{"a": 1}', "application/json") == {"a": 1}


# --- replayed comment commands ------------------------------------------------------------------


def test_a_replayed_review_command_runs_no_new_round(server: GuardedServer, runtime_quick: Runtime) -> None:
    book = runtime_quick.book
    command = comment_event(REPO, 7, "/reviewbot review")
    command["comment"]["updated_at"] = "2026-12-01T10:00:00Z"
    first = post_signed(server.url, "issue_comment", _body(command))
    assert first.status_code == 202 and first.json()["outcome"] == "queued"
    [job] = book.list()
    claim = book.claim(job.id, 1, "w1", lease_seconds=60, wait_seconds=1)
    assert claim.status == "run" and claim.job is not None
    book.finish(claim.job, "done", "round 1 published", round_index=1, result_head=HEAD)
    # The captured delivery, replayed under new delivery ids: nothing new runs.
    for _ in range(3):
        again = post_signed(server.url, "issue_comment", _body(command))
        assert again.status_code == 200 and again.json()["outcome"] == "duplicate_command", again.text
        assert "received before" in again.json()["detail"]
    assert [j.id for j in book.list()] == [job.id]
    # An edit of the comment is a new command (the maintainer asked again).
    edited = _set(command, "comment.updated_at", "2026-12-01T10:05:00Z")
    assert post_signed(server.url, "issue_comment", _body(edited)).json()["outcome"] == "queued"
    assert len(book.list()) == 2


# --- header and body deadlines ------------------------------------------------------------------


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed `sock` within `seconds`, and what it sent before."""
    sock.settimeout(0.2)
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True, got
        if not chunk:
            return True, got
        got += chunk
    return False, got


def test_half_open_connections_are_closed_at_the_header_deadline(server: GuardedServer) -> None:
    sockets = []
    started = time.monotonic()
    for i in range(300):
        s = socket.create_connection(server.address, timeout=5)
        if i % 3 == 1:
            s.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        elif i % 3 == 2:
            s.sendall(b"P")  # a slow-loris start
        sockets.append(s)
    most = server.open_connections()
    for s in sockets[2::3]:  # keep trickling: it must not buy time
        s.sendall(b"O")
    results = [_closed_within(s, 4.0) for s in sockets]
    elapsed = time.monotonic() - started
    for s in sockets:
        s.close()
    assert all(closed for closed, _ in results), sum(not c for c, _ in results)
    partial = [got for i, (_, got) in enumerate(results) if i % 3]
    assert all(got.startswith(b"HTTP/1.1 408") for got in partial)
    wait_for(lambda: server.open_connections() == 0, timeout=5, what="every connection to be dropped")
    assert elapsed < 6, elapsed
    print(f"\n300 half-open connections ({most} open at once) all closed {elapsed:.1f} s after the first")


def test_a_body_that_stalls_gets_408_and_a_good_request_after_it_still_works(server: GuardedServer) -> None:
    with socket.create_connection(server.address, timeout=5) as s:
        s.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'X-GitHub-Event: ping\r\nX-GitHub-Delivery: stall-1\r\nContent-Length: 100\r\n\r\n{"zen":'
        )
        started = time.monotonic()
        closed, got = _closed_within(s, 5.0)
        assert closed and got.startswith(b"HTTP/1.1 408"), got[:200]
        assert time.monotonic() - started < 3
    # Keep-alive between requests is fine: a second request on the same connection within the deadline.
    with httpx.Client(timeout=10) as client:
        for _ in range(2):
            r = client.post(
                f"{server.url}/webhook",
                content=_body(ping_event()),
                headers={
                    "X-GitHub-Event": "ping",
                    "X-GitHub-Delivery": str(uuid.uuid4()),
                    "X-Hub-Signature-256": sign(SECRET.encode(), _body(ping_event())),
                },
            )
            assert r.status_code == 200 and r.json()["outcome"] == "ping"


def _raw_request(address: tuple[str, int], request: bytes, *, seconds: float = 10.0) -> bytes:
    """Send `request` whole over a fresh connection and read until the server closes it."""
    with socket.create_connection(address, timeout=seconds) as s:
        s.sendall(request)
        closed, got = _closed_within(s, seconds)
        assert closed, got[:200]
        return got


def _signed_ping(pad: int, delivery: str) -> bytes:
    body = _body(ping_event())
    return (
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"X-GitHub-Event: ping\r\nX-GitHub-Delivery: " + delivery.encode() + b"\r\n"
        b"X-Hub-Signature-256: " + sign(SECRET.encode(), body).encode() + b"\r\n"
        b"X-Pad: " + b"a" * pad + b"\r\nConnection: close\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


@pytest.mark.parametrize("size", [17_000, 64 * 1024], ids=["17KB", "64KB"])
def test_headers_over_16_kib_get_431_however_they_arrive(server: GuardedServer, size: int) -> None:
    # Sent in one write: h11's own limit only applied to headers still incomplete, so these got a
    # normal answer (the probe: 200 for a ping with a 17 KB or 64 KB header).
    got = _raw_request(server.address, _signed_ping(size, f"big-header-{size}"))
    assert got.startswith(b"HTTP/1.1 431 "), got[:200]
    assert b"request line and headers over 16384 bytes" in got
    # One byte at a time past the limit: refused as soon as the limit is passed.
    with socket.create_connection(server.address, timeout=10) as s:
        request = _signed_ping(size, f"trickled-{size}")
        s.sendall(request[: 16 * 1024])
        s.sendall(request[16 * 1024 : 16 * 1024 + 64])
        closed, trickled = _closed_within(s, 5.0)
    assert closed and trickled.startswith(b"HTTP/1.1 431 "), trickled[:200]
    # Just under the limit is an ordinary request.
    ok = _raw_request(server.address, _signed_ping(15_000, f"under-{size}"))
    assert ok.startswith(b"HTTP/1.1 200 "), ok[:200]
    wait_for(lambda: server.open_connections() == 0, timeout=5, what="the refused connections to close")


def test_a_26_mb_body_with_content_length_gets_413_not_a_reset(server: GuardedServer) -> None:
    # The server answers as soon as it has the headers; the client is still sending. A plain close
    # then (with unread data) made the kernel reset the connection: the client saw ECONNRESET
    # instead of the answer. Now the rest is read and dropped.
    body = b"x" * (26 * 1024 * 1024)
    started = time.monotonic()
    with httpx.Client(timeout=30) as client:
        r = client.post(
            f"{server.url}/webhook",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-GitHub-Event": "ping",
                "X-GitHub-Delivery": "huge-1",
                "X-Hub-Signature-256": sign(SECRET.encode(), body),
            },
        )
    took = time.monotonic() - started
    assert r.status_code == 413 and r.json() == {"error": f"payload over {25 * 1024 * 1024} bytes"}
    assert r.headers["connection"] == "close"
    # The same from a raw socket, read only after the whole body is written (as `requests` does).
    with socket.create_connection(server.address, timeout=30) as s:
        s.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\nX-GitHub-Delivery: huge-2\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        s.sendall(body)
        closed, got = _closed_within(s, 10.0)
    assert closed and got.startswith(b"HTTP/1.1 413 "), got[:200]
    # The server is fine afterwards, and holds nothing of those connections.
    ok = _raw_request(server.address, _signed_ping(10, "after-huge"))
    assert ok.startswith(b"HTTP/1.1 200 ")
    wait_for(lambda: server.open_connections() == 0, timeout=5, what="the refused connections to close")
    print(f"\n26 MB body: 413 in {took:.2f} s")
