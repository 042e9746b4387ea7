"""The webhook server: `POST /webhook`, `GET /healthz`, `GET /metrics` (Starlette), and with a history
token set, the read-only round-history pages `GET /prs/{owner}/{repo}/{n}` (service.history_route).

A delivery is answered in milliseconds: size check, signature check on the raw bytes, parse,
classify, one database transaction (delivery + jobs), one queue message per job. Rounds run in
workers. Nothing from an unauthenticated request is parsed, logged or stored.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

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

    async def read_body(request: Request) -> bytes | Response:
        return await _read_body(request, limit, settings.body_timeout_s, metrics)

    async def webhook(request: Request) -> Response:
        started = time.perf_counter()
        try:
            return await _webhook(request)
        finally:
            metrics.latency.observe(time.perf_counter() - started)

    async def _webhook(request: Request) -> Response:
        try:
            body = await read_body(request)
        except ClientDisconnect:
            metrics.rejected.labels("disconnected").inc()
            return _error(400, "the client went away before sending the whole body")
        if isinstance(body, Response):
            return body
        header = request.headers.get("x-hub-signature-256")
        if not verify_signature(secret, body, header):
            metrics.rejected.labels("no_signature" if not header else "bad_signature").inc()
            return _error(401, "missing or invalid X-Hub-Signature-256")
        event = request.headers.get("x-github-event", "")
        delivery = request.headers.get("x-github-delivery", "")
        if not _EVENT.fullmatch(event) or not _DELIVERY.fullmatch(delivery):
            metrics.rejected.labels("malformed").inc()
            return _error(
                400,
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
            metrics.rejected.labels("malformed").inc()
            return _error(400, str(exc))
        except Exception as exc:  # a shape no check foresaw: still the sender's payload, never a 500
            metrics.rejected.labels("malformed").inc()
            log.warning("delivery %s (%s): unexpected payload shape: %r", delivery, event, exc)
            return _error(400, f"the payload does not have the shape of a {event} event")
        try:
            accepted = await run_in_threadpool(book.accept, delivery, decision)
        except ReviewbotError as exc:
            log.error("delivery %s (%s): %s", delivery, event, exc)
            return _error(503, "the database is unavailable; redeliver later")
        if accepted.dispatches:
            try:
                await run_in_threadpool(queue.send, accepted.dispatches)
            except Exception as exc:
                # The jobs are recorded; a worker's sweep re-sends queued jobs whose message was lost.
                log.error(
                    "delivery %s: jobs %s recorded but not enqueued: %s", delivery, accepted.job_ids, exc
                )
        log.info(
            "delivery %s: %s%s %s: %s",
            delivery,
            event,
            f".{decision.action}" if decision.action else "",
            accepted.outcome,
            accepted.detail,
        )
        status = 202 if accepted.outcome == "queued" else 200
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


async def _read_body(
    request: Request, limit: int, timeout: float, metrics: ServiceMetrics
) -> bytes | Response:
    """The body, or the refusal: 400 for a bad Content-Length, 413 over `limit` bytes (declared or
    streamed), 408 when the whole body has not arrived within `timeout` seconds (a client that
    trickles or stalls is cut off)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            return _error(400, "Content-Length is not a number")
        if size > limit:
            metrics.rejected.labels("too_large").inc()
            return _error(413, f"payload over {limit} bytes", close=True)
    body = bytearray()
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:  # a chunked body, or one longer than it declared
                    metrics.rejected.labels("too_large").inc()
                    return _error(413, f"payload over {limit} bytes", close=True)
    except TimeoutError:
        metrics.rejected.labels("timeout").inc()
        return _error(408, f"the body did not arrive within {timeout:g} s", close=True)
    return bytes(body)
