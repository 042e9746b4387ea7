"""Whether the repository uses a word outside a change's added lines (apart from searching the head tree).

Of two environment names a change introduces one edit apart (`GPTQ_BITS` and `GTPQ_BITS`), the one
whose differing word the repository writes nowhere else (`GTPQ`) is the misspelling: the other word
(`gptq`, `GPTQ`, `AutoGPTQ`) is the project's vocabulary. A word counts as used when it occurs, in any
case and inside any identifier, on a line the change did not add.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from reviewbot.model.change import RepoTree

__all__ = ["first_use"]

_MAX_FILES = 40  # files read to find a use: the first line outside the change settles it


def _spellings(word: str) -> list[str]:
    return sorted({word.upper(), word.lower(), word.capitalize()})


def first_use(
    tree: RepoTree,
    word: str,
    added: set[tuple[str, int]],
    excluded: Callable[[str], bool] | None = None,
) -> tuple[str, int, str] | None:
    """The first line (path, line, text) outside `added` that holds `word` in any case; None when the
    tree holds none (or cannot be searched)."""
    grep = getattr(tree, "grep", None)
    if not callable(grep):
        return None
    paths: Iterable[str] | None = grep(_spellings(word), substrings=True)
    if not paths:
        return None
    rx = re.compile(re.escape(word), re.IGNORECASE)
    kept = sorted(p for p in paths if not (excluded is not None and excluded(p)))[:_MAX_FILES]
    for path in kept:
        text = tree.read(path)
        for number, line in enumerate((text or "").split("\n"), start=1):
            if (path, number) not in added and rx.search(line):
                return path, number, line.strip()[:200]
    return None
