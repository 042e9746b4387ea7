"""Command-line flags a change stops accepting (pure, apart from searching the head tree through
`removed_flags`).

`removed_flags(..., keep_unreferenced=True)` finds the flags a changed file stops registering that no
file of the head tree registers or quotes any more. Of those, a flag is still *accepted* — or its
removal was announced — and so is not a breaking removal when:

- the change deletes the whole file (a tool or an example that goes away with all its options), or the
  file is a test;
- the base announced the removal: the flag's base definition (the statement that registers it) or any
  base line of the file that names it says "deprecated";
- the change fixes a spelling the parser got wrong: the file now registers a flag at most two edits
  away that the base file already named outside its definitions (the usage text documented the
  right spelling, the parser checked another one);
- argparse still accepts it as an abbreviation: in Python, the removed flag is the prefix of exactly
  one flag the head file registers (`allow_abbrev` is argparse's default) and the file does not turn
  abbreviations off.

What is left breaks every launch script and config that passes the flag. Its *replacement* is a flag
the head file registers on the line that took the definition's place and the base did not register.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.removals.named_flags import RemovedFlag, defined_flags, removed_flags, whole_name
from reviewbot.analysis.sides import Side
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree

__all__ = ["DroppedFlag", "dropped_flags", "within_two_edits", "announced"]

_DEPRECATED = re.compile(
    r"(?i)deprecat|obsolete|(?:will|to) be removed|removed in (?:a |the )?(?:future|next|v?\d)"
)
_STATEMENT_LINES = 12  # a definition statement is read at most this far (help texts run long)
_NO_ABBREV = re.compile(r"allow_abbrev\s*=\s*False")


@dataclass(frozen=True)
class DroppedFlag:
    removed: RemovedFlag
    replacements: tuple[str, ...]  # flags the head registers where the definition was, new in the change
    field: str  # the setting it set: argparse's `dest`, or the member a C++ handler assigns


_DEST = re.compile(r"\bdest\s*=\s*[\"'](\w+)[\"']")
_MEMBER = re.compile(r"\b\w+(?:\.|->)(\w+)\s*(?:=[^=]|\.push_back|\.emplace_back|\.assign)")


def _field(flag: str, statement: str, lang: str) -> str:
    found = (_DEST if lang == "python" else _MEMBER).search(statement)
    return found.group(1) if found else flag.lstrip("-").replace("-", "_")


def _lang(path: str) -> str:
    return "python" if path.endswith(".py") else "cpp"


def _statement(lines: list[str], line: int) -> str:
    """The base statement that registers a flag: from its line to where its brackets close or the
    enclosing call ends (a Python call, a C++ argument-table entry with its help text, an `if` arm),
    at most 12 lines."""
    out: list[str] = []
    depth = 0
    for text in lines[line - 1 : line - 1 + _STATEMENT_LINES]:
        out.append(text)
        depth += text.count("(") + text.count("{") - text.count(")") - text.count("}")
        if depth < 0 or (depth == 0 and text.rstrip().endswith((")", "}", ";"))):
            break
    return "\n".join(out)


def announced(flag: str, base_lines: list[str], line: int, others: Iterable[str]) -> bool:
    """The base said the flag is deprecated or going away: in its definition, or on a line of a
    changed file (its base side) that names it (a warning, a usage line, a comment)."""
    if _DEPRECATED.search(_statement(base_lines, line)):
        return True
    named = whole_name(flag)
    return any(
        named.search(t) and _DEPRECATED.search(t)
        for text in (base_lines, *(o.split("\n") for o in others))
        for t in text
    )


def within_two_edits(a: str, b: str) -> bool:
    """Levenshtein distance of at most two (a spelling fix, not a rename)."""
    if a == b or abs(len(a) - len(b)) > 2:
        return a == b
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > 2:
            return False
        prev = cur
    return prev[-1] <= 2


def _spelling_fix(flag: str, new_flags: Iterable[str], base_text: str, base_defs: set[int]) -> bool:
    """A new flag two edits away that the base file already named outside its definition lines."""
    base_lines = base_text.split("\n")
    for other in new_flags:
        if not within_two_edits(flag, other):
            continue
        named = whole_name(other)
        if any(named.search(t) for n, t in enumerate(base_lines, start=1) if n not in base_defs):
            return True
    return False


def _abbreviation(flag: str, head_defs: Iterable[str], head_text: str) -> bool:
    """argparse accepts a unique prefix of a long option unless `allow_abbrev=False`."""
    if _NO_ABBREV.search(head_text):
        return False
    longer = [f for f in head_defs if f != flag and f.startswith(flag)]
    return len(longer) == 1


def dropped_flags(
    changed: Iterable[Side],
    texts: dict[str, tuple[str | None, str | None]],
    tree: RepoTree | None,
    excluded: object = None,
) -> list[DroppedFlag]:
    """The flags the change stops accepting with no alias and no announcement (see the module doc)."""
    kept = [s for s in changed if not is_test_path(s.path) and texts.get(s.path, (None, None))[1] is not None]
    out: list[DroppedFlag] = []
    for r in removed_flags(kept, texts, tree, excluded, keep_unreferenced=True):
        base_text, head_text = texts[r.path]
        if base_text is None or head_text is None:
            continue
        lang = _lang(r.path)
        base_defs = defined_flags(base_text, lang)
        head_defs = defined_flags(head_text, lang)
        new_flags = sorted(set(head_defs) - set(base_defs))
        others = (b for p, (b, _) in texts.items() if b and p != r.path)
        if announced(r.flag, base_text.split("\n"), r.base_line, others):
            continue
        if _spelling_fix(r.flag, new_flags, base_text, {n for v in base_defs.values() for n in v}):
            continue
        if lang == "python" and _abbreviation(r.flag, head_defs, head_text):
            continue
        here = tuple(f for f in new_flags if r.line in head_defs[f])
        statement = _statement(base_text.split("\n"), r.base_line)
        out.append(DroppedFlag(r, here, _field(r.flag, statement, lang)))
    return out
