"""When to retry a GitHub request and how long to wait first (pure: no I/O, no sleeping).

- 5xx answers, timeouts and dropped connections: retry with exponential backoff.
- The primary rate limit (403/429 with `x-ratelimit-remaining: 0`): wait for `x-ratelimit-reset`
  when it is at most `rate_limit_wait` seconds away, otherwise give up with RateLimited so the
  round can finish as INCOMPLETE and say when to try again.
- A secondary rate limit (403/429 with `retry-after`, or GitHub's secondary-limit message):
  wait `retry-after` seconds (GitHub: otherwise at least a minute).
- 401 with credentials that can be renewed (an App installation token: it expires after an hour, and
  GitHub may revoke it early): renew the token and send the request again, once. A 401 is an answer,
  so the refused request had no effect and sending it again cannot duplicate a write.
- Anything else (401 with a fixed token, 404, 422, ...) is not retried: the request itself is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Failure", "Decision", "decide", "backoff", "describe", "errors_of"]

_SECONDARY = re.compile(
    r"secondary rate limit|please retry your request again later|wait a few minutes", re.I
)
_PRIMARY = re.compile(r"^api rate limit exceeded", re.I)
SECONDARY_DEFAULT_WAIT = 60.0


@dataclass(frozen=True)
class Failure:
    """What went wrong with one attempt: an HTTP answer (status, headers, body) or a transport error."""

    status: int | None  # None: no answer (timeout, connection reset)
    headers: Mapping[str, str]
    message: str = ""

    @classmethod
    def of_answer(cls, status: int, headers: Mapping[str, Any] | None, data: Any) -> Failure:
        lowered = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
        message = data.get("message", "") if isinstance(data, dict) else str(data or "")
        details = errors_of(data)
        if details:  # GitHub's reasons (a 422's "Unprocessable Entity" alone says nothing)
            message = f"{message} ({'; '.join(details)})" if message else "; ".join(details)
        return cls(status, lowered, str(message))


def errors_of(data: Any) -> list[str]:
    """GitHub's `errors[]` of an error answer as text: strings, or objects with `message` or
    `resource`/`field`/`code` (REST API "Client errors")."""
    items = data.get("errors") if isinstance(data, dict) else None
    out: list[str] = []
    for e in items if isinstance(items, list) else ():
        if isinstance(e, dict):
            text = e.get("message") or " ".join(str(e[k]) for k in ("resource", "field", "code") if e.get(k))
            out.append(str(text))
        elif e:
            out.append(str(e))
    return [" ".join(t.split())[:300] for t in out if t]


@dataclass(frozen=True)
class Decision:
    kind: str  # "retry" | "renew" (new credentials, then retry at once) | "rate_limited" | "fail"
    wait: float = 0.0
    reason: str = ""
    reset_at: float | None = None  # epoch seconds, for "rate_limited"


def backoff(attempt: int, base: float, cap: float) -> float:
    """Seconds before retry number `attempt` (1 = the first retry): base, 2*base, 4*base ... <= cap."""
    return float(min(cap, base * (2 ** max(attempt - 1, 0))))


def _number(headers: Mapping[str, str], key: str) -> float | None:
    try:
        return float(headers[key])
    except (KeyError, ValueError):
        return None


def decide(
    failure: Failure,
    attempt: int,
    *,
    now: float,
    max_attempts: int,
    backoff_base: float,
    backoff_max: float,
    rate_limit_wait: float,
    secondary_wait_max: float,
    renewable: bool = False,
) -> Decision:
    """What to do after attempt number `attempt` (1-based) failed with `failure`.

    `renewable`: the credentials can still be renewed for this request (the caller renews once).
    """
    status, headers = failure.status, failure.headers
    last = attempt >= max_attempts
    if status == 401 and renewable:
        return Decision("renew", 0.0, f"credentials refused ({failure.message or 'HTTP 401'}); renewing them")
    if status in (403, 429):
        remaining = headers.get("x-ratelimit-remaining")
        retry_after = _number(headers, "retry-after")
        reset = _number(headers, "x-ratelimit-reset")
        if retry_after is not None or _SECONDARY.search(failure.message):
            wait = retry_after if retry_after is not None else SECONDARY_DEFAULT_WAIT
            if wait > secondary_wait_max or last:
                return Decision("rate_limited", wait, "secondary rate limit", now + wait)
            return Decision("retry", max(wait, 0.0), f"secondary rate limit; retry-after {wait:g}s")
        if remaining == "0" or _PRIMARY.search(failure.message):
            wait = max((reset - now) + 1.0, 0.0) if reset is not None else SECONDARY_DEFAULT_WAIT
            if wait > rate_limit_wait or last:
                return Decision("rate_limited", wait, "primary rate limit exhausted", reset)
            return Decision("retry", wait, f"primary rate limit; reset in {wait:.0f}s")
        if status == 429:
            if last:
                return Decision("rate_limited", SECONDARY_DEFAULT_WAIT, "too many requests", now + 60)
            return Decision("retry", SECONDARY_DEFAULT_WAIT, "too many requests")
        return Decision("fail", reason=failure.message or f"HTTP {status}")
    if status is None or status >= 500:
        what = "no answer" if status is None else f"HTTP {status}"
        if last:
            return Decision("fail", reason=f"{what} after {attempt} attempts")
        return Decision("retry", backoff(attempt, backoff_base, backoff_max), what)
    return Decision("fail", reason=failure.message or f"HTTP {status}")


def describe(failure: Failure) -> str:
    """One line for logs and errors (never headers: they may echo credentials)."""
    if failure.status is None:
        return failure.message or "no answer"
    return f"HTTP {failure.status}: {failure.message}" if failure.message else f"HTTP {failure.status}"
