"""Dispatch a file to its language front end; parse many files in a process pool."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from reviewbot.lang.cache import active, facts_key
from reviewbot.lang.cpp.macros import declared, extra_macros
from reviewbot.lang.facts import FileFacts, Lang, lang_for_path

__all__ = ["parse_file", "parse_many", "parse_workers", "MIN_PARALLEL"]

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

log = logging.getLogger(__name__)

Focus = Callable[[str], bool]
# Below this many files a pool saves nothing: taking a file's facts back from a worker (unpickling)
# costs this process about half the time parsing it would, so the gain per file is small and only
# outweighs starting workers for many files (measured on two cores: no gain at ~350 files; at 5,000
# files -15% wall for +15% CPU with this process parsing too, against +50% CPU for a plain pool).
MIN_PARALLEL = 512
_WORKERS_ENV = "REVIEWBOT_PARSE_WORKERS"  # 0 or 1: parse in-process (profiling, debugging)
_PRELOAD = ["reviewbot.lang.build", "reviewbot.lang.cpp.parser", "reviewbot.lang.python.parser"]


def parse_file(
    path: str, text: str, focus: Focus | None = None, *, focus_key: str | None = None
) -> FileFacts | None:
    """Facts of one source file, or None when the path is not C++ or Python.

    `focus` limits the walk to function bodies whose text it accepts (plus those reading an alias
    of a focused field); the repository index uses it for files the change did not touch.

    With a facts cache in use (`cache.use`), a full parse, or a focused one whose `focus_key` names
    what the focus accepts, is looked up first and stored after (see `lang/cache.py`).
    """
    return parse_many([(path, text, focus)], 1, [focus_key])[0]


def _parse(path: str, text: str, focus: Focus | None = None) -> FileFacts | None:
    lang = lang_for_path(path)
    if lang is Lang.CPP:
        from reviewbot.lang.cpp import parser as cpp

        return cpp.parse(path, text, focus)
    if lang is Lang.PYTHON:
        from reviewbot.lang.python import parser as python

        return python.parse(path, text, focus)
    return None


def parse_workers(jobs: int, workers: int | None = None) -> int:
    """How many processes parse `jobs` files (this one included): 1 (in-process) for few files, else
    one per usable core.

    `workers` overrides the core count; so does the environment variable REVIEWBOT_PARSE_WORKERS.
    """
    if workers is None:
        env = os.environ.get(_WORKERS_ENV, "").strip()
        workers = int(env) if env.isdigit() else len(os.sched_getaffinity(0))
    return 1 if jobs < MIN_PARALLEL or workers <= 1 else min(workers, jobs // (MIN_PARALLEL // 2))


def _context() -> BaseContext:
    """fork when this process runs one thread (cheap: nothing to import or pickle to the workers);
    else a fork server, since forking a process that holds threads (the App worker) can deadlock."""
    import multiprocessing  # here, not at the top: most reviews never start a pool (start-up time)

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    # The fork server imports the front ends once; each worker is forked from it and re-runs the
    # main module (`reviewbot.cli` imports its commands lazily).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx


def _parse_chunk(jobs: Sequence[tuple[str, str, Focus | None]]) -> list[FileFacts | None]:
    return [_parse(*job) for job in jobs]


def _parse_chunk_declaring(
    jobs: Sequence[tuple[str, str, Focus | None]], macros: tuple[str, ...]
) -> list[FileFacts | None]:
    """`_parse_chunk` in a worker process, with the review's declared C++ macros (a context variable
    does not cross processes)."""
    with declared(macros):
        return _parse_chunk(jobs)


def _parse_pooled(jobs: Sequence[tuple[str, str, Focus | None]], n: int) -> list[FileFacts | None]:
    """`n - 1` workers take chunks from the front while this process parses from the back.

    This process has to unpickle what the workers return (about half the time parsing it took), so
    it shares the parsing rather than waiting: fewer files cross processes and `n` cores stay busy.
    Chunks are large because this process, busy parsing, feeds the workers and drains their results
    only when it switches threads.
    """
    from concurrent.futures import ProcessPoolExecutor

    size = max(16, min(256, len(jobs) // (n * 4)))
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    results: list[list[FileFacts | None] | None] = [None] * len(chunks)
    with ProcessPoolExecutor(n - 1, mp_context=_context()) as pool:
        macros = extra_macros()
        futures = [pool.submit(_parse_chunk_declaring, chunk, macros) for chunk in chunks]
        for i in reversed(range(len(chunks))):
            if not futures[i].cancel():
                break  # the workers have taken this chunk, hence all before it (they go in order)
            results[i] = _parse_chunk(chunks[i])
        for i, future in enumerate(futures):
            if results[i] is None:
                results[i] = future.result()
    return [facts for chunk in results if chunk is not None for facts in chunk]


def parse_many(
    jobs: Sequence[tuple[str, str, Focus | None]],
    workers: int | None = None,
    focus_keys: Sequence[str | None] | None = None,
) -> list[FileFacts | None]:
    """`parse_file` of each (path, text, focus), in order; with `parse_workers` processes when many.

    A `focus` should pickle (a module-level function or a bound method of a picklable object). When
    the pool cannot run (no processes allowed, a focus that does not pickle, a main module that
    starts a review on import), the files are parsed in this process instead. With a facts cache
    in use and `focus_keys` given (one per job, see `parse_file`), cached facts are taken first and
    only the rest is parsed (and then stored).
    """
    store = active()
    if store is None or focus_keys is None:
        return _parse_all(jobs, workers)
    # The repository's own C++ macros change what a C++ file parses to: they are part of its key.
    macros = extra_macros()
    salt = "\0macros:" + ",".join(macros) if macros else ""
    keys = [
        facts_key(path, text + salt if salt and lang_for_path(path) is Lang.CPP else text, fk)
        if focus is None or fk is not None
        else None
        for (path, text, focus), fk in zip(jobs, focus_keys, strict=True)
    ]
    found = store.get_many(k for k in keys if k is not None)
    todo = [i for i, k in enumerate(keys) if k is None or k not in found]
    parsed = _parse_all([jobs[i] for i in todo], workers)
    out: list[FileFacts | None] = [found.get(k) if k is not None else None for k in keys]
    fresh: list[tuple[str, FileFacts]] = []
    for i, facts in zip(todo, parsed, strict=True):
        out[i] = facts
        key = keys[i]
        if key is not None and facts is not None:
            fresh.append((key, facts))
    store.put_many(fresh)
    return out


def _parse_all(
    jobs: Sequence[tuple[str, str, Focus | None]], workers: int | None = None
) -> list[FileFacts | None]:
    n = parse_workers(len(jobs), workers)
    if n > 1:
        try:
            return _parse_pooled(jobs, n)
        except Exception as exc:  # parse_file never raises: this is the pool failing, not a file
            log.warning("parsing %d files in this process: the worker pool failed (%r)", len(jobs), exc)
    return _parse_chunk(jobs)
