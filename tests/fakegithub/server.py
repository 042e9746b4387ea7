"""The HTTP side of the fake: routing, authentication, rate limits, faults, pagination, the log.

Built on the standard library's ThreadingHTTPServer (no extra dependency, one thread per
connection, HTTP/1.1 keep-alive so PyGithub's connection pool behaves as against GitHub). The
API is served under `/api/v3`, the GitHub Enterprise Server layout, so clients must honour a
custom `--api-url` prefix exactly as they would on GHES.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt

from tests.fakegithub.faults import Fault, FaultPlan
from tests.fakegithub.graphql import GraphQLHandlers, is_mutation
from tests.fakegithub.handlers import Handlers
from tests.fakegithub.handlers_base import Problem, Reply, Request
from tests.fakegithub.state import RateWindow, Token, World

__all__ = ["Server", "RequestRecord", "Options", "PREFIX"]

PREFIX = "/api/v3"
GRAPHQL_PATH = "/api/graphql"  # where PyGithub (and GHES) put GraphQL for an API URL ending in /api/v3
_PRIMARY_DOC = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"
_SECONDARY_DOC = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
_REASONS = {
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass(frozen=True)
class RequestRecord:
    """One request as the fake saw it (faulted ones included)."""

    method: str
    path: str  # without the /api/v3 prefix and the query
    query: str
    operation: str
    status: int
    fault: str | None
    body: Any = field(repr=False)
    response: Any = field(repr=False)
    auth: str  # "token", "jwt" or "" (anonymous)

    @property
    def write(self) -> bool:
        if self.operation == "graphql/query":
            return False  # a POST that changes nothing
        return self.method in ("POST", "PATCH", "PUT", "DELETE")


@dataclass
class Options:
    patch_limit: int = 500_000  # bytes; bigger per-file patches are left out of `files`
    allow_pat_check_runs: bool = False  # GitHub only lets Apps (and the Actions token) create check runs
    installation_token_ttl: int = 3600
    rate_limit: int = 5000
    request_validator: Callable[[str, Any], list[str]] | None = None  # (operation, body) -> errors

    def new_rate(self) -> RateWindow:
        return RateWindow(limit=self.rate_limit)


def _compile(template: str) -> re.Pattern[str]:
    out = ""
    for part in re.split(r"(\{[^}]+\})", template):
        if part.startswith("{"):
            name = part[1:-1]
            out += f"(?P<{name[:-1]}>.+)" if name.endswith("+") else f"(?P<{name}>[^/]+)"
        else:
            out += re.escape(part)
    return re.compile(f"^{out}$")


class Server:
    """Owns the socket, the routes and the log; FakeGitHub wraps it with seeding helpers."""

    def __init__(self, world: World, urls_factory: Callable[[str, str], Any], options: Options) -> None:
        self.world = world
        self.options = options
        self.faults = FaultPlan()
        self.log: list[RequestRecord] = []
        self._log_lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.httpd.daemon_threads = True
        port = self.httpd.server_address[1]
        self.web_url = f"http://127.0.0.1:{port}"
        self.api_url = f"{self.web_url}{PREFIX}"
        self.urls = urls_factory(self.api_url, self.web_url)
        self.handlers = Handlers(world, self.urls, options)
        self.graphql = GraphQLHandlers(world, self.urls, options)  # served at /api/graphql, as on GHES
        routes = [*self.handlers.routes(), ("POST", "/graphql", "graphql", self.graphql.graphql, "token")]
        self.routes = [(m, _compile(t), op, fn, auth) for m, t, op, fn, auth in routes]
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="fakegithub", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @staticmethod
    def api_path(raw: str) -> str | None:
        """The path of an API request without the prefix; None when it is not one."""
        if raw == GRAPHQL_PATH:
            return "/graphql"  # GHES serves GraphQL beside the REST prefix, not under it
        return raw[len(PREFIX) :] if raw.startswith(PREFIX) else None

    def record(self, rec: RequestRecord) -> None:
        with self._log_lock:
            self.log.append(rec)

    # --- the request pipeline: route -> auth -> fault -> rate limit -> handler -> page -------
    def route(self, method: str, path: str, body: Any = None) -> tuple[str, Any, dict[str, str], str] | None:
        """(operation, handler, path parameters, auth) of a request. GraphQL's one endpoint is two
        operations, `graphql/query` and `graphql/mutation`, so that faults and the log tell them apart."""
        for m, rx, op, fn, auth in self.routes:
            if m == method and (match := rx.match(path)):
                params = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
                if op == "graphql":
                    op = "graphql/mutation" if is_mutation(body) else "graphql/query"
                return op, fn, params, auth
        return None

    def authenticate(self, header: str, need: str) -> tuple[Token | None, int | None, str]:
        scheme, _, value = header.partition(" ")
        scheme = scheme.lower()
        if scheme == "bearer" and value.count(".") == 2:
            return None, self._verify_jwt(value), "jwt"
        if need == "jwt":
            raise Problem(401, "A JSON web token could not be decoded")
        if scheme in ("token", "bearer") and value:
            tok = self.world.tokens.get(value)
            if tok is None:
                raise Problem(401, "Bad credentials")
            if tok.expires_at is not None and tok.expires_at <= time.time():
                raise Problem(401, "Bad credentials")
            return tok, None, "token"
        if need == "token":
            raise Problem(401, "Requires authentication")
        return None, None, ""

    def _verify_jwt(self, token: str) -> int:
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
            app = self.world.apps.get(int(claims["iss"]))
        except (jwt.PyJWTError, KeyError, TypeError, ValueError) as exc:
            raise Problem(401, "A JSON web token could not be decoded") from exc
        if app is None:
            raise Problem(401, "A JSON web token could not be decoded")
        try:
            claims = jwt.decode(
                token, app.public_key_pem, algorithms=["RS256"], options={"require": ["exp", "iat", "iss"]}
            )
        except jwt.ExpiredSignatureError as exc:
            raise Problem(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the future time "
                "at which the assertion expires",
            ) from exc
        except jwt.PyJWTError as exc:
            raise Problem(401, "A JSON web token could not be decoded") from exc
        if claims["exp"] - claims["iat"] > 660:
            raise Problem(401, "'Expiration time' claim ('exp') is too far in the future")
        return app.id

    def expire(self, token: Token | None) -> None:
        """`token` expires now; the request carrying it is refused like any with an expired token."""
        if token is not None:
            token.expires_at = time.time()
        raise Problem(401, "Bad credentials")

    def revoke(self, kind: str, token: Token | None) -> None:
        """The request's token stops working now: it expires (`token_expiry`), or its installation
        is replaced by a new one (`reinstall`: the App uninstalled and installed again)."""
        if kind == "token_expiry":
            self.expire(token)
        if token is not None and token.installation_id in self.world.installations:
            self.world.reinstall(token.installation_id)
        raise Problem(401, "Bad credentials")

    def rate_window(self, token: Token | None) -> RateWindow:
        window = self.world.rates.setdefault(token.value if token else "", self.options.new_rate())
        window.roll(time.time())
        return window

    def rate_headers(self, window: RateWindow) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(window.limit),
            "x-ratelimit-remaining": str(window.remaining),
            "x-ratelimit-used": str(window.used),
            "x-ratelimit-reset": str(int(window.reset)),
            "x-ratelimit-resource": "core",
        }

    def apply_fault(self, fault: Fault, window: RateWindow) -> Reply | None:
        if fault.kind == "delay":
            return None  # the server slept already; the request is handled normally
        if fault.kind == "status":
            reason = _REASONS.get(fault.status, "Server Error")
            return Reply(
                fault.status, {"message": reason, "documentation_url": "https://docs.github.com/rest"}
            )
        if fault.kind == "primary_rate_limit":
            window.used = window.limit
            window.reset = time.time() + fault.reset_in
            return None  # the exhausted window answers below, for this and later requests
        message = (
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
            "If you reach out to GitHub Support for help, please include the request ID."
        )
        headers = {} if fault.retry_after is None else {"retry-after": str(fault.retry_after)}
        return Reply(fault.status, {"message": message, "documentation_url": _SECONDARY_DOC}, headers)

    def primary_limited(self, window: RateWindow, token: Token | None) -> Reply | None:
        if window.remaining > 0:
            window.used += 1
            return None
        who = f"user ID {self.world.user(token.login).id}" if token else "your IP address"
        body = {
            "message": f"API rate limit exceeded for {who}. If you reach out to GitHub Support for help, "
            "please include the request ID.",
            "documentation_url": _PRIMARY_DOC,
        }
        return Reply(403, body)

    def page(self, reply: Reply, path: str, query: dict[str, str]) -> Reply:
        items = reply.body
        try:
            per_page = min(max(int(query.get("per_page", 30)), 1), 100)
            page = max(int(query.get("page", 1)), 1)
        except ValueError as exc:
            raise Problem(422, "Validation Failed", [{"code": "invalid", "field": "per_page"}]) from exc
        last = max((len(items) + per_page - 1) // per_page, 1)
        reply.body = items[(page - 1) * per_page : page * per_page]
        if last > 1:

            def link(n: int, rel: str) -> str:
                q = urllib.parse.urlencode({**query, "per_page": per_page, "page": n})
                return f'<{self.api_url}{path}?{q}>; rel="{rel}"'

            rels = []
            if page < last:
                rels += [link(page + 1, "next"), link(last, "last")]
            if page > 1:
                rels += [link(1, "first"), link(page - 1, "prev")]
            reply.headers["link"] = ", ".join(rels)
        return reply


def _make_handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            return  # the structured log in Server.log replaces stderr noise

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def do_PATCH(self) -> None:
            self._serve()

        def do_PUT(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:
            self._serve()

        def _serve(self) -> None:
            split = urllib.parse.urlsplit(self.path)
            path = server.api_path(split.path)
            query = dict(urllib.parse.parse_qsl(split.query))
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", errors="replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            fault_name: str | None = None
            operation, auth_kind = "unknown", ""
            extra: dict[str, str] = {}
            fault = None
            try:
                with server.world.lock:
                    found = server.route(self.command, path, body) if path is not None else None
                    if found is None:
                        raise Problem(404, "Not Found")
                    operation, fn, params, need = found
                    token, app_id, auth_kind = server.authenticate(headers.get("authorization", ""), need)
                    fault = server.faults.pick(operation, self.command)
                    if fault is not None and fault.kind in ("token_expiry", "reinstall"):
                        fault_name = fault.kind
                        server.revoke(fault.kind, token)
                if fault is not None and fault.kind == "disconnect":
                    server.record(
                        RequestRecord(
                            self.command,
                            path or "",
                            split.query,
                            operation,
                            0,
                            "disconnect",
                            body,
                            None,
                            auth_kind,
                        )
                    )
                    self.close_connection = True
                    return
                if fault is not None and fault.kind == "delay" and fault.when == "before":
                    time.sleep(fault.delay)  # outside the lock: other requests go on meanwhile
                fault_name = fault.kind if fault is not None else None
                with server.world.lock:
                    window = server.rate_window(token)
                    reply = server.apply_fault(fault, window) if fault is not None else None
                    if reply is None:
                        reply = server.primary_limited(window, token)
                        if reply is not None and fault_name is None:
                            fault_name = "primary_rate_limit"
                    if reply is None and server.options.request_validator and body is not None:
                        problems = server.options.request_validator(operation, body)
                        if problems:
                            raise Problem(422, "Invalid request.\n\n" + "\n".join(problems))
                    if reply is None:
                        req = Request(self.command, operation, params, query, headers, body, token, app_id)
                        reply = fn(req)
                        if reply.paginate:
                            reply = server.page(reply, path or "", query)
                    extra = server.rate_headers(window)
            except Problem as problem:
                reply = Reply(problem.status, problem.body)
            # Logged when handled: a late answer (below) does not hide that the request took effect.
            server.record(
                RequestRecord(
                    self.command,
                    path or self.path,
                    split.query,
                    operation,
                    reply.status,
                    fault_name,
                    body,
                    reply.body,
                    auth_kind,
                )
            )
            if fault is not None and fault.kind == "delay" and fault.when == "after":
                time.sleep(fault.delay)  # handled already: only the answer is late
            # A client that gave up waiting closed the socket; the request was handled all the same.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(reply, extra)

        def _send(self, reply: Reply, extra: dict[str, str]) -> None:
            if reply.body is None:
                data = b""
            elif isinstance(reply.body, str):
                data = reply.body.encode()
            else:
                data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-github-request-id", uuid.uuid4().hex[:16].upper())
            self.send_header("x-github-media-type", "github.v3; format=json")
            for k, v in {**extra, **reply.headers}.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    return Handler
