"""The repository index: every repository-wide lookup a check needs, built once per round.

Checks never scan files themselves; they ask this index (other writers of a field, read sites,
uses of a predicate, tests that mention a name, defaults). `build_index` fills it from a
RepoTree; the lookups are dictionary hits.
"""

from __future__ import annotations

import fnmatch
import heapq
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from reviewbot.lang.facts import Assignment, FieldDefault, FieldRead, FileFacts, PredicateUse
from reviewbot.lang.predicate import Pred, compound_parts, loose_key
from reviewbot.lang.semantic import OwnerModel

__all__ = ["TestRef", "RepoIndex", "is_test_path", "DEFAULT_EXCLUDES", "is_excluded"]

# Vendored and third-party trees: their code is not the project's, so it is never searched or indexed.
# Globs match the whole path (`*` crosses `/`); `.reviewbot.toml`'s `[review] exclude` adds more.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    "3rdparty/*",
    "third_party/*",
    "vendor/*",
    "external/*",
    "*/3rdparty/*",
    "*/third_party/*",
    "*/vendor/*",
    "*/external/*",
)


@lru_cache(maxsize=64)
def _exclude_pattern(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    parts = [fnmatch.translate(g + "*" if g.endswith("/") else g) for g in globs if g.strip()]
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


def is_excluded(path: str, globs: Sequence[str] = DEFAULT_EXCLUDES) -> bool:
    """`path` lies in a vendored tree (or matches one of `globs`); such files are never searched."""
    pattern = _exclude_pattern(tuple(globs))
    return pattern is not None and pattern.match(path) is not None


@lru_cache(maxsize=1 << 16)
def is_test_path(path: str) -> bool:
    """Test files by the common conventions of both languages (pytest, gtest, bazel)."""
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(p in ("test", "tests", "testing", "unittest", "unittests") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith(("_test.py", "_test.cc", "_test.cpp", "_tests.cc", "_unittest.cc", "test.cc"))
        or name.endswith(("_test.cu", "_spec.py"))
        or name in ("conftest.py",)
    )


@dataclass(frozen=True)
class TestRef:
    """A line in a test file that mentions a searched name."""

    path: str
    line: int
    text: str
    name: str  # which searched name matched


@lru_cache(maxsize=1 << 14)
def _pred_keys(pred: Pred) -> frozenset[str]:
    # The predicate itself (also a single atom such as `if (flag)`) and every compound sub-predicate:
    # `a && b` inside `q || (a && b)` is a use of it. Cached: a repository repeats its predicates.
    return frozenset({loose_key(pred)} | {loose_key(sub) for sub in compound_parts(pred)})


def _ref_key(r: TestRef) -> tuple[str, int, str]:
    return (r.path, r.line, r.name)


@dataclass
class RepoIndex(OwnerModel):
    """Facts of the indexed files by the names checks look up; owner matching is `OwnerModel`'s
    (`writers_of(owner, field)`, `readers_of`, `owner_of`, `env_reads`, `bindings_of`)."""

    files: dict[str, FileFacts] = field(default_factory=dict)
    test_refs: dict[str, list[TestRef]] = field(default_factory=lambda: defaultdict(list))
    scanned_files: int = 0  # files read while building
    parsed_files: int = 0  # files parsed with tree-sitter
    test_files: int = 0
    _writers: dict[str, list[Assignment]] = field(default_factory=lambda: defaultdict(list))
    _reads: dict[str, list[FieldRead]] = field(default_factory=lambda: defaultdict(list))
    _preds: dict[str, list[PredicateUse]] = field(default_factory=lambda: defaultdict(list))
    _defaults: dict[str, list[FieldDefault]] = field(default_factory=lambda: defaultdict(list))
    _enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reused_files: int = 0  # changed files whose facts were reused instead of parsed again
    _sorted_refs: dict[str, list[TestRef]] = field(default_factory=dict)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES  # globs of paths never searched (see `is_excluded`)

    def is_excluded(self, path: str) -> bool:
        """`path` is in a vendored tree or an excluded glob: not the project's code, never searched."""
        return is_excluded(path, self.exclude)

    def add(self, facts: FileFacts) -> None:
        self.files[facts.path] = facts
        for a in facts.assignments:
            self._writers[a.field].append(a)
        for r in facts.reads:
            self._reads[r.field].append(r)
        for p in facts.predicates:
            for key in _pred_keys(p.pred):
                self._preds[key].append(p)
        for d in facts.defaults:
            self._defaults[d.field].append(d)
        self._enums.update(facts.enums)
        self.add_semantics(facts)

    def add_test_refs(self, refs: Iterable[TestRef]) -> None:
        for r in refs:
            self.test_refs[r.name].append(r)
            self._sorted_refs.pop(r.name, None)

    def writers(self, field_name: str) -> list[Assignment]:
        return list(self._writers.get(field_name, ()))

    def reads(self, field_name: str) -> list[FieldRead]:
        return list(self._reads.get(field_name, ()))

    def predicate_uses(self, loose: str) -> list[PredicateUse]:
        return list(self._preds.get(loose, ()))

    def defaults(self, field_name: str) -> list[FieldDefault]:
        return list(self._defaults.get(field_name, ()))

    def enum_members(self, enum_name: str) -> tuple[str, ...]:
        return self._enums.get(enum_name, ())

    def _refs_of(self, name: str) -> list[TestRef]:
        # Sorted once per name: missing-tests asks for a common function name once per derivation.
        found = self._sorted_refs.get(name)
        if found is None:
            found = sorted(set(self.test_refs.get(name, ())), key=_ref_key)
            self._sorted_refs[name] = found
        return found

    def tests_mentioning(self, names: Iterable[str]) -> list[TestRef]:
        """Test lines that mention one of `names`, by path, line and name."""
        lists = [found for n in dict.fromkeys(names) if (found := self._refs_of(n))]
        if len(lists) <= 1:
            return list(lists[0]) if lists else []
        # Refs of different names differ (by name): merging the sorted lists needs no deduplication.
        return list(heapq.merge(*lists, key=_ref_key))
