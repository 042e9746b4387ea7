"""Scriptable failures: status codes, delays, primary and secondary rate limits, per endpoint.

A `Fault` matches requests by operation id (the OpenAPI `operationId`, e.g.
`issues/create-comment`; `graphql/query` or `graphql/mutation` for GraphQL; or `*`) and optionally by method. It fires `times` times — for each
endpoint separately when `per_endpoint` is true, so "one 502 on every endpoint" is one rule.
Rules are tried in the order they were added; the first one with budget left fires.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = ["Fault", "FaultPlan"]

KINDS = (
    "status",
    "delay",
    "primary_rate_limit",
    "secondary_rate_limit",
    "disconnect",
    "token_expiry",
    "reinstall",
)


@dataclass
class Fault:
    """One scripted failure.

    kind:
      status               answer `status` with a GitHub-style error body, do nothing else
      delay                sleep `delay` seconds and handle the request normally: before handling it
                           (`when="before"`) or after, before answering (`when="after"`: the write
                           happened, but a client that timed out does not know it)
      primary_rate_limit   403 (or `status` 429) with x-ratelimit-remaining 0 and a reset `reset_in` s away
      secondary_rate_limit 403/429 with the secondary-limit message and `retry-after` (None = no header)
      disconnect           close the connection without an answer
      token_expiry         the request's token expires now: this request and every later one with it
                           answer 401 `Bad credentials` (an installation token outlived by a long round)
      reinstall            the App is uninstalled and installed again now (World.reinstall): the
                           request's token is gone (401), its installation id answers 404, a new
                           installation with a new id covers the same repositories
    """

    kind: str = "status"
    status: int = 502
    operation: str = "*"
    method: str | None = None
    times: int = 1
    per_endpoint: bool = True
    delay: float = 0.0
    when: str = "before"  # delay: "before" or "after" handling the request
    retry_after: int | None = 1
    reset_in: int = 3600
    fired: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; use one of {KINDS}")
        if self.kind in ("primary_rate_limit", "secondary_rate_limit") and self.status not in (403, 429):
            self.status = 403

    def matches(self, operation: str, method: str) -> bool:
        if self.operation not in ("*", operation):
            return False
        return self.method is None or self.method.upper() == method.upper()

    def take(self, operation: str) -> bool:
        key = operation if self.per_endpoint else "*"
        if self.fired.get(key, 0) >= self.times:
            return False
        self.fired[key] = self.fired.get(key, 0) + 1
        return True

    @property
    def total_fired(self) -> int:
        return sum(self.fired.values())


class FaultPlan:
    """The ordered fault rules of one fake server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rules: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.rules.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def pick(self, operation: str, method: str) -> Fault | None:
        with self._lock:
            for rule in self.rules:
                if rule.matches(operation, method) and rule.take(operation):
                    return rule
        return None
