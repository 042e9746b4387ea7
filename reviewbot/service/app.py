"""The webhook server: `POST /webhook`, `GET /healthz`, `GET /metrics` (Starlette), and with a history
token set, the read-only round-history pages `GET /prs/{owner}/{repo}/{n}` (service.history_route).

A delivery is answered in milliseconds: size check, signature check on the raw bytes, parse,
classify, one database transaction (delivery + jobs), one queue message per job. Rounds run in
workers. Nothing from an unauthenticated request is parsed or stored; its refusal's log line names
only its `X-GitHub-Event` and `X-GitHub-Delivery` headers, and only when they have GitHub's shape.

Every request to `/webhook` gets one log line (service.logs.delivery_line): accepted, ignored or
refused, with the event, action, repository, PR, delivery id, HTTP status and why.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reviewbot.errors import ReviewbotError
from reviewbot.service.events import classify
from reviewbot.service.history_route import history_routes
from reviewbot.service.jobs import JobBook
from reviewbot.service.logs import delivery_line
from reviewbot.service.metrics import ServiceMetrics
from reviewbot.service.payload import MalformedPayload, parse_body
from reviewbot.service.queue import JobQueue
from reviewbot.service.signature import verify_signature
from reviewbot.settings import Settings

__all__ = ["create_app", "Lifecycle"]

log = logging.getLogger(__name__)


@dataclass
class Lifecycle:
    """Hooks run when the server starts and stops (the in-process worker of `--with-worker`)."""

    on_start: Callable[[], None] | None = None
    on_stop: Callable[[], None] | None = None


# GitHub's event names and delivery ids (UUIDs); anything else is refused before it is stored.
_EVENT = re.compile(r"[a-z_]{1,64}")
_DELIVERY = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _error(status: int, message: str, *, close: bool = False, **extra: Any) -> JSONResponse:
    """A refusal; `close`: the body was not read to its end, so the connection cannot be reused."""
    headers = {"Connection": "close"} if close else None
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


def create_app(
    settings: Settings, book: JobBook, queue: JobQueue, lifecycle: Lifecycle | None = None
) -> Starlette:
    """The ASGI application. `settings.webhook_secret` must be set (UsageError otherwise)."""
    secret = settings.require_secret()
    metrics = ServiceMetrics(book, queue)
    limit = settings.max_body_bytes

    async def read_body(request: Request, refuse: _Refuse) -> bytes | Response:
        return await _read_body(request, limit, settings.body_timeout_s, refuse)

    async def webhook(request: Request) -> Response:
        started = time.perf_counter()
        try:
            return await _webhook(request)
        finally:
            metrics.latency.observe(time.perf_counter() - started)

    def refused(
        request: Request,
        status: int,
        outcome: str,
        message: str,
        *,
        close: bool = False,
        why: str = "",
        level: int = logging.INFO,
    ) -> JSONResponse:
        """Count and log a refusal (`why`: the log's reason when it says more than the answer), and
        answer it. Of the request only the event and delivery headers are logged, and only when
        they have GitHub's shape: the request may be anyone's."""
        metrics.rejected.labels(outcome).inc()
        delivery_line(
            log,
            delivery=_shaped(_DELIVERY, request.headers.get("x-github-delivery", "")),
            event=_shaped(_EVENT, request.headers.get("x-github-event", "")),
            status=status,
            outcome=outcome,
            reason=why or message,
            level=level,
        )
        return _error(status, message, close=close)

    async def _webhook(request: Request) -> Response:
        try:
            body = await read_body(request, refused)
        except ClientDisconnect:
            return refused(request, 400, "disconnected", "the client went away before sending the whole body")
        if isinstance(body, Response):
            return body
        header = request.headers.get("x-hub-signature-256")
        if not verify_signature(secret, body, header):
            # The answer is the same for both; the log says which, and what to check.
            return refused(
                request,
                401,
                "no_signature" if not header else "bad_signature",
                "missing or invalid X-Hub-Signature-256",
                why="no X-Hub-Signature-256 header"
                if not header
                else "X-Hub-Signature-256 does not match the body: is REVIEWBOT_WEBHOOK_SECRET "
                "the App's webhook secret?",
            )
        event = request.headers.get("x-github-event", "")
        delivery = request.headers.get("x-github-delivery", "")
        if not _EVENT.fullmatch(event) or not _DELIVERY.fullmatch(delivery):
            return refused(
                request,
                400,
                "malformed",
                "X-GitHub-Event (an event name) and X-GitHub-Delivery (an id of at most 64 letters, "
                "digits and dashes) are required",
            )
        try:
            payload = parse_body(body, request.headers.get("content-type", ""))
            decision = classify(
                event,
                payload,
                review_drafts=settings.review_drafts,
                command=settings.command,
                app_id=settings.app_id,
            )
        except MalformedPayload as exc:
            return refused(request, 400, "malformed", str(exc))
        except Exception as exc:  # a shape no check foresaw: still the sender's payload, never a 500
            message = f"the payload does not have the shape of a {event} event"
            return refused(
                request, 400, "malformed", message, why=f"{message}: {exc!r}", level=logging.WARNING
            )
        try:
            accepted = await run_in_threadpool(book.accept, delivery, decision)
        except ReviewbotError as exc:
            delivery_line(
                log,
                delivery=delivery,
                event=event,
                action=decision.action,
                repo=decision.repository,
                pr=decision.pr,
                status=503,
                outcome="store_unavailable",
                reason=f"the database is unavailable: {exc}",
                level=logging.ERROR,
            )
            return _error(503, "the database is unavailable; redeliver later")
        if accepted.dispatches:
            try:
                await run_in_threadpool(queue.send, accepted.dispatches)
            except Exception as exc:
                # The jobs are recorded; a worker's sweep re-sends queued jobs whose message was lost.
                log.error(
                    "delivery %s: jobs %s recorded but not enqueued: %s", delivery, accepted.job_ids, exc
                )
        status = 202 if accepted.outcome == "queued" else 200
        delivery_line(
            log,
            delivery=delivery,
            event=event,
            action=decision.action,
            repo=decision.repository,
            pr=decision.pr,
            status=status,
            outcome=accepted.outcome,
            reason=accepted.detail,
            jobs=accepted.job_ids,
        )
        return JSONResponse(
            {"outcome": accepted.outcome, "detail": accepted.detail, "jobs": list(accepted.job_ids)},
            status_code=status,
        )

    async def healthz(_request: Request) -> Response:
        checks: dict[str, str] = {}
        try:
            await run_in_threadpool(book.ping)
            checks["database"] = "ok"
        except ReviewbotError as exc:
            checks["database"] = str(exc)
        try:
            checks["queue"] = f"ok ({await run_in_threadpool(queue.pending)} ready)"
        except Exception as exc:  # any backend error means the queue is unusable
            checks["queue"] = f"{type(exc).__name__}: {exc}"
        ok = all(v.startswith("ok") for v in checks.values())
        return JSONResponse(
            {"status": "ok" if ok else "unavailable", **checks}, status_code=200 if ok else 503
        )

    async def metrics_endpoint(_request: Request) -> Response:
        data = await run_in_threadpool(generate_latest, metrics.registry)
        return Response(data, media_type=CONTENT_TYPE_LATEST)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if lifecycle and lifecycle.on_start:
            await run_in_threadpool(lifecycle.on_start)
        try:
            yield
        finally:
            if lifecycle and lifecycle.on_stop:
                await run_in_threadpool(lifecycle.on_stop)

    app = Starlette(
        routes=[
            Route("/webhook", webhook, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
            # Read-only round-history pages, only with a bearer token configured (service.history_route).
            *history_routes(settings, book.engine),
        ],
        lifespan=lifespan,
    )
    app.state.metrics = metrics
    return app


class _Refuse(Protocol):
    def __call__(
        self, request: Request, status: int, outcome: str, message: str, *, close: bool = ...
    ) -> JSONResponse: ...


def _shaped(pattern: re.Pattern[str], value: str) -> str | None:
    return value if pattern.fullmatch(value) else None


async def _read_body(request: Request, limit: int, timeout: float, refuse: _Refuse) -> bytes | Response:
    """The body, or the refusal: 400 for a bad Content-Length, 413 over `limit` bytes (declared or
    streamed), 408 when the whole body has not arrived within `timeout` seconds (a client that
    trickles or stalls is cut off)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            return refuse(request, 400, "malformed", "Content-Length is not a number")
        if size > limit:
            return refuse(request, 413, "too_large", f"payload over {limit} bytes", close=True)
    body = bytearray()
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:  # a chunked body, or one longer than it declared
                    return refuse(request, 413, "too_large", f"payload over {limit} bytes", close=True)
    except TimeoutError:
        return refuse(request, 408, "timeout", f"the body did not arrive within {timeout:g} s", close=True)
    return bytes(body)
