"""A content-addressed cache of parsed facts, shared by rounds, pull requests and worker processes.

Parsing is most of a review's cost on a real repository, and most of what a round parses did not
change since the last one: round 2 of a pull request, the next pull request on the same repository,
and every worker of the App parse the same blobs. Facts of one file are a pure function of its path,
its text, the focus (which names the walk looks for) and the analyser, so they are kept under a key
made of exactly those:

- the path and a hash of the text (the blob's content, wherever it came from);
- the focus: a text naming what the walk looked for (the kind of match and the sorted names);
- the analyser: reviewbot's version, a hash of the `lang/` package's own source (a cache written by
  one build of the front ends is never read by another) and the tree-sitter grammar versions.

Storage is one SQLite file in WAL mode (concurrent readers and one writer at a time, safe across
processes), values are zlib-compressed pickles of `FileFacts`, and the file is bounded: once over its
size limit the least recently used entries go. Any cache error (a locked or corrupt file, a full disk)
only costs the parse it would have saved; the review's result never depends on the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import pickle
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TypeVar

from reviewbot import __version__
from reviewbot.lang.facts import FileFacts

__all__ = ["FactsCache", "active", "analyser_version", "facts_key", "open_cache", "use"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    size INTEGER NOT NULL,
    used REAL NOT NULL
)
"""
_GRAMMARS = ("tree-sitter", "tree-sitter-python", "tree-sitter-cpp")


@cache
def analyser_version() -> str:
    """reviewbot's version, the hash of the front ends' source and the grammar versions."""
    digest = hashlib.sha256(__version__.encode())
    for source in sorted(Path(__file__).parent.rglob("*.py")):  # the subpackages too
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    for dist in _GRAMMARS:
        try:
            digest.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist}=?".encode())
    return digest.hexdigest()[:20]


def facts_key(path: str, text: str, focus: str | None) -> str:
    """The cache key of one parse: analyser, path, text and what the focus accepts (a text naming it,
    e.g. `words:` and the sorted names; None for a full parse)."""
    digest = hashlib.sha256(analyser_version().encode())
    for part in (path, text, focus if focus is not None else "\0full"):
        digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class FactsCache:
    """Facts by key in one SQLite file of at most `max_bytes` (least recently used entries go first)."""

    def __init__(self, path: Path, max_bytes: int = 256 << 20) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False
        # Bytes this process stored since it last summed the file's size: `_trim` sums the table (a
        # scan of every row) only when they could have taken the file over its bound, not on every
        # store (which made storing n files cost n^2). Other processes' stores are theirs to trim.
        self._unsummed: int | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is None and not self._broken:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(_SCHEMA)
                self._db = db
            except (sqlite3.Error, OSError) as exc:
                self._give_up(exc)
        return self._db

    def _give_up(self, exc: BaseException) -> None:
        log.warning("facts cache %s unusable, parsing without it: %s", self.path, exc)
        self._broken = True
        self._db = None

    def get_many(self, keys: Iterable[str]) -> dict[str, FileFacts]:
        """The cached facts of those keys that are present (and readable)."""
        return self.get_values(keys, FileFacts)

    def get_values(self, keys: Iterable[str], kind: type[T], count: bool = True) -> dict[str, T]:
        """Cached values of type `kind` (facts, or what is derived from one file's text alone: its
        call sites; a tree's grep results) of those keys that are present and readable. `count`:
        add to `hits` and `misses` (the KPI's facts-cache figures count parses saved, not greps)."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, T] = {}
        with self._lock:
            db = self._connect()
            if db is None or not wanted:
                self.misses += len(wanted) if count else 0
                return out
            try:
                for i in range(0, len(wanted), 500):
                    chunk = wanted[i : i + 500]
                    marks = ",".join("?" * len(chunk))
                    for key, value in db.execute(
                        f"SELECT key, value FROM facts WHERE key IN ({marks})", chunk
                    ):
                        with contextlib.suppress(Exception):  # an unreadable entry is a miss
                            found = pickle.loads(zlib.decompress(value))
                            if isinstance(found, kind):
                                out[key] = found
                if out:
                    now = time.time()
                    db.executemany("UPDATE facts SET used = ? WHERE key = ?", [(now, k) for k in out])
            except sqlite3.Error as exc:
                self._give_up(exc)
            if count:
                self.hits += len(out)
                self.misses += len(wanted) - len(out)
        return out

    def get(self, key: str) -> FileFacts | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple[str, object]]) -> None:
        """Store facts; then trim the file to its bound."""
        now = time.time()
        rows = []
        for key, facts in items:
            value = zlib.compress(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL), 1)
            rows.append((key, value, len(value), now))
        if not rows:
            return
        with self._lock:
            db = self._connect()
            if db is None:
                return
            try:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)", rows)
                self._trim(db, sum(size for _, _, size, _ in rows))
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                self._give_up(exc)

    def put(self, key: str, facts: object) -> None:
        self.put_many([(key, facts)])

    def _trim(self, db: sqlite3.Connection, stored: int) -> None:
        if self._unsummed is not None and self._unsummed + stored <= self.max_bytes // 64:
            self._unsummed += stored  # at most 1/64 of the bound over it (until the next check)
            return
        (total,) = db.execute("SELECT COALESCE(SUM(size), 0) FROM facts").fetchone()
        self._unsummed = 0
        if total <= self.max_bytes:
            return
        # Down to 80% of the bound, oldest use first, so that trimming is rare.
        excess = total - int(self.max_bytes * 0.8)
        doomed: list[str] = []
        for key, size in db.execute("SELECT key, size FROM facts ORDER BY used"):
            doomed.append(key)
            excess -= size
            if excess <= 0:
                break
        db.executemany("DELETE FROM facts WHERE key = ?", [(k,) for k in doomed])

    def size(self) -> int:
        """Bytes of stored values."""
        with self._lock:
            db = self._connect()
            if db is None:
                return 0
            return int(db.execute("SELECT COALESCE(SUM(size), 0) FROM facts").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


_ACTIVE: FactsCache | None = None
_OPEN: dict[Path, FactsCache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(cache_dir: Path, max_mb: int) -> FactsCache | None:
    """The facts cache in `cache_dir` (one per file and process: the App's worker keeps its
    connection between rounds); None when `max_mb` is 0 (caching off)."""
    if max_mb <= 0:
        return None
    path = cache_dir / "facts.sqlite"
    with _OPEN_LOCK:
        found = _OPEN.get(path)
        if found is None:
            found = _OPEN[path] = FactsCache(path, max_mb << 20)
        found.max_bytes = max_mb << 20
        return found


def active() -> FactsCache | None:
    """The cache the parses of this process use (None: none)."""
    return _ACTIVE


@contextlib.contextmanager
def use(cache_: FactsCache | None) -> Iterator[FactsCache | None]:
    """Parse with `cache_` (None: without a cache) inside the block."""
    global _ACTIVE
    previous, _ACTIVE = _ACTIVE, cache_
    try:
        yield cache_
    finally:
        _ACTIVE = previous
