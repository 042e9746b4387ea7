"""The App's log: one line per webhook delivery and one per job outcome, as text or JSON lines.

`reviewbot serve` and `reviewbot worker` log at INFO by default (`-v` adds uvicorn's access log and
huey's per-task lines, `-vv` debug). `--log-format json` writes every record, the App's own and
uvicorn's and huey's alike, as one JSON object per line: `time` (UTC, ISO 8601), `level`, `logger`,
`message`, then the record's fields. The two lines an installer looks for carry fields of their own
(`delivery_line`, `job_line`):

- delivery: `event`, `action`, `repo`, `pr`, `delivery`, `result` (accepted | ignored | refused),
  `outcome` (queued, duplicate_round, bad_signature, ...), `status` (the HTTP answer), `reason`, `jobs`;
- job: `job`, `repo`, `pr`, `head`, `trigger`, `attempt`, `state` (done | skipped | retry | failed),
  `seconds`, `findings` (count) and `severities`, `api_calls` and `api` (by kind), `reason`.

The text form is the message alone, which says the same in a sentence.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime

__all__ = [
    "FORMATS",
    "JsonFormatter",
    "TEXT_FORMAT",
    "configure_logging",
    "delivery_line",
    "delivery_result",
    "job_line",
]

FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_FIELDS = "reviewbot_fields"  # the LogRecord attribute that carries a line's fields

# Record attributes that are not fields: the standard ones, and uvicorn's ANSI-coloured copy of its message.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",
}
# Loggers left at WARNING without -v: huey's per-task lines ("Executing ...": the job lines say more),
# alembic's list of its plugins at every start (its migration lines stay).
_QUIET = ("huey", "alembic.runtime.plugins")

# What a recorded delivery came to, as an installer reads it.
_ACCEPTED = frozenset({"queued", "cancelled", "ping"})


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, then the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        # A record's fields are whatever the caller passed: written with str() when not JSON.
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, _FIELDS, None)
        if isinstance(fields, Mapping):
            out.update(fields)
        for key, value in vars(record).items():  # `extra=` of other libraries (uvicorn's, huey's)
            if key not in _STANDARD and key != _FIELDS and not key.startswith("_") and key not in out:
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_logging(log_format: str = "text", verbose: int = 0) -> None:
    """Log at INFO at least, in `log_format` ("text" or "json"), on the root logger's handlers (the
    CLI's stderr handler; one is added when there is none). Without `-v`, `_QUIET`'s loggers say
    only warnings."""
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler(sys.stderr))
    for handler in root.handlers:
        handler.setFormatter(formatter)
    if root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)


def delivery_result(outcome: str, status: int) -> str:
    """accepted (a job queued, a close applied, a ping answered), ignored, or refused (not 2xx)."""
    if status >= 300:
        return "refused"
    return "accepted" if outcome in _ACCEPTED else "ignored"


def delivery_line(
    log: logging.Logger,
    *,
    delivery: str | None,
    event: str | None,
    status: int,
    outcome: str,
    reason: str,
    action: str | None = None,
    repo: str | None = None,
    pr: int | None = None,
    jobs: tuple[int, ...] = (),
    level: int = logging.INFO,
) -> None:
    """The line of one webhook delivery, e.g. `delivery 72d3…: pull_request.opened acme/x#7:
    accepted (202 queued): job 3 queued for acme/x#7`."""
    result = delivery_result(outcome, status)
    what = (event or "?") + (f".{action}" if action else "")
    if repo:
        what += f" {repo}" + (f"#{pr}" if pr is not None else "")
    fields = {
        "kind": "delivery",
        "delivery": delivery,
        "event": event,
        "action": action,
        "repo": repo,
        "pr": pr,
        "result": result,
        "outcome": outcome,
        "status": status,
        "reason": reason,
        "jobs": list(jobs),
    }
    log.log(
        level,
        "delivery %s: %s: %s (%d %s): %s",
        delivery or "-",
        what,
        result,
        status,
        outcome,
        reason,
        extra={_FIELDS: fields},
    )


def job_line(
    log: logging.Logger,
    *,
    job: int,
    repo: str,
    pr: int,
    head: str | None,
    trigger: str,
    attempt: int,
    state: str,
    seconds: float,
    reason: str,
    severities: Mapping[str, int] | None = None,
    api: Mapping[str, int] | None = None,
    level: int = logging.INFO,
) -> None:
    """The line of one job's outcome, e.g. `job 3 acme/x#7: done in 4.2s, 6 findings (P1 1, P2 3,
    P3 2), 14 API calls (read 10, write 3, auth 1): round 1 published: BLOCKING, head 0a1b2c3d4e5f`."""
    findings = sum(severities.values()) if severities is not None else None
    calls = sum(api.values()) if api else None
    parts = [f"{state} in {seconds:.1f}s"]
    if severities is not None:
        counts = ", ".join(f"{k} {v}" for k, v in severities.items() if v)
        parts.append(f"{findings} finding(s)" + (f" ({counts})" if counts else ""))
    if api:
        kinds = ", ".join(f"{k} {v}" for k, v in api.items() if v)
        parts.append(f"{calls} API call(s)" + (f" ({kinds})" if kinds else ""))
    fields = {
        "kind": "job",
        "job": job,
        "repo": repo,
        "pr": pr,
        "head": head,
        "trigger": trigger,
        "attempt": attempt,
        "state": state,
        "seconds": round(seconds, 3),
        "findings": findings,
        "severities": dict(severities) if severities is not None else None,
        "api_calls": calls,
        "api": dict(api) if api else None,
        "reason": reason,
    }
    log.log(level, "job %d %s#%d: %s: %s", job, repo, pr, ", ".join(parts), reason, extra={_FIELDS: fields})
