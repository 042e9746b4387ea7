"""A changed file before and after the change, side by side (pure): what the base-vs-head rules compare.

`default-changed`, `env-switch-renamed` and `guard-removed` judge what a change *removes* or *changes*
as much as what it adds, so they need both revisions of each changed file: its facts
(`lang.facts.FileFacts`), its statements with their guards (`lang.clauses`), the lines the diff removed
(base numbering) and added (head numbering), and where a removed base line now sits in the head
(`head_line`), which is where a finding about a removal is anchored.

Only the project's own source files are compared: tests, vendored trees and files that did not parse
are left out. Test files the change touched are kept apart (`changed_tests`): a rule that wants "a test
change in the same pull request" reads them there.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.lang.clauses import Clauses, clauses
from reviewbot.lang.facts import FileFacts, Function, lang_for_path
from reviewbot.lang.index import DEFAULT_EXCLUDES, is_excluded, is_test_path
from reviewbot.model.change import ChangedFile, ChangeSet, Hunk

__all__ = ["Side", "TestLine", "sides", "changed_tests", "test_lines_mentioning", "head_line", "function_of"]


@dataclass(frozen=True)
class Side:
    """One changed source file: both revisions' facts and statements, and the diff's lines."""

    path: str  # head path
    old_path: str  # base path
    base: Clauses | None  # None: the file is new
    head: Clauses | None  # None: the file was deleted
    base_facts: FileFacts | None
    head_facts: FileFacts | None
    removed: frozenset[int]  # base line numbers the diff removed
    added: frozenset[int]  # head line numbers the diff added
    hunks: tuple[Hunk, ...]

    def head_line(self, base_line: int) -> int:
        """Where base line `base_line` is (or was, if removed) in the head; see `head_line`."""
        return head_line(self.hunks, base_line)

    def base_function(self, line: int) -> Function | None:
        return self.base_facts.function_at(line) if self.base_facts is not None else None

    def head_function(self, line: int) -> Function | None:
        return self.head_facts.function_at(line) if self.head_facts is not None else None

    def head_functions(self) -> frozenset[str]:
        return (
            frozenset(f.name for f in self.head_facts.functions)
            if self.head_facts is not None
            else frozenset()
        )


@dataclass(frozen=True)
class TestLine:
    """A line a test file gained or lost in the change."""

    path: str
    line: int  # head numbering for added lines, base numbering for removed ones
    text: str
    added: bool


def _source(f: ChangedFile) -> bool:
    return (
        f.skipped is None
        and lang_for_path(f.path) is not None
        and not is_test_path(f.path)
        and not is_excluded(f.path, DEFAULT_EXCLUDES)
    )


# The statements of each changed file, kept as long as the file (the round's change) lives: seven
# rules of a round ask for the sides of the same change, and `clauses`' own small cache cannot hold a
# large change's files (500 changed files: 7 x 1,000 tree-sitter parses and walks without this).
_CLAUSES: weakref.WeakKeyDictionary[ChangedFile, tuple[Clauses | None, Clauses | None]]
_CLAUSES = weakref.WeakKeyDictionary()


def _clauses_of(f: ChangedFile) -> tuple[Clauses | None, Clauses | None]:
    found = _CLAUSES.get(f)
    if found is None:
        old = f.old_path or f.path
        base = clauses(old, f.base_text) if f.base_text is not None and f.old_path is not None else None
        head = clauses(f.path, f.head_text) if f.head_text is not None else None
        found = _CLAUSES[f] = (base, head)
    return found


# The sides of the round's change, kept while the change lives: seven rules ask for them, and the
# analyses two rules share (`changed_defaults`, `constant_guards`) are kept under this very list.
_SIDES: dict[int, tuple[weakref.ref[ChangeSet], object, object, list[Side]]] = {}


def sides(
    change: ChangeSet, base_facts: dict[str, FileFacts], head_facts: dict[str, FileFacts]
) -> list[Side]:
    """The changed source files, by head path (one list per change and facts: do not change it)."""
    key = id(change)
    kept = _SIDES.get(key)
    if kept is not None and kept[0]() is change and kept[1] is base_facts and kept[2] is head_facts:
        return kept[3]
    out = _sides(change, base_facts, head_facts)

    def forget(_ref: weakref.ref[ChangeSet]) -> None:
        _SIDES.pop(key, None)

    _SIDES[key] = (weakref.ref(change, forget), base_facts, head_facts, out)
    return out


def _sides(
    change: ChangeSet, base_facts: dict[str, FileFacts], head_facts: dict[str, FileFacts]
) -> list[Side]:
    out: list[Side] = []
    for f in sorted(change.files, key=lambda f: f.path):
        if not _source(f):
            continue
        old = f.old_path or f.path
        base, head = _clauses_of(f)
        out.append(
            Side(
                path=f.path,
                old_path=old,
                base=base,
                head=head,
                base_facts=base_facts.get(old),
                head_facts=head_facts.get(f.path),
                removed=frozenset(f.removed_lines),
                added=frozenset(f.added_lines),
                hunks=tuple(sorted(f.hunks, key=lambda h: h.source_start)),
            )
        )
    return out


def changed_tests(change: ChangeSet) -> list[TestLine]:
    """Lines test files gained or lost in the change, by path and line."""
    out: list[TestLine] = []
    for f in change.files:
        if not is_test_path(f.path):
            continue
        out.extend(TestLine(f.path, n, t.strip(), True) for n, t in f.added_lines.items())
        out.extend(TestLine(f.old_path or f.path, n, t.strip(), False) for n, t in f.removed_lines.items())
    return sorted(out, key=lambda t: (t.path, not t.added, t.line))


def test_lines_mentioning(lines: Iterable[TestLine], names: Iterable[str]) -> list[TestLine]:
    """The changed test lines that mention one of `names` as a whole word (`head_num` also as `head_num_`,
    and as the command-line flag `--head-num` a test passes)."""
    wanted = sorted({n for n in names if n and len(n) > 2})
    if not wanted:
        return []
    spelled = sorted({*wanted, *(n.replace("_", "-") for n in wanted if "_" in n.strip("_"))})
    rx = re.compile(r"(?<![\w])(?:" + "|".join(re.escape(n) for n in spelled) + r")_?(?![\w])")
    return [t for t in lines if rx.search(t.text)]


def head_line(hunks: Iterable[Hunk], base_line: int) -> int:
    """The head line of base line `base_line`: outside the hunks, shifted by the lines the hunks before
    it added or removed; inside a hunk, the head line of the first unchanged line after it (for a
    removed line: the line that now follows the removal), else the hunk's last head line."""
    offset = 0
    for h in sorted(hunks, key=lambda h: h.source_start):
        end = h.source_start + max(h.source_length, 1) - 1
        if base_line < h.source_start:
            break
        if base_line > end:
            offset = h.target_start + h.target_length - (h.source_start + h.source_length)
            continue
        removed = {n for n, _ in h.removed}
        added = {n for n, _ in h.added}
        src = [n for n in range(h.source_start, h.source_start + h.source_length) if n not in removed]
        tgt = [n for n in range(h.target_start, h.target_start + h.target_length) if n not in added]
        paired = dict(zip(src, tgt, strict=False))
        if base_line in paired:
            return paired[base_line]
        after = bisect_right(src, base_line)
        if after < len(src) and src[after] in paired:
            return paired[src[after]]
        return max(h.target_start + h.target_length - 1, h.target_start, 1)
    return max(base_line + offset, 1)


def function_of(facts: FileFacts | None, line: int) -> str:
    """The qualified name of the function around `line` ("" at module or namespace level)."""
    fn = facts.function_at(line) if facts is not None else None
    return fn.name if fn is not None else ""
