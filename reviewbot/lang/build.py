"""Build the repository index of one round from a RepoTree.

Only files that can matter are parsed: all candidate files are read in batches, the words of
each file are intersected with the interesting names (fields, predicate operands, config
builders), and only files that mention one go through tree-sitter. Test files also get `TestRef`
lines for every name they mention.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from reviewbot.lang.common import has_word
from reviewbot.lang.facts import CPP_SUFFIXES, FileFacts, lang_for_path
from reviewbot.lang.grepcache import cached_grep
from reviewbot.lang.index import DEFAULT_EXCLUDES, RepoIndex, TestRef, is_excluded, is_test_path
from reviewbot.lang.parse import parse_many
from reviewbot.model.change import RepoTree

__all__ = ["build_index", "prefilter", "names_pattern", "NameSet", "DEFAULT_EXCLUDES", "is_excluded"]

# Files that only matter as tests (smoke suites, build rules, scripts) when they live under a test path.
_TEST_ONLY_SUFFIXES = (".bzl", ".bazel", "BUILD", ".sh", ".cmake", "CMakeLists.txt", ".yaml", ".yml", ".toml")
_BATCH = 1000  # files per read_many call: bounds memory on large repositories


_WORD = re.compile(r"\w+")
_FEW_NAMES = 64  # up to this many names, `NameSet.found` searches each name instead of the text's words
_SEPARATORS = re.compile(r"::|->")


def _name_regex(name: str) -> str:
    # `A.b` also matches `A::b` and `a->b`; names are matched as whole words.
    body = r"(?:\.|::|->)".join(re.escape(part) for part in name.replace("::", ".").split("."))
    return rf"(?<![\w]){body}(?![\w])"


def names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """One compiled pattern matching any of `names` as a whole word, or None for no names."""
    parts = sorted({n.strip() for n in names if n and n.strip()}, key=lambda n: (-len(n), n))
    return re.compile("|".join(_name_regex(n) for n in parts)) if parts else None


class NameSet:
    """Names to look for as whole words in source text, by word-set intersection.

    A text is split into its words (maximal runs of word characters) once and the names it
    mentions are the intersection with the searched names: one pass over the text whatever the
    number of names (an alternation of all names is tried at every position of the text). A dotted
    name (`A.b`, also written `A::b` or `a->b`) is mentioned when its parts are all words of the
    text and occur joined by a separator; anything else (`operator==`) is searched with its own
    pattern.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(sorted({n.strip() for n in names if n and n.strip()}))
        simple: set[str] = set()
        self._dotted: dict[str, tuple[tuple[str, ...], re.Pattern[str]]] = {}
        self._other: dict[str, re.Pattern[str]] = {}
        for name in self.names:
            parts = tuple(_SEPARATORS.sub(".", name).split("."))
            if all(_WORD.fullmatch(p) for p in parts):
                if len(parts) == 1:
                    simple.add(name)
                else:
                    self._dotted[name] = (parts, re.compile(_name_regex(name)))
            else:
                self._other[name] = re.compile(_name_regex(name))
        self._simple = frozenset(simple)
        # Few names: each is looked for by substring (C speed) and checked as a word, instead of
        # splitting the whole text into its words (a set of thousands of strings per file).
        self.few = len(self.names) <= _FEW_NAMES
        # A substring every mention contains: a cheap first test for short texts (lines, bodies).
        self._needles = tuple(sorted({_SEPARATORS.sub(".", n).rsplit(".", 1)[-1] for n in self.names}))

    def __bool__(self) -> bool:
        return bool(self.names)

    @staticmethod
    def words(text: str) -> set[str]:
        """The words of `text`, to share between NameSets (see `found`)."""
        return set(_WORD.findall(text))

    def found(self, text: str, words: set[str] | None = None) -> set[str]:
        """The names `text` mentions; `words` are its words when already known."""
        if not self.names:
            return set()
        if words is None and self.few:
            # The same answer as below: a name is one of the text's words exactly when it occurs with
            # no word character on either side; a dotted name's pattern bounds each of its parts.
            found = {n for n in self._simple if has_word(text, n)}
            found.update(
                n
                for n, (parts, rx) in self._dotted.items()
                if all(has_word(text, p) for p in parts) and rx.search(text) is not None
            )
            found.update(n for n, rx in self._other.items() if rx.search(text) is not None)
            return found
        if words is None:
            words = set(_WORD.findall(text))
        hits = set(self._simple.intersection(words))
        for name, (parts, rx) in self._dotted.items():
            if words.issuperset(parts) and rx.search(text) is not None:
                hits.add(name)
        for name, rx in self._other.items():
            if rx.search(text) is not None:
                hits.add(name)
        return hits

    def mentions(self, text: str) -> bool:
        """`text` mentions one of the names; a substring test first, so meant for few names."""
        return any(n in text for n in self._needles) and bool(self.found(text))


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


def _test_refs(path: str, text: str, names: NameSet) -> list[TestRef]:
    """A TestRef per line and name, for the (few) names the file is known to mention."""
    refs: list[TestRef] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not names.mentions(line):
            continue
        stripped = line.strip()
        refs.extend(TestRef(path, number, stripped, name) for name in sorted(names.found(line)))
    return refs


# What `git grep` searches: source files and the test-only kinds, never the vendored trees (the git
# spelling of DEFAULT_EXCLUDES; `[review] exclude` globs are applied afterwards, in Python).
_GREP_PATHSPECS = (
    *(f":(glob,icase)**/*{suffix}" for suffix in (".py", ".pyi", *CPP_SUFFIXES)),
    *(f":(glob,icase)**/*{suffix}" for suffix in _TEST_ONLY_SUFFIXES),
    # DEFAULT_EXCLUDES' `*` crosses `/` (fnmatch); git's glob magic spells that `**`.
    *(f":(exclude,glob){glob.replace('*', '**')}" for glob in DEFAULT_EXCLUDES),
)


# `git grep -w -F` slows down with many patterns (rtp-llm: 10 words 0.2 s, 200 words 0.8 s, 2,000 words
# 13.5 s), while the word-set intersection below costs the same for any number of names: past this many
# words every candidate is read instead (a 500-file change of the --large bench searches thousands).
_GREP_MAX_WORDS = 256


def _grep_word(name: str) -> str:
    """The word `git grep -w` looks for: a name's longest word part (`ModelConfig::x` -> `ModelConfig`,
    `operator==` -> `operator`). Every text that mentions the name holds that part as a whole word."""
    return max(_WORD.findall(name), key=len, default="")


def prefilter(tree: RepoTree, names: Iterable[str]) -> set[str] | None:
    """The files that can mention one of `names`, from one `git grep` when the tree can run one (or
    its answer for an earlier tree, kept in the facts cache: see `grepcache`); None (read every
    candidate) otherwise."""
    grep = getattr(tree, "grep", None)
    if not callable(grep):
        return None
    words = {_grep_word(n) for n in names} - {""}
    if len(words) > _GREP_MAX_WORDS:
        return None
    return cached_grep(tree, grep, words, _GREP_PATHSPECS)


def build_index(
    tree: RepoTree,
    names: set[str],
    changed: dict[str, FileFacts] | None = None,
    test_names: set[str] | None = None,
    workers: int | None = None,
    exclude: Sequence[str] = (),
) -> RepoIndex:
    """The index of one revision: facts of every file that mentions one of `names`, plus test refs.

    Vendored and third-party trees (`DEFAULT_EXCLUDES`) and paths matching the extra `exclude` globs
    (`.reviewbot.toml`'s `[review] exclude`) are neither read nor indexed.

    `changed` holds facts already parsed for the changed files; they are reused, not parsed again.
    Facts of other files cover the functions that mention a name (or read an alias of such a field),
    their classes' defaults and enums, and every function's span. Test files get a `TestRef` per
    line that mentions one of `test_names` (default: `names`); a name only searched in tests (the
    enclosing function of a derivation, say `forward`) does not make a file be parsed. Many files
    are parsed in a process pool of `workers` (default: one per core; see `parse.parse_many`).
    """
    globs = tuple(dict.fromkeys((*DEFAULT_EXCLUDES, *exclude)))
    index = RepoIndex(exclude=globs)
    changed = changed or {}
    for known in changed.values():
        index.add(known)
    index.reused_files = len(changed)
    wanted = NameSet(names)
    in_tests = wanted if test_names is None else NameSet(test_names)
    hits = prefilter(tree, (*wanted.names, *in_tests.names))
    paths = [
        p
        for p in tree.paths()
        if (hits is None or p in hits)  # first: a set lookup rules out most of a large tree
        and _candidate(p)
        and (p not in changed or is_test_path(p))
        and not is_excluded(p, globs)
    ]
    jobs: list[tuple[str, str, Callable[[str], bool] | None]] = []
    focus_keys: list[str | None] = []
    for path, text in _read(tree, paths):
        if text is None:
            continue
        index.scanned_files += 1
        test = is_test_path(path)
        index.test_files += test
        # The text's words serve both name sets when either has many names (see NameSet.found).
        words = None if wanted.few and in_tests.few else NameSet.words(text)
        if test:
            tested = in_tests.found(text, words)
            if tested:
                index.add_test_refs(_test_refs(path, text, NameSet(tested)))
        if path in changed:
            continue
        hits = wanted.found(text, words)
        if hits:
            # Only functions that mention a name (or read an alias of one) are walked: see
            # Walker.walk_body. The names this file mentions are the only ones its bodies can.
            jobs.append((path, text, NameSet(hits).mentions))
            focus_keys.append("words:" + "\n".join(sorted(hits)))
    for facts in parse_many(jobs, workers, focus_keys):
        if facts is not None:
            index.parsed_files += 1
            index.add(facts)
    return index
