"""Small helpers shared by check modules: places, identifiers, and (re-exported) the text helpers and the
analysis of who a write belongs to."""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence

from reviewbot.analysis.derive import assignment_anchor

# The text helpers and the analysis of who a write belongs to live below the rules (analysis.text,
# analysis.writes.owners); the rules import them from here as they always did.
from reviewbot.analysis.text import clip, is_vendored, short_function, snake
from reviewbot.analysis.writes.owners import (
    bound_owners,
    class_of,
    field_owner,
    is_builder,
    is_constructor,
    is_pickling,
    mentions_field,
    moved_from_elsewhere,
    moved_unchanged,
    moved_writes,
    narrowed_from_base,
    owners_of,
    receiver_of,
    receiver_only_edit,
    rederives_itself,
    statement,
    writers_on,
)

__all__ = [
    "beside_package",
    "place",
    "short_function",
    "backtick",
    "assignment_anchor",
    "clip",
    "places",
    "is_vendored",
    "identifier",
    "class_of",
    "is_constructor",
    "is_pickling",
    "is_builder",
    "receiver_of",
    "statement",
    "owners_of",
    "mentions_field",
    "rederives_itself",
    "snake",
    "bound_owners",
    "field_owner",
    "writers_on",
    "moved_unchanged",
    "narrowed_from_base",
    "moved_writes",
    "moved_from_elsewhere",
    "receiver_only_edit",
    "MAX_EVIDENCE",
    "MAX_TITLE",
]

MAX_EVIDENCE = 3  # evidence lines per finding: a maintainer reads three lines, not thirty
MAX_TITLE = 160  # characters of a finding's title


# Top-level folders of scripts that ship beside the package, not in it (CI folders start with a dot).
_SCRIPTS = frozenset({"benchmark", "benchmarks", "examples", "tools", "scripts", "buildkite", "github"})


def beside_package(path: str) -> bool:
    """A benchmark, example, tool or CI script: what fails there fails for its own user only."""
    return path.split("/", 1)[0].lstrip(".") in _SCRIPTS


def place(path: str, line: int) -> str:
    return f"{path}:{line}"


def backtick(text: str) -> str:
    return f"`{text}`"


def places(items: Sequence[str], shown: int = 3) -> str:
    """`a, b, c and 4 more`: the first `shown` items and a count of the rest (items already ordered)."""
    head = ", ".join(items[:shown])
    rest = len(items) - shown
    return f"{head} and {rest} more" if rest > 0 else head


def identifier(text: str, fallback: str = "value") -> str:
    """A snake_case identifier made of the words of `text`: no doubled or edge underscores, not a
    keyword, not starting with a digit. `!foo.empty()` -> `foo_empty`; `` -> `fallback`."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", text) if w]
    name = "_".join(words)
    if not name:
        name = fallback
    if name[0].isdigit():
        name = f"v_{name}"
    if keyword.iskeyword(name) or name in ("True", "False", "None"):
        name = f"{name}_"
    return name


# A test of the platform or of what is installed: `is_cuda_available()`, `is_hip()`, `torch.cuda.is_available()`,
# `flash_attn_available()`, `HAS_TRITON`, `sm_version >= 90`, `is_sm100_supported()`.
_PLATFORM = re.compile(
    r"(?i)^!?\s*(?:not\s+)?(?:[\w.]+\.)?(?:is_\w*(?:available|supported|cuda|hip|rocm|npu|xpu|mps|cpu|sm\d+\w*)"
    r"|\w*_available|\w*_supported)\s*(?:\(\s*\))?$|^!?\s*(?:not\s+)?HAS_[A-Z0-9_]+$"
)


def is_platform_atom(text: str) -> bool:
    """A guard atom that asks what the machine has or what is installed, not what is configured."""
    return _PLATFORM.match(text.strip()) is not None
