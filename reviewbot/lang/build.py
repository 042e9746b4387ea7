"""Build the repository index of one round from a RepoTree.

Only files that can matter are parsed: all candidate files are read in one batch, a single
regular expression of the interesting names (fields, functions, predicate operands) picks the
files that mention one, and only those go through tree-sitter. Test files also get `TestRef`
lines for every name they mention.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from reviewbot.change.model import RepoTree
from reviewbot.lang.facts import FileFacts, lang_for_path
from reviewbot.lang.index import RepoIndex, TestRef, is_test_path
from reviewbot.lang.parse import parse_file

__all__ = ["build_index", "names_pattern"]

# Files that only matter as tests (smoke suites, build rules, scripts) when they live under a test path.
_TEST_ONLY_SUFFIXES = (".bzl", ".bazel", "BUILD", ".sh", ".cmake", "CMakeLists.txt", ".yaml", ".yml", ".toml")
_BATCH = 1000  # files per read_many call: bounds memory on large repositories


def _name_regex(name: str) -> str:
    # `A.b` also matches `A::b` and `a->b`; names are matched as whole words.
    body = r"(?:\.|::|->)".join(re.escape(part) for part in name.replace("::", ".").split("."))
    return rf"(?<![\w]){body}(?![\w])"


def names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """One compiled pattern matching any of `names` as a whole word, or None for no names."""
    parts = sorted({n.strip() for n in names if n and n.strip()}, key=lambda n: (-len(n), n))
    return re.compile("|".join(_name_regex(n) for n in parts)) if parts else None


class _Mentions:
    """`text mentions one of the names`: a cheap substring test first, then the word-bounded pattern.

    Python's regex engine tries the alternation at every position; `str.__contains__` is far
    faster, and most files contain none of the names at all.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.pattern = names_pattern(names)
        self.needles = tuple(
            sorted({n.strip().replace("::", ".").rsplit(".", 1)[-1] for n in names if n.strip()})
        )

    def __call__(self, text: str) -> bool:
        if self.pattern is None or not any(n in text for n in self.needles):
            return False
        return self.pattern.search(text) is not None


def _candidate(path: str) -> bool:
    return lang_for_path(path) is not None or (is_test_path(path) and path.endswith(_TEST_ONLY_SUFFIXES))


def _read(tree: RepoTree, paths: list[str]) -> Iterator[tuple[str, str | None]]:
    read_many = getattr(tree, "read_many", None)
    for i in range(0, len(paths), _BATCH):
        chunk = paths[i : i + _BATCH]
        if callable(read_many):
            texts: dict[str, str | None] = read_many(chunk)
            yield from ((p, texts.get(p)) for p in chunk)
        else:
            yield from ((p, tree.read(p)) for p in chunk)


def _test_refs(
    path: str, text: str, names: list[tuple[str, re.Pattern[str]]], any_name: re.Pattern[str]
) -> list[TestRef]:
    refs: list[TestRef] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if any_name.search(line) is None:
            continue
        stripped = line.strip()
        refs.extend(TestRef(path, number, stripped, name) for name, rx in names if rx.search(line))
    return refs


def build_index(tree: RepoTree, names: set[str], changed: dict[str, FileFacts] | None = None) -> RepoIndex:
    """The index of one revision: facts of every file that mentions one of `names`, plus test refs.

    `changed` holds facts already parsed for the changed files; they are reused, not parsed again.
    Facts of other files cover the functions that mention a name (or read an alias of such a field),
    their classes' defaults and enums, and every function's span.
    """
    index = RepoIndex()
    changed = changed or {}
    for known in changed.values():
        index.add(known)
    index.reused_files = len(changed)
    mentions = _Mentions(names)
    per_name = [
        (n, re.compile(_name_regex(n))) for n in sorted({n.strip() for n in names if n and n.strip()})
    ]
    paths = [p for p in tree.paths() if _candidate(p) and (p not in changed or is_test_path(p))]
    for path, text in _read(tree, paths):
        if text is None:
            continue
        index.scanned_files += 1
        test = is_test_path(path)
        index.test_files += test
        if not mentions(text):
            continue
        if test and mentions.pattern is not None:
            index.add_test_refs(_test_refs(path, text, per_name, mentions.pattern))
        if path in changed:
            continue
        # Only functions that mention a name (or read an alias of one) are walked: see Walker.walk_body.
        facts = parse_file(path, text, focus=mentions)
        if facts is not None:
            index.parsed_files += 1
            index.add(facts)
    return index
