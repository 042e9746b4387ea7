"""The webhook server: `POST /webhook`, `GET /healthz`, `GET /metrics` (Starlette).

A delivery is answered in milliseconds: size check, signature check on the raw bytes, parse,
classify, one database transaction (delivery + jobs), one queue message per job. Rounds run in
workers. Nothing from an unauthenticated request is parsed, logged or stored.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.parse
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
from reviewbot.service.events import MalformedPayload, classify
from reviewbot.service.jobs import JobBook
from reviewbot.service.metrics import ServiceMetrics
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


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def create_app(
    settings: Settings, book: JobBook, queue: JobQueue, lifecycle: Lifecycle | None = None
) -> Starlette:
    """The ASGI application. `settings.webhook_secret` must be set (UsageError otherwise)."""
    secret = settings.require_secret()
    metrics = ServiceMetrics(book, queue)
    limit = settings.max_body_bytes

    async def read_body(request: Request) -> bytes | Response:
        declared = request.headers.get("content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                return _error(400, "Content-Length is not a number")
            if size > limit:
                metrics.rejected.labels("too_large").inc()
                return _error(413, f"payload over {limit} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:  # a chunked body, or one longer than it declared
                metrics.rejected.labels("too_large").inc()
                return _error(413, f"payload over {limit} bytes")
        return bytes(body)

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
        if not event or not delivery or len(delivery) > 64:
            metrics.rejected.labels("malformed").inc()
            return _error(400, "X-GitHub-Event and X-GitHub-Delivery headers are required")
        try:
            payload = _parse(body, request.headers.get("content-type", ""))
            decision = classify(
                event,
                payload,
                review_drafts=settings.review_drafts,
                command=settings.command,
                app_id=settings.app_id,
            )
        except (ValueError, MalformedPayload) as exc:
            metrics.rejected.labels("malformed").inc()
            return _error(
                400, str(exc) if isinstance(exc, MalformedPayload) else "the body is not valid JSON"
            )
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
        ],
        lifespan=lifespan,
    )
    app.state.metrics = metrics
    return app


def _parse(body: bytes, content_type: str) -> Any:
    """The payload: JSON, or the `payload` field of a form-encoded delivery (a webhook setting)."""
    if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
        fields = urllib.parse.parse_qs(body.decode("utf-8"), strict_parsing=False)
        if "payload" not in fields:
            raise ValueError("form-encoded delivery without a payload field")
        return json.loads(fields["payload"][0])
    return json.loads(body)
