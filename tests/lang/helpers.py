"""Small helpers for front-end tests: parse a dedented snippet, pick facts by field or line."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from reviewbot.lang.cpp import parser as cpp
from reviewbot.lang.facts import Assignment, FieldRead, FileFacts, PredicateUse
from reviewbot.lang.python import parser as python


def parse_cpp(source: str, path: str = "src/config.cc") -> FileFacts:
    return cpp.parse(path, textwrap.dedent(source).lstrip("\n"))


def parse_py(source: str, path: str = "pkg/config.py") -> FileFacts:
    return python.parse(path, textwrap.dedent(source).lstrip("\n"))


def writes(facts: FileFacts, field: str) -> list[Assignment]:
    return [a for a in facts.assignments if a.field == field]


def reads(facts: FileFacts, field: str, in_condition: bool | None = None) -> list[FieldRead]:
    return [
        r
        for r in facts.reads
        if r.field == field and (in_condition is None or r.in_condition == in_condition)
    ]


def uses_at(facts: FileFacts, line: int) -> list[PredicateUse]:
    return [p for p in facts.predicates if p.line == line]


def guard_key(a: Assignment) -> str | None:
    return a.guard.key if a.guard is not None else None


class DirTree:
    """A RepoTree over a directory on disk (a checked-out work tree); it has no `read_many`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.reads: list[str] = []

    def paths(self) -> list[str]:
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(self.root).parts
        )

    def read(self, path: str) -> str | None:
        self.reads.append(path)
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


class MemoryTree:
    """A RepoTree over files held in memory."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def paths(self) -> list[str]:
        return sorted(self.files)

    def read(self, path: str) -> str | None:
        return self.files.get(path)


class GrepTree(MemoryTree):
    """A MemoryTree with the whole-word `grep` the analyses call when a tree offers it."""

    def grep(self, words: list[str], substrings: bool = False) -> set[str]:
        return {p for p, t in self.files.items() if any(re.search(rf"\b{re.escape(w)}\b", t) for w in words)}
