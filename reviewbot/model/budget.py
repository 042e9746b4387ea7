"""How much work one review round may do, and the process's memory as it goes.

A pull request decides how much reviewbot reads, parses, mutates and stores; without bounds one PR of
5,000 tiny files or one deeply nested expression took a worker to 11.9 GB and past 15 minutes, and
stored 26 MB of report. Each bound here is a setting (`reviewbot.settings.Settings.round_budget`).
Going over one never fails the round: the stage stops or leaves the rest out, a note with the
reason `budget` says what and why, the round is INCOMPLETE, and what was found is still published.
"""

from __future__ import annotations

import os
import resource
from contextvars import ContextVar
from dataclasses import dataclass, fields

__all__ = ["RoundBudget", "DEFAULT_BUDGET", "ROUND_DEADLINE", "rss_mb", "peak_rss_mb"]

# The monotonic time by which the round's analysis must end, for the stage that runs behind a hook
# (the test stage caps its own time budget to it). A ContextVar: each worker thread runs its own round.
ROUND_DEADLINE: ContextVar[float | None] = ContextVar("reviewbot_round_deadline", default=None)


@dataclass(frozen=True)
class RoundBudget:
    """The bounds of one round; every field must be positive.

    Chosen by the operator's settings (`budget`, settings/model.py), held by ReviewSettings and the
    Review; read by the stages it bounds (review/budget.py, the test stage) and by the report's
    fitting to `report_bytes` (report/shrink.py)."""

    files: int = 1000  # changed files analysed; the rest of a larger change is left out
    mutants: int = 64  # mutants run per round (and never two for one changed line)
    # one changed file is parsed up to this size (UTF-8 bytes): llama.cpp's own llama.cpp (259-791 KB)
    # parses in 8-25 s with the process under 270 MB; at 256 KiB six llama.cpp train commits of the corpus were left unparsed (INCOMPLETE)
    parse_bytes: int = 1 << 20
    parse_depth: int = 100  # bracket nesting of one file, before it is parsed
    condition_terms: int = 32  # terms of one changed guard (and/or chains) analysed for tables/mutants
    report_bytes: int = 2 << 20  # the stored report of one round: markdown + JSON
    seconds: float = 600.0  # wall time of the analysis (parse to checks, tests included)
    memory_mb: int = 2048  # resident memory of the process: later stages are skipped past it

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not value > 0:
                raise ValueError(f"budget {f.name} must be positive, not {value}")


DEFAULT_BUDGET = RoundBudget()


def rss_mb() -> float:
    """The resident memory of this process now, in MiB (the peak where the current is unknown)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """The peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
