"""Every GitHub request of a round goes through here: counted, retried, rate-limit aware.

PyGithub builds the connection and the authentication (`Github(base_url=..., auth=...)`); this
module sends the requests through its Requester with PyGithub's own retries turned off, so that
each HTTP attempt is counted (reads and writes, for the KPI `api_calls`) and the retry policy of
reviewbot.github.resilience applies to all of them in one place.

A write that failed without a clear answer (timeout, dropped connection, 5xx) may still have
happened on GitHub's side, or may still happen: GitHub goes on with a request whose client gave up,
for up to its own 10 s limit. Before sending it again the caller's `reconcile` function looks for
it (for example the comment just created), again and again until `late_write_window` seconds after
the write was sent (the client's timeout plus GitHub's limit: GitHubSettings); only then is it sent
again. Every write that would add something twice (a
comment, a review, a check run, an annotation batch) is sent with one; the others are idempotent
(an edit, a token exchange, resolving a thread) and are simply sent again.

A 401 on a client with `renew` (App installation tokens) renews the token and sends the request
again, once per request: the token may have expired or been revoked while a long round ran.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypedDict, TypeVar

import requests
from github import GithubException
from github.Requester import Requester

from reviewbot.errors import GitHubError, RateLimited, UsageError
from reviewbot.github.pacing import WritePacer
from reviewbot.github.resilience import Decision, Failure, decide, describe
from reviewbot.github.settings import GitHubSettings
from reviewbot.model.jsonvalue import JSONValue

__all__ = ["ApiCounter", "ApiError", "ApiKpi", "GitHubClient", "Headers", "Unreachable"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
Headers: TypeAlias = dict[str, str]  # an answer's HTTP headers


class ApiError(GitHubError):
    """GitHub refused a request (not retryable): `status` and GitHub's message are kept."""

    def __init__(self, message: str, status: int | None, data: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.data = data


class Unreachable(ApiError):
    """No answer at all from GitHub, after the retries: no network, a wrong host or port, a proxy.

    A worker retries the job later (no status: not permanent); on the command line it is the user's
    environment to fix, so it exits 2 like any other environment problem."""

    exit_code = 2


def _named(method: str, label: str) -> str:
    """`label` as logs show it: with its method once (labels usually start with it)."""
    return label if label.startswith(f"{method} ") else f"{method} {label}"


class ApiKpi(TypedDict):
    """A round's API figures, as its KPI, its `--format json` output and the App's job show them."""

    api_calls: int
    api_reads: int
    api_writes: int
    api_retries: int
    api_auth_calls: int


@dataclass
class ApiCounter:
    """HTTP attempts of one round. `auth_calls` (App JWT and token exchange) are kept apart."""

    reads: int = 0
    writes: int = 0
    retries: int = 0
    auth_calls: int = 0
    waited_s: float = 0.0
    by_operation: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, method: str, label: str, *, auth: bool = False, read: bool | None = None) -> None:
        with self._lock:
            if auth:
                self.auth_calls += 1
            elif read if read is not None else method == "GET":
                self.reads += 1
            else:
                self.writes += 1
            self.by_operation[label] = self.by_operation.get(label, 0) + 1

    def count_retry(self, wait: float) -> None:
        with self._lock:
            self.retries += 1
            self.waited_s += wait

    @property
    def calls(self) -> int:
        return self.reads + self.writes

    def kpi(self) -> ApiKpi:
        return {
            "api_calls": self.calls,
            "api_reads": self.reads,
            "api_writes": self.writes,
            "api_retries": self.retries,
            "api_auth_calls": self.auth_calls,
        }


def _failure_of(exc: Exception) -> Failure | None:
    if isinstance(exc, GithubException):
        return Failure.of_answer(exc.status, exc.headers, exc.data)
    if isinstance(exc, requests.exceptions.RequestException):
        return Failure(None, {}, type(exc).__name__)
    return None


class GitHubClient:
    """Counted, retried requests through one PyGithub Requester."""

    def __init__(
        self,
        requester: Requester,
        settings: GitHubSettings,
        counter: ApiCounter,
        *,
        auth: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        renew: Callable[[], None] | None = None,
        pacer: WritePacer | None = None,
    ) -> None:
        self.requester = requester
        self.pacer = pacer  # spaces writes per installation across this host's workers
        self.renew = renew  # gets fresh credentials into `requester` after a 401
        self.settings = settings
        self.counter = counter
        self.auth = auth  # this client only does App authentication calls
        self._sleep = sleep
        self._clock = clock

    def _decide(self, failure: Failure, attempt: int, renewable: bool) -> Decision:
        s = self.settings
        return decide(
            failure,
            attempt,
            now=self._clock(),
            max_attempts=s.max_attempts,
            backoff_base=s.backoff_base,
            backoff_max=s.backoff_max,
            rate_limit_wait=s.rate_limit_wait,
            secondary_wait_max=s.secondary_wait_max,
            renewable=renewable,
        )

    def call(
        self,
        method: str,
        label: str,
        send: Callable[[], T],
        *,
        reconcile: Callable[[], T | None] | None = None,
        read: bool | None = None,
    ) -> T:
        """Run `send` (one HTTP request) under the retry policy; `label` names it in logs and counts.

        `read`: whether the request changes nothing (default: it is a GET). A GraphQL query is a
        POST that reads: counted as a read, and sent again after a failure without reconciling.
        """
        is_read = read if read is not None else method == "GET"
        attempt = 0
        renewed = False
        while True:
            attempt += 1
            if self.pacer is not None and not is_read:
                self.counter.waited_s += self.pacer.wait()
            self.counter.count(method, label, auth=self.auth, read=is_read)
            sent_at = self._clock()
            try:
                return send()
            except RuntimeError as exc:
                if "redirect" not in str(exc):
                    raise
                # PyGithub refuses a redirect to another scheme or host: the API URL is wrong
                # (http:// for an https:// server, a GHES URL without /api/v3), not a passing fault.
                raise UsageError(
                    f"GitHub redirected {label} elsewhere: {exc}; set the API URL (REVIEWBOT_API_URL) "
                    "to where the server answers (GitHub Enterprise Server: https://HOST/api/v3)"
                ) from exc
            except (GithubException, requests.exceptions.RequestException) as exc:
                failure = _failure_of(exc)
                assert failure is not None
                decision = self._decide(failure, attempt, self.renew is not None and not renewed)
                status, data = failure.status, getattr(exc, "data", None)
            ambiguous = not is_read and (status is None or status >= 500) and reconcile is not None
            if decision.kind == "renew" and self.renew is not None:
                log.warning("%s: %s", _named(method, label), decision.reason)
                renewed = True
                attempt -= 1  # the refused attempt was answered at once; it does not use up a retry
                self.counter.count_retry(0.0)
                self.renew()
                continue
            if decision.kind == "rate_limited":
                raise RateLimited(
                    f"GitHub's {decision.reason} stops {label}; try again after the reset "
                    f"(in about {max(decision.wait, 0):.0f}s)",
                    decision.reset_at,
                )
            if decision.kind == "fail":
                if ambiguous and reconcile is not None:
                    # The last attempt may still land: what it did counts, not how it was answered.
                    found = self._landed(method, label, reconcile, sent_at)
                    if found is not None:
                        return found
                if status is None:
                    raise Unreachable(
                        f"no answer from GitHub at {self.settings.api_url} to {label} "
                        f"({describe(failure)}, {attempt} attempts); check the network and the API URL "
                        "(--api-url, REVIEWBOT_API_URL)",
                        None,
                        data,
                    )
                raise ApiError(f"GitHub refused {label}: {describe(failure)}", status, data)
            # INFO, not WARNING: a retry that then succeeds is routine, and a command line that
            # ends in an error shows that error alone (-v shows the retries).
            log.info(
                "%s: %s; retrying in %.1fs (attempt %d)",
                _named(method, label),
                decision.reason,
                decision.wait,
                attempt,
            )
            self.counter.count_retry(decision.wait)
            self._sleep(decision.wait)
            if ambiguous and reconcile is not None:
                found = self._landed(method, label, reconcile, sent_at)
                if found is not None:
                    return found

    def _landed(self, method: str, label: str, reconcile: Callable[[], T | None], sent_at: float) -> T | None:
        """What an unanswered write did, looked up until it can no longer land (`late_write_window`
        after it was sent), every `reconcile_interval`; None: it did not land, send it again."""
        deadline = sent_at + self.settings.late_write_window
        looks = 0
        while True:
            looks += 1
            found = reconcile()
            if found is not None:
                log.info(
                    "%s %s reached GitHub despite the failure (found on look %d); not sending it again",
                    method,
                    label,
                    looks,
                )
                return found
            left = deadline - self._clock()
            if left <= 0:
                return None
            wait = min(self.settings.reconcile_interval, left)
            self.counter.waited_s += wait  # a look, not a send: no retry is counted
            self._sleep(wait)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[Headers, JSONValue]:
        """One attempt of one REST request, neither counted nor retried: `call` (or `request`) runs it."""
        out: tuple[Headers, JSONValue] = self.requester.requestJsonAndCheck(
            method,
            path,
            parameters=dict(params) if params else None,
            headers=dict(headers) if headers else None,
            input=body,
        )
        return out

    def request(
        self,
        method: str,
        path: str,
        *,
        label: str | None = None,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
        reconcile: Callable[[], tuple[Headers, JSONValue] | None] | None = None,
    ) -> tuple[Headers, JSONValue]:
        """One REST request (path relative to the API URL, or an absolute URL on the same host)."""

        def send() -> tuple[Headers, JSONValue]:
            return self.send(method, path, params=params, body=body, headers=headers)

        return self.call(method, label or f"{method} {path}", send, reconcile=reconcile)

    def paginate(
        self, path: str, *, label: str, params: Mapping[str, str | int] | None = None
    ) -> list[JSONValue]:
        """All items of a list endpoint: 100 per page, following the `link` header's rel="next"."""
        items: list[JSONValue] = []
        url: str | None = path
        query: dict[str, str | int] | None = {"per_page": 100, **(params or {})}
        while url is not None:
            headers, data = self.request("GET", url, label=label, params=query)
            if not isinstance(data, list):
                raise ApiError(f"GitHub answered {label} with something that is not a list", None, data)
            items.extend(data)
            match = _NEXT.search(str(headers.get("link", "")))
            url, query = (match.group(1), None) if match else (None, None)
        return items
