"""Dispatch a file to its language front end; parse many files in a process pool."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from reviewbot.lang.facts import FileFacts, Lang, lang_for_path

__all__ = ["parse_file", "parse_many", "parse_workers", "MIN_PARALLEL"]

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

log = logging.getLogger(__name__)

Focus = Callable[[str], bool]
# Below this many files the pool saves nothing: the main process spends about 40% of a file's parse
# time taking its facts back (unpickling), so on two cores the gain is small per file and only outweighs
# starting the workers for many files (bench/bench_review.py: no gain at ~350 files, -2.5 s wall and
# +1.5 s CPU at 4,500).
MIN_PARALLEL = 512
_WORKERS_ENV = "REVIEWBOT_PARSE_WORKERS"  # 0 or 1: parse in-process (profiling, debugging)
_PRELOAD = ["reviewbot.lang.build", "reviewbot.lang.cpp", "reviewbot.lang.python"]


def parse_file(path: str, text: str, focus: Focus | None = None) -> FileFacts | None:
    """Facts of one source file, or None when the path is not C++ or Python.

    `focus` limits the walk to function bodies whose text it accepts (plus those reading an alias
    of a focused field); the repository index uses it for files the change did not touch.
    """
    lang = lang_for_path(path)
    if lang is Lang.CPP:
        from reviewbot.lang import cpp

        return cpp.parse(path, text, focus)
    if lang is Lang.PYTHON:
        from reviewbot.lang import python

        return python.parse(path, text, focus)
    return None


def parse_workers(jobs: int, workers: int | None = None) -> int:
    """How many processes parse `jobs` files: 1 (in-process) for few files, else one per usable core.

    `workers` overrides the core count; so does the environment variable REVIEWBOT_PARSE_WORKERS.
    """
    if workers is None:
        env = os.environ.get(_WORKERS_ENV, "").strip()
        workers = int(env) if env.isdigit() else len(os.sched_getaffinity(0))
    return 1 if jobs < MIN_PARALLEL or workers <= 1 else min(workers, jobs // (MIN_PARALLEL // 2))


def _parse_job(job: tuple[str, str, Focus | None]) -> FileFacts | None:
    return parse_file(*job)


def _context() -> BaseContext:
    """fork when this process runs one thread (cheap: nothing to import or pickle to the workers);
    else a fork server, since forking a process that holds threads (the App worker) can deadlock."""
    import multiprocessing  # here, not at the top: most reviews never start a pool (start-up time)

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    # The fork server imports the front ends once; each worker is forked from it and re-runs the
    # main module (`reviewbot.cli` imports its commands lazily).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)  # type: ignore[attr-defined]
    return ctx


def parse_many(
    jobs: Sequence[tuple[str, str, Focus | None]], workers: int | None = None
) -> list[FileFacts | None]:
    """`parse_file` of each (path, text, focus), in order; in a process pool when there are many.

    A `focus` should pickle (a module-level function or a bound method of a picklable object). When
    the pool cannot run (no processes allowed, a focus that does not pickle, a main module that
    starts a review on import), the files are parsed in this process instead.
    """
    n = parse_workers(len(jobs), workers)
    if n > 1:
        from concurrent.futures import ProcessPoolExecutor

        chunk = max(1, min(32, len(jobs) // (n * 8)))
        try:
            with ProcessPoolExecutor(n, mp_context=_context()) as pool:
                return list(pool.map(_parse_job, jobs, chunksize=chunk))
        except Exception as exc:  # parse_file never raises: this is the pool failing, not a file
            log.warning("parsing %d files in this process: the worker pool failed (%r)", len(jobs), exc)
    return [parse_file(*job) for job in jobs]
