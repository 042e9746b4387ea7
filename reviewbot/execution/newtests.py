"""Which test cases did the change add or edit? (what `ineffective-test` judges)"""

from __future__ import annotations

import re

from reviewbot.execution.junit import belongs_to
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import ChangeSet, FileStatus
from reviewbot.model.tests import NewTest, TestRun

__all__ = ["new_tests"]

_DEFINITION = re.compile(r"^\s*(?:async\s+)?def\s+\w+|\bTEST\w*\(|\bint\s+main\s*\(")


def _definition_line(text: str, name: str) -> tuple[int, str] | None:
    bare = re.escape(name.split("[", 1)[0])
    lines = text.split("\n")
    for pattern in (
        rf"^\s*(async\s+)?def\s+{bare}\b",
        rf"\bTEST\w*\(\s*\w+\s*,\s*{bare}\s*\)",
        r"\bint\s+main\s*\(",
    ):
        for n, line in enumerate(lines, 1):
            if re.search(pattern, line):
                return n, line.strip()
    return None


def _changed_here(lines: list[str], line: int, added: set[int]) -> bool:
    """Whether an added line falls in the test from its decorators to the next definition."""
    start = line
    while start > 1 and lines[start - 2].strip().startswith("@"):
        start -= 1
    end = next(
        (n for n in range(line + 1, len(lines) + 1) if _DEFINITION.search(lines[n - 1])), len(lines) + 1
    )
    return any(start <= n < end for n in added)


def new_tests(change: ChangeSet, head: TestRun) -> list[NewTest]:
    """Test cases the change adds or edits: every case of an added file, edited cases of a modified one."""
    out = []
    for f in change.files:
        if f.status is FileStatus.DELETED or f.skipped is not None or not is_test_path(f.path):
            continue
        text = f.head_text or ""
        added = {n for n, t in f.added_lines.items() if t.strip()}  # blank lines edit no test
        for case in head.cases.values():
            if not belongs_to(case, f.path):
                continue
            found = _definition_line(text, case.name)
            line, stmt = found or (1, text.split("\n", 1)[0].strip())
            edited = f.status is FileStatus.ADDED or (
                _changed_here(text.split("\n"), line, added) if found else bool(added)
            )
            if edited:
                out.append(NewTest(case.id, f.path, line, stmt))
    return sorted(out, key=lambda t: (t.path, t.line, t.id))
