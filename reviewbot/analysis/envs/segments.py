"""A new environment name that is another name of the repository with one extra word, read for the same
purpose (pure, apart from searching the head tree).

Code copied from a sibling project keeps that project's variable: `MEGATRON_BRIDGE_LOGGING_LEVEL` read into
`env_logging_level`, where the repository reads `MEGATRON_LOGGING_LEVEL` into `env_logging_level`. The
name is more than one letter away, so `one_edit` misses it; what makes it a slip rather than a new
variable is that the repository's name, one `_`-separated word shorter, is read elsewhere into a local
of the same name: the same value under another spelling. A longer name read into another local
(`VLLM_ROCM_USE_AITER_MOE` beside `VLLM_ROCM_USE_AITER`) is a new variable and is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviewbot.lang.env import is_env_name
from reviewbot.model.change import RepoTree

__all__ = ["SegmentCopy", "segment_copies"]

_MAX_FILES = 40


@dataclass(frozen=True)
class SegmentCopy:
    name: str  # the change's name
    other: str  # the repository's name, one word shorter
    word: str  # the extra word
    target: str  # the local both are read into
    places: tuple[tuple[str, int, str], ...]  # where the repository reads `other` into `target`


def _shorter(name: str) -> dict[str, str]:
    """{the name with one inner word dropped: that word} (the first word, the project's prefix, stays)."""
    words = name.split("_")
    return {"_".join(words[:i] + words[i + 1 :]): words[i] for i in range(1, len(words) - 1) if words[i]}


def _target(line: str, name: str) -> str | None:
    # `x = ...`, `self.x: int = ...`, `const char* x = ...`, `auto & x = ...`
    m = re.match(
        r"\s*(?:[\w:<>]+[\s*&]+)*(?:self\.|this->)?(\w+)\s*(?::[^=]+)?=[^=].*\b" + re.escape(name) + r"\b",
        line,
    )
    return m.group(1) if m else None


def segment_copies(
    names: Iterable[tuple[str, str]],
    tree: RepoTree,
    added: set[tuple[str, int]],
    env_line: Callable[[str], bool],
    excluded: Callable[[str], bool] | None = None,
) -> list[SegmentCopy]:
    """For each (name, the added line reading it) of names found nowhere else: the repository's name one
    inner word shorter, read elsewhere (on an environment line) into a local of the same name."""
    wanted: dict[str, list[tuple[str, str, str]]] = {}  # shorter -> [(name, word, target)]
    for name, line in names:
        target = _target(line, name)
        if target is None:
            continue
        for other, word in _shorter(name).items():
            if is_env_name(other):
                wanted.setdefault(other, []).append((name, word, target))
    grep = getattr(tree, "grep", None)
    found = grep(sorted(wanted)) if wanted and callable(grep) else None
    if not found:
        return []
    out: list[SegmentCopy] = []
    kept = sorted(p for p in found if not (excluded is not None and excluded(p)))[:_MAX_FILES]
    for other, copies in sorted(wanted.items()):
        for name, word, target in copies:
            places = tuple(
                (path, number, text.strip()[:200])
                for path in kept
                for number, text in enumerate((tree.read(path) or "").split("\n"), start=1)
                if (path, number) not in added and _target(text, other) == target and env_line(text)
            )
            if places:
                out.append(SegmentCopy(name, other, word, target, places[:20]))
    return out
