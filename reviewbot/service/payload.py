"""A signed delivery's body, checked against the shape reviewbot reads before anything acts on it.

A valid signature proves the sender knows the secret, not that the JSON is sane: a bug, a replay
tool or a leaked secret can sign anything. So the body is parsed with bounds (no `NaN`/`Infinity`,
at most `MAX_DEPTH` levels, Python's own nesting limit turned into a refusal) and every field
reviewbot uses is read through a typed accessor that checks type and range (`integer`, `text`,
`obj`, ...). Whatever fails is a `MalformedPayload` whose message names the field and what was
wrong, in one line: the server answers 400 with it, never 500.
"""

from __future__ import annotations

import json
import math
import re
import urllib.parse
from typing import NoReturn

from reviewbot.errors import ReviewbotError
from reviewbot.model.jsonvalue import JSONObject, JSONValue

__all__ = [
    "MAX_DEPTH",
    "MalformedPayload",
    "parse_body",
    "depth",
    "obj",
    "optional_obj",
    "as_integer",
    "integer",
    "optional_integer",
    "text",
    "optional_text",
    "flag",
    "items",
    "REPOSITORY",
    "SHA",
    "LOGIN",
    "TOKEN",
    "TIMESTAMP",
]

# GitHub's payloads nest about eight levels deep; anything far deeper is not from GitHub.
MAX_DEPTH = 32
INT32 = 2**31 - 1
INT64 = 2**63 - 1

REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
TOKEN = re.compile(r"[a-z_]{1,64}")  # event names, actions, states, associations (lower-cased)
TIMESTAMP = re.compile(r"[0-9T:.+Z-]{10,40}")


class MalformedPayload(ReviewbotError):
    """A signed delivery whose JSON is not what its event carries (the server answers 400)."""

    exit_code = 2


def _kind(value: JSONValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number" if math.isfinite(value) else "an infinite number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def depth(value: JSONValue, limit: int = MAX_DEPTH) -> int:
    """How deeply `value` nests (a scalar: 0), counted without recursion up to `limit` + 1."""
    deepest = 0
    stack: list[tuple[JSONValue, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            level += 1
            deepest = max(deepest, level)
            if level > limit:
                return level
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, level) for child in children if isinstance(child, dict | list))
    return deepest


def parse_body(body: bytes, content_type: str) -> JSONObject:
    """The payload object: JSON, or the `payload` field of a form-encoded delivery (a webhook setting)."""
    try:
        if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            fields = urllib.parse.parse_qs(body.decode("utf-8"), strict_parsing=False)
            if "payload" not in fields:
                raise MalformedPayload("the form-encoded delivery has no payload field")
            raw: str | bytes = fields["payload"][0]
        else:
            raw = body
        payload: JSONValue = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise MalformedPayload(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a 5,000-digit number, NaN
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise MalformedPayload(f"the body is not valid JSON ({reason})") from None
    if not isinstance(payload, dict):
        raise MalformedPayload(f"the payload is {_kind(payload)}, not a JSON object")
    if depth(payload) > MAX_DEPTH:
        raise MalformedPayload(f"the payload nests deeper than {MAX_DEPTH} levels")
    return payload


def _node(payload: JSONObject, path: str) -> tuple[bool, JSONValue]:
    node: JSONValue = payload
    for key in path.split("."):
        if not isinstance(node, dict):
            raise MalformedPayload(f"{path}: {key!r} is inside {_kind(node)}, not an object")
        if key not in node:
            return False, None
        node = node[key]
    return True, node


def _required(payload: JSONObject, path: str) -> JSONValue:
    present, value = _node(payload, path)
    if not present:
        raise MalformedPayload(f"the payload has no {path}; is this delivery really from GitHub?")
    return value


def obj(payload: JSONObject, path: str) -> JSONObject:
    value = _required(payload, path)
    if not isinstance(value, dict):
        raise MalformedPayload(f"{path} must be an object, not {_kind(value)}")
    return value


def optional_obj(payload: JSONObject, path: str) -> JSONObject | None:
    present, value = _node(payload, path)
    if not present or value is None:
        return None
    if not isinstance(value, dict):
        raise MalformedPayload(f"{path} must be an object or null, not {_kind(value)}")
    return value


def _int(path: str, value: JSONValue, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedPayload(f"{path} must be an integer, not {_kind(value)}")
    if not lo <= value <= hi:
        raise MalformedPayload(
            f"{path} must be between {lo} and {hi}, not {value if abs(value) < 10**20 else '…'}"
        )
    return value


def as_integer(path: str, value: JSONValue, lo: int = 1, hi: int = INT32) -> int:
    """`value` (found at `path`) as an integer in [lo, hi]."""
    return _int(path, value, lo, hi)


def integer(payload: JSONObject, path: str, lo: int = 1, hi: int = INT32) -> int:
    """A required integer in [lo, hi] (default: a positive 32-bit one, as PR numbers are)."""
    return _int(path, _required(payload, path), lo, hi)


def optional_integer(payload: JSONObject, path: str, lo: int = 1, hi: int = INT64) -> int | None:
    present, value = _node(payload, path)
    return None if not present or value is None else _int(path, value, lo, hi)


def _text(path: str, value: JSONValue, limit: int, pattern: re.Pattern[str] | None) -> str:
    if not isinstance(value, str):
        raise MalformedPayload(f"{path} must be a string, not {_kind(value)}")
    if len(value) > limit:
        raise MalformedPayload(f"{path} is longer than {limit} characters")
    if pattern is not None and not pattern.fullmatch(value):
        raise MalformedPayload(f"{path} is not a valid value for it")
    return value


def text(payload: JSONObject, path: str, limit: int = 256, pattern: re.Pattern[str] | None = None) -> str:
    return _text(path, _required(payload, path), limit, pattern)


def optional_text(
    payload: JSONObject, path: str, limit: int = 256, pattern: re.Pattern[str] | None = None
) -> str | None:
    present, value = _node(payload, path)
    return None if not present or value is None else _text(path, value, limit, pattern)


def flag(payload: JSONObject, path: str) -> bool:
    """An optional boolean (absent or null: False)."""
    present, value = _node(payload, path)
    if not present or value is None:
        return False
    if not isinstance(value, bool):
        raise MalformedPayload(f"{path} must be true or false, not {_kind(value)}")
    return value


def items(payload: JSONObject, path: str, limit: int = 100) -> list[JSONValue]:
    """An optional list of at most `limit` items (absent or null: empty)."""
    present, value = _node(payload, path)
    if not present or value is None:
        return []
    if not isinstance(value, list):
        raise MalformedPayload(f"{path} must be a list, not {_kind(value)}")
    if len(value) > limit:
        raise MalformedPayload(f"{path} holds more than {limit} items")
    return value
