"""Test helpers for the App service: a uvicorn server thread, signed deliveries, payloads, waits."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
import uvicorn
from starlette.applications import Starlette

from reviewbot.service.signature import sign

SECRET = "It's a Secret to Everybody"
T = TypeVar("T")


class ServerThread:
    """uvicorn serving `app` on 127.0.0.1 (a port the OS picks) in a daemon thread."""

    def __init__(self, app: Starlette) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_config=None, access_log=False, lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)
        self.url = ""

    def __enter__(self) -> ServerThread:
        self.thread.start()
        wait_for(lambda: self.server.started, timeout=15, what="uvicorn to start")
        sock = self.server.servers[0].sockets[0]
        host, port = sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def wait_for(check: Callable[[], T | None], *, timeout: float, what: str, interval: float = 0.05) -> T:
    """Poll `check` until it returns something truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def deliver(
    base_url: str,
    event: str,
    payload: Any,
    *,
    delivery: str | None = None,
    secret: str = SECRET,
    body: bytes | None = None,
    signature: str | None = None,
    client: httpx.Client | None = None,
) -> httpx.Response:
    """POST a delivery the way GitHub does: JSON body, HMAC-SHA256 signature, delivery headers.

    `body` replaces the serialised payload (e.g. truncated after signing); `signature` replaces the
    computed one ("" sends no signature header at all).
    """
    raw = json.dumps(payload).encode() if payload is not None else b""
    sig = sign(secret.encode(), raw) if signature is None else signature
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/044aadd",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "292430182",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": "4242",
    }
    if sig:
        headers["X-Hub-Signature-256"] = sig
    data = raw if body is None else body
    if client is not None:
        return client.post(f"{base_url}/webhook", content=data, headers=headers)
    return httpx.post(f"{base_url}/webhook", content=data, headers=headers, timeout=10)


# --- payloads (the fields GitHub sends that reviewbot reads, plus their neighbours) -------------


def repository(full_name: str) -> dict[str, Any]:
    owner, name = full_name.split("/")
    return {"id": 1296269, "name": name, "full_name": full_name, "private": False, "owner": {"login": owner}}


def pull_request_event(
    action: str, repo: str, number: int, head: str, *, draft: bool = False, installation: int = 77
) -> dict[str, Any]:
    return {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "draft": draft,
            "head": {"sha": head, "ref": "feature"},
            "base": {"sha": "0" * 40, "ref": "main"},
            "user": {"login": "junna2016", "type": "User"},
        },
        "repository": repository(repo),
        "installation": {"id": installation},
        "sender": {"login": "junna2016", "type": "User"},
    }


def comment_event(
    repo: str,
    number: int,
    body: str,
    *,
    association: str = "MEMBER",
    login: str = "maintainer",
    bot: bool = False,
    comment_id: int = 5,
) -> dict[str, Any]:
    return {
        "action": "created",
        "issue": {
            "number": number,
            "state": "open",
            "pull_request": {"url": f"https://x/{repo}/pulls/{number}"},
        },
        "comment": {
            "id": comment_id,
            "body": body,
            "author_association": association,
            "user": {"login": login, "type": "Bot" if bot else "User"},
        },
        "repository": repository(repo),
        "installation": {"id": 77},
        "sender": {"login": login, "type": "Bot" if bot else "User"},
    }


def check_run_event(repo: str, numbers: list[int], head: str, *, app_id: int = 4242) -> dict[str, Any]:
    return {
        "action": "rerequested",
        "check_run": {
            "id": 128620228,
            "name": "reviewbot",
            "head_sha": head,
            "status": "completed",
            "app": {"id": app_id},
            "pull_requests": [
                {"number": n, "head": {"sha": head}, "base": {"sha": "0" * 40}} for n in numbers
            ],
        },
        "repository": repository(repo),
        "installation": {"id": 77},
        "sender": {"login": "maintainer", "type": "User"},
    }


def ping_event() -> dict[str, Any]:
    return {
        "zen": "Keep it logically awesome.",
        "hook_id": 292430182,
        "hook": {"type": "App", "app_id": 4242},
    }
