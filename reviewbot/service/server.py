"""uvicorn for the webhook server, with the deadlines a public endpoint needs.

uvicorn times out an idle keep-alive connection (`timeout_keep_alive`) but gives a request all the
time it wants to send its headers: a client that connects and sends nothing, or a byte now and then,
holds a connection open forever (the probe of issue 16 left 900 such connections open). Here:

- headers: the request line and headers must be complete within `header_timeout_s` of the
  connection being made, or of the previous response on it; then the connection is closed (with a
  408 when part of a request had arrived). `GuardedH11Protocol` adds this to uvicorn's h11 protocol.
- body: the application reads the whole body within `body_timeout_s` or answers 408 (service.app).
- size: headers over `MAX_HEADER_BYTES` are a 400 (h11's incomplete-event limit); the body is capped
  by `max_body_bytes` (413).
- idle keep-alive connections close after `KEEP_ALIVE_S`; more than `MAX_CONNECTIONS` open
  connections get 503 instead of taking memory; shutdown waits at most `GRACEFUL_SHUTDOWN_S` for them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from reviewbot.settings import Settings

__all__ = [
    "GRACEFUL_SHUTDOWN_S",
    "GuardedH11Protocol",
    "KEEP_ALIVE_S",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "guarded_protocol",
    "server_config",
]

KEEP_ALIVE_S = 5
MAX_HEADER_BYTES = 16 * 1024
MAX_CONNECTIONS = 1000
GRACEFUL_SHUTDOWN_S = 10

_TIMEOUT_RESPONSE = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's line and headers."""

    header_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the headers are in: the body is the app's to time
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:  # the next request's headers start now
            self._arm()
        else:
            self._disarm()  # a pipelined request was already read

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:  # part of a request arrived: say why it is cut off
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def guarded_protocol(header_timeout_s: float) -> type[GuardedH11Protocol]:
    """The protocol class with this header deadline (uvicorn builds one instance per connection)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"header_timeout_s": header_timeout_s})


def server_config(
    app: Starlette, settings: Settings, *, host: str, port: int, access_log: bool = False, **extra: Any
) -> uvicorn.Config:
    """The uvicorn configuration `reviewbot serve` runs the webhook app with (see the module doc)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(settings.header_timeout_s),
        timeout_keep_alive=KEEP_ALIVE_S,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        log_config=None,
        access_log=access_log,
        **extra,
    )
