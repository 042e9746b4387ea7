"""uvicorn for the webhook server, with the deadlines a public endpoint needs.

uvicorn times out an idle keep-alive connection (`timeout_keep_alive`) but gives a request all the
time it wants to send its headers: a client that connects and sends nothing, or a byte now and then,
holds a connection open forever (a probe that did so left 900 such connections open). Here:

- headers: the request line and headers must be complete within `header_timeout_s` of the
  connection being made, or of the previous response on it; then the connection is closed (with a
  408 when part of a request had arrived). `GuardedH11Protocol` adds this to uvicorn's h11 protocol.
- body: the application reads the whole body within `body_timeout_s` or answers 408 (service.app).
- size: a request line and headers over `MAX_HEADER_BYTES` are a 431, however they arrive: h11's own
  limit (`h11_max_incomplete_event_size`) only applies while they are incomplete, so headers that
  came in one read passed whatever their size. The body is capped by `max_body_bytes` (413).
- a refusal sent while the client is still sending (a 413 for a declared 26 MB body, a 431) is not
  followed by a plain close, which with unread data in the socket makes the kernel send a reset that
  can reach the client before the answer does: the connection is half-closed and what the client
  still sends is read and dropped, up to `LINGER_BYTES` or `LINGER_S`, then closed.
- idle keep-alive connections close after `KEEP_ALIVE_S`; more than `MAX_CONNECTIONS` open
  connections get 503 instead of taking memory; shutdown waits at most `GRACEFUL_SHUTDOWN_S` for them.
"""

from __future__ import annotations

import asyncio
import re
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
# After a refusal mid-request: how much more of the request is read and dropped, and for how long,
# so that the client reads the answer instead of a reset (GitHub's payloads are at most 25 MB).
LINGER_BYTES = 64 * 1024 * 1024
LINGER_S = 10.0

_TIMEOUT_RESPONSE = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_HEADERS_END = re.compile(rb"\r?\n\r?\n")
_TOO_LARGE_BODY = b"request line and headers over %d bytes\n" % MAX_HEADER_BYTES
_HEADERS_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TOO_LARGE_BODY), _TOO_LARGE_BODY)
)


class _LingeringTransport:
    """The connection's transport as uvicorn's request cycle sees it: `close()` while the client is
    still sending the request lingers instead (see `GuardedH11Protocol.linger`)."""

    def __init__(self, transport: asyncio.Transport, protocol: GuardedH11Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def close(self) -> None:
        if self._protocol.client_still_sending():
            self._protocol.linger()
        else:
            self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's line and headers."""

    header_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._lingering: asyncio.TimerHandle | None = None
        self._dropped = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._raw_transport = transport
        self.transport = _LingeringTransport(transport, self)  # type: ignore[assignment]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._lingering is not None:  # the answer is out: drop the rest of the request
            self._dropped += len(data)
            if self._dropped > LINGER_BYTES:
                self._close_now()
            return
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the headers are in: the body is the app's to time
            self._disarm()

    def handle_events(self) -> None:
        if self.conn.their_state is h11.IDLE and self._lingering is None and self._headers_too_large():
            self.transport.write(_HEADERS_TOO_LARGE)
            self.linger()
            return
        super().handle_events()

    def _headers_too_large(self) -> bool:
        """The request waiting in h11's buffer has a request line and headers over the limit (or has
        not ended them within it)."""
        buffered = self.conn.trailing_data[0]
        end = _HEADERS_END.search(buffered, 0, MAX_HEADER_BYTES + 4)
        size = end.end() if end is not None else len(buffered)
        return size > MAX_HEADER_BYTES

    def client_still_sending(self) -> bool:
        """The client is in the middle of sending a request's body."""
        return self.conn.their_state is h11.SEND_BODY

    def linger(self) -> None:
        """Half-close after the answer written so far, and read and drop what the client still sends
        until it closes, `LINGER_BYTES` have come, or `LINGER_S` have passed; then close."""
        raw = self._raw_transport
        if self._lingering is not None or raw.is_closing():
            return
        self._disarm()
        self._lingering = self.loop.call_later(LINGER_S, self._close_now)
        raw.resume_reading()
        if raw.can_write_eof():
            raw.write_eof()

    def eof_received(self) -> None:
        if self._lingering is not None:
            self._close_now()
            return
        super().eof_received()

    def _close_now(self) -> None:
        if self._lingering is not None:
            self._lingering.cancel()
        self._raw_transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:  # the next request's headers start now
            self._arm()
        else:
            self._disarm()  # a pipelined request was already read

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
        if self._lingering is not None:
            self._lingering.cancel()

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
        self._raw_transport.close()  # a slow client gets no lingering


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
