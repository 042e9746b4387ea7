"""Every reader of a few fields: the files that mention them, found by one pass over the tree.

The follow stage asks this for the switch-like fields the followed code reads (`switch_like`): a switch
that loses its effect when a flag's rule fires must have no reader outside the skipped code, and only
a search of the whole tree can say so. Files are read in batches; a file that mentions a name as a
whole word is parsed (only the function bodies that mention one, see `parse.parse_file`'s focus) into
`CallGraph.readers`, apart from the followed files, and the lines that mention a name are kept for what
the analysis asks of them (is it a log line). A name mentioned in more than `MAX_READER_FILES` files
is not parsed: `CallGraph.widely_read` records the count (such a field is read on many paths).
Tests and vendored trees are left out.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable

from reviewbot.lang.build import prefilter
from reviewbot.lang.calls import CallGraph
from reviewbot.lang.facts import lang_for_path
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.parse import parse_many
from reviewbot.model.change import RepoTree, read_many

__all__ = ["MAX_READER_FILES", "switch_like", "scan_readers", "read_texts"]

MAX_READER_FILES = 24  # a switch mentioned in more files is taken as read on many paths (not parsed)
_READ_BATCH = 1000  # files per read_many call
_NEWLINE = re.compile("\n")
_BOOL_TYPES = frozenset({"bool", "_Bool"})
_BOOL_LITERALS = frozenset({"True", "False"})


def switch_like(index: RepoIndex, name: str) -> bool:
    """Some owner declares `name` as a bool or an enum, or gives it a boolean or enum default."""
    for d in index.defaults(name):
        if d.value in _BOOL_LITERALS or index.enum_members(d.value.rsplit(".", 1)[0].rsplit(".", 1)[-1]):
            return True
    return any(
        decl.type in _BOOL_TYPES or decl.default in _BOOL_LITERALS or bool(index.enum_members(decl.type))
        for facts in index.files.values()
        for decl in facts.fields
        if decl.field == name
    )


def scan_readers(tree: RepoTree, index: RepoIndex, graph: CallGraph, names: Iterable[str]) -> None:
    """Every source file that mentions one of `names` (whole word; tests and vendored trees left out):
    the lines that mention them go to `graph.mention_lines`, and the files are parsed into
    `graph.readers` — unless a name is mentioned in more than `MAX_READER_FILES` files, which
    `graph.widely_read` then records with the count (such a field is read on many paths)."""
    wanted = sorted(set(names))
    if not wanted:
        return
    paths = _candidate_paths(tree, index, wanted)
    patterns = {n: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in wanted}
    mentions, sources = _find_mentions(tree, paths, wanted, patterns)
    parsed: list[str] = []
    for n in wanted:
        found = sorted(mentions[n])
        graph.mentions[n] = tuple(found)
        if len(found) > MAX_READER_FILES:
            graph.widely_read[n] = len(found)
        else:
            parsed.append(n)
    if parsed:
        _parse_readers(graph, parsed, mentions, sources, patterns)


def _candidate_paths(tree: RepoTree, index: RepoIndex, wanted: list[str]) -> list[str]:
    """The source files (not tests, not excluded) that can mention one of `wanted`, in tree order."""
    # One `git grep` names the files that can mention a name (a superset of what the patterns
    # match); reading every source file instead cost most of a warm review on rtp-llm (4,100 files).
    candidates = prefilter(tree, wanted)
    return [
        p
        for p in tree.paths()
        if (candidates is None or p in candidates)
        and lang_for_path(p) is not None
        and not is_test_path(p)
        and not index.is_excluded(p)
    ]


def _find_mentions(
    tree: RepoTree, paths: list[str], wanted: list[str], patterns: dict[str, re.Pattern[str]]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """({name: paths that mention it as a whole word}, {path: text} of those paths), read in batches."""
    mentions: dict[str, list[str]] = {n: [] for n in wanted}
    sources: dict[str, str] = {}
    for start in range(0, len(paths), _READ_BATCH):
        for path, text in read_texts(tree, paths[start : start + _READ_BATCH]):
            hits = [n for n in wanted if n in text and patterns[n].search(text)]
            for n in hits:
                mentions[n].append(path)
            if hits:
                sources[path] = text
    return mentions, sources


def _parse_readers(
    graph: CallGraph,
    parsed: list[str],
    mentions: dict[str, list[str]],
    sources: dict[str, str],
    patterns: dict[str, re.Pattern[str]],
) -> None:
    """The mention lines of the files that mention one of `parsed`, and those files' facts (only the
    function bodies that mention a name) in `graph.readers`."""

    def focus(body: str) -> bool:  # only the function bodies that mention a name are walked
        return any(n in body for n in parsed)

    focus_key = "substrings:" + "\n".join(sorted(parsed))  # names the focus for the facts cache
    found_in = sorted({p for n in parsed for p in mentions[n]})
    for path in found_in:
        names = [n for n in parsed if path in graph.mentions[n]]
        graph.mention_lines[path] = _lines_matching(sources[path], [patterns[n] for n in names])
    todo = [p for p in found_in if p not in graph.files]
    # One facts-cache round trip for all of them (they are parsed here, in this process, when missing).
    jobs: list[tuple[str, str, Callable[[str], bool] | None]] = [(p, sources[p], focus) for p in todo]
    for path, facts in zip(todo, parse_many(jobs, 1, [focus_key] * len(todo)), strict=True):
        if facts is not None:
            graph.readers[path] = facts


def _lines_matching(text: str, patterns: list[re.Pattern[str]]) -> dict[int, str]:
    """{line number: stripped line} of the lines where one of `patterns` matches. The patterns are
    bounded by word characters, which a line break is not: a match in the whole text is a match in
    its line, found without testing every line against every pattern."""
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    numbers = sorted({bisect_right(starts, m.start()) for rx in patterns for m in rx.finditer(text)})
    lines = text.split("\n")
    return {n: lines[n - 1].strip() for n in numbers}


def read_texts(tree: RepoTree, paths: list[str]) -> Iterable[tuple[str, str]]:
    """(path, text) of the readable files among `paths`, in their order (one batch when the tree can)."""
    texts = read_many(tree, paths)
    for p in paths:
        text = texts.get(p)
        if text is not None:
            yield p, text
