"""Preprocessor guards on a macro that the file being compiled can never see (pure, apart from searching
the head tree).

A source file (`.c`, `.cc`, `.cpp`, `.cxx`, `.cu`) is compiled on its own: a macro `#define`d in another
source file is not defined in it. So when the change adds `#ifdef X`, `#ifndef X` or `#if
[!]defined(X)` to a source file and the repository defines `X` only with `#define X` in *other* source
files (no header, no build file, no script, not this file), the guard is constant in this file:
`#ifndef X` always true, `#ifdef X` always false (`arg.cpp` testing a macro `common.cpp` defines).

Not judged: a macro some header defines (any file that is not a source file may be included), one a
build file, script or config names (it may come from `-DX`), a file that includes a source file (a
unity build), one the file defines itself, one nothing
defines (an opt-in `-DX` for debugging), names starting with `_` (the compiler's), and guards with more
than one macro.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.sides import Side
from reviewbot.model.change import RepoTree

__all__ = ["MacroGuard", "macro_guards", "SOURCE_SUFFIXES"]

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu")

_GUARD = re.compile(
    r"^\s*#\s*(?:(?P<kw>ifdef|ifndef)\s+(?P<name>[A-Za-z]\w*)\s*(?://.*|/\*.*)?$"
    r"|(?:el)?if\s+(?P<neg>!\s*)?defined\s*(?:\(\s*(?P<name2>[A-Za-z]\w*)\s*\)|\s+(?P<name3>[A-Za-z]\w*))\s*(?://.*|/\*.*)?$)"
)
_INCLUDES_SOURCE = re.compile(r'(?m)^[ \t]*#[ \t]*include[ \t]*"[^"]+\.(?:c|cc|cpp|cxx|cu)"')
_MAX_FILES = 60  # files mentioning the macro read to find its definitions


@dataclass(frozen=True)
class MacroGuard:
    path: str
    line: int
    text: str  # the directive, as written
    name: str  # the macro
    value: bool  # what the guard always gives in this file
    defined_at: tuple[tuple[str, int], ...]  # the other source files' `#define` lines


def _define(name: str) -> re.Pattern[str]:
    return re.compile(r"^\s*#\s*define\s+" + re.escape(name) + r"\b")


def _directive(line: str) -> tuple[str, bool] | None:
    """(macro, the guard's value when the macro is undefined) of a single-macro guard."""
    m = _GUARD.match(line)
    if m is None:
        return None
    if m.group("kw"):
        return m.group("name"), m.group("kw") == "ifndef"
    return (m.group("name2") or m.group("name3")), bool(m.group("neg"))


def _definitions(files: dict[str, str], name: str, path: str) -> tuple[tuple[str, int], ...] | None:
    """The other source files' `#define name` lines, or None when the guard may see the macro (a
    header, a build file or this file defines or names it, or nothing defines it). `files`: the
    repository's files that hold one of the guards' names, with their text."""
    mine = {p: t for p, t in files.items() if name in t}
    if not mine or len(mine) > _MAX_FILES:
        return None
    rx = _define(name)
    named = re.compile(
        r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])|-D" + re.escape(name) + r"\b"
    )
    found: list[tuple[str, int]] = []
    for p, text in sorted(mine.items()):
        if not p.endswith(SOURCE_SUFFIXES) and named.search(text):
            return None  # a header, a build file, a script: the macro may reach the file from there
        for number, line in enumerate(text.split("\n"), start=1):
            if rx.match(line):
                if p == path:
                    return None  # the file defines it itself
                found.append((p, number))
    return tuple(found) or None


def _candidates(
    changed: Iterable[Side], texts: dict[str, str | None]
) -> list[tuple[str, int, str, str, bool]]:
    """(path, line, directive, macro, value when undefined) of the single-macro guards the change adds
    to source files that include no other source file (a unity build sees other sources' macros)."""
    out: list[tuple[str, int, str, str, bool]] = []
    for s in changed:
        text = texts.get(s.path)
        if (
            not s.path.endswith(SOURCE_SUFFIXES)
            or not s.added
            or text is None
            or _INCLUDES_SOURCE.search(text)
        ):
            continue
        lines = text.split("\n")
        for number in sorted(n for n in s.added if n <= len(lines)):
            got = _directive(lines[number - 1])
            if got is not None and not got[0].startswith("_"):
                out.append((s.path, number, lines[number - 1].strip(), got[0], got[1]))
    return out


def macro_guards(changed: Iterable[Side], texts: dict[str, str | None], tree: RepoTree) -> list[MacroGuard]:
    """Guards the change adds to a source file on a macro only other source files define."""
    candidates = _candidates(changed, texts)
    grep = getattr(tree, "grep", None)
    if not candidates or not callable(grep):
        return []
    # One search for every name; substrings: `-DGPU_SPLIT` in a Makefile is no whole word (git grep -w)
    hits = grep(sorted({c[3] for c in candidates}), substrings=True)
    if not hits or len(hits) > _MAX_FILES * len(candidates):
        return []
    files = {p: tree.read(p) or "" for p in sorted(hits)}
    out: list[MacroGuard] = []
    for path, number, text, name, undefined_value in candidates:
        where = _definitions(files, name, path)
        if where is not None:
            out.append(MacroGuard(path, number, text, name, undefined_value, where))
    return out
