"""JSON as `json.loads` gives it, before anything has checked its shape.

Only a boundary holds a `JSONValue` (a webhook body, an API answer, a file read back): the code there
checks it and turns it into a typed record (a dataclass, or a TypedDict of the fields reviewbot
reads) before the rest of reviewbot sees it.
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JSONObject", "JSONValue"]

JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"
