"""The prefilter's `git grep` results, kept between runs and brought up to date by the commit's diff.

A warm review of rtp-llm PR #1361 spent a quarter of its time in two `git grep`s over the 7,600-file
tree (0.1 s each), though the facts of every file they found were cached. Which files mention a set of
words is a function of the tree, so the answer is kept in the facts cache under the words and
pathspecs, with the tree it was computed on:

- the same tree again (a re-run, a re-requested check): the answer as kept;
- another tree (round 2 after a push, the next pull request on the same branch): the kept answer,
  minus the paths `git diff-tree` names between the two trees, plus those of them whose new content
  holds one of the words (read and searched here, as `git grep -w -F` would: whole words, bytes as
  they are). Past `MAX_CHANGED` paths, or when git no longer knows the kept tree, one `git grep` as
  before.

The answer is a superset filter: callers still read each file it names and apply their own test, so
a file counted in that git grep would have skipped (binary, too large to read) costs a read, never a
finding. A cache error only costs the grep it would have saved.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviewbot.lang.cache import FactsCache, active

__all__ = ["GrepHits", "MAX_CHANGED", "cached_grep", "grep_key"]

# A push of a few commits changes tens of paths; a rebase onto a moved base can change thousands, and
# past a few hundred one `git grep` over the tree costs less than reading the changed files here.
MAX_CHANGED = 256


@dataclass(frozen=True)
class GrepHits:
    """The paths of `tree` (a commit id) that hold one of the words of the entry's key, as a repository
    lacking the objects of `lacking` (paths git could not search there) answered it."""

    tree: str
    paths: frozenset[str]
    lacking: frozenset[str] = frozenset()


def grep_key(words: Iterable[str], pathspecs: Iterable[str]) -> str:
    digest = hashlib.sha256(b"grep\0")
    for part in (*sorted(set(words)), "\0", *pathspecs):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return "grep:" + digest.hexdigest()


def _words_pattern(words: Iterable[str]) -> re.Pattern[bytes]:
    # git grep -w in the C locale: a word character is an ASCII letter, digit or underscore.
    body = b"|".join(
        re.escape(w.encode("utf-8", "surrogatepass")) for w in sorted(words, key=len, reverse=True)
    )
    return re.compile(rb"(?<![A-Za-z0-9_])(?:" + body + rb")(?![A-Za-z0-9_])")


def _updated(tree: object, kept: GrepHits, words: set[str]) -> set[str] | None:
    """`kept` brought to `tree` by the paths that differ between the two; None when git cannot say."""
    changed_since: Callable[[str, int], list[str] | None] | None = getattr(tree, "changed_since", None)
    read_bytes_many: Callable[[list[str]], dict[str, bytes | None]] | None = getattr(
        tree, "read_bytes_many", None
    )
    if changed_since is None or read_bytes_many is None:
        return None
    changed = changed_since(kept.tree, MAX_CHANGED)
    if changed is None:
        return None
    pattern = _words_pattern(words)
    hits = set(kept.paths).difference(changed)
    for path, data in read_bytes_many(changed).items():
        # Deleted paths read as None and leave; so does a file too large to read, which no caller
        # could read either.
        if data is not None and pattern.search(data) is not None:
            hits.add(path)
    return hits


def cached_grep(
    tree: object,
    grep: Callable[[set[str], tuple[str, ...]], set[str] | None],
    words: set[str],
    pathspecs: tuple[str, ...],
    store: FactsCache | None = None,
) -> set[str] | None:
    """`grep(words, pathspecs)` over `tree`, through the facts cache in use (`store`, default the active
    one) when the tree names its commit (`tree.sha`); None when git cannot answer (read everything)."""
    store = store if store is not None else active()
    sha = getattr(tree, "sha", None)
    if store is None or not isinstance(sha, str) or not words:
        return grep(words, pathspecs)
    key = grep_key(words, pathspecs)
    kept = store.get_values([key], GrepHits, count=False).get(key)
    # The same commit in another clone may hold objects this one lacks (a mirror that leaves large
    # files out): an answer is only reused where git could search the same files.
    missing: Callable[[], list[str]] | None = getattr(tree, "missing", None)
    lacking = frozenset(missing()) if callable(missing) else frozenset()
    if kept is not None and kept.lacking != lacking:
        kept = None
    if kept is not None and kept.tree == sha:
        return set(kept.paths)
    hits = _updated(tree, kept, words) if kept is not None else None
    if hits is None:
        hits = grep(words, pathspecs)
        if hits is None:
            return None
    store.put_many([(key, GrepHits(sha, frozenset(hits), lacking))])
    return hits
