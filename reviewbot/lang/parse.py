"""Dispatch a file to its language front end; parse many files in a process pool."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

from reviewbot.lang.facts import FileFacts, Lang, lang_for_path

__all__ = ["parse_file", "parse_many", "parse_workers", "MIN_PARALLEL"]

Focus = Callable[[str], bool]
# Below this many files, starting worker processes (about 0.1-0.2 s each) costs more than it saves.
MIN_PARALLEL = 48
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


def _context() -> multiprocessing.context.BaseContext:
    # Not fork: the caller may hold threads (the App worker) and pipes (git cat-file) a forked child
    # would inherit. The fork server imports the front ends once; each worker is forked from it (and
    # re-runs the main module, `reviewbot.cli`, which imports its commands lazily).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)  # type: ignore[attr-defined]
    return ctx


def parse_many(
    jobs: Sequence[tuple[str, str, Focus | None]], workers: int | None = None
) -> list[FileFacts | None]:
    """`parse_file` of each (path, text, focus), in order; in a process pool when there are many.

    A `focus` must pickle (a module-level function or a bound method of a picklable object).
    """
    n = parse_workers(len(jobs), workers)
    if n <= 1:
        return [parse_file(*job) for job in jobs]
    chunk = max(1, min(32, len(jobs) // (n * 8)))
    with ProcessPoolExecutor(n, mp_context=_context()) as pool:
        return list(pool.map(_parse_job, jobs, chunksize=chunk))
