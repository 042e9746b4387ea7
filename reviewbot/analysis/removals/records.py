"""The record of what a change removes (a guard, a validation, a derivation), apart from the detection.

`analysis.removals.guards` finds removals, `analysis.removals.dropped` finds the first of their three shapes, and the
guard-removed rule reads them: all three need `RemovalKind` and `Removal`, so the records live here, in a
module of their own that imports nothing, and `analysis.removals.guards` re-exports them for its callers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["RemovalKind", "Removal"]


class RemovalKind(str, Enum):
    GUARD = "guard"  # the statement stays, a condition around it went
    VALIDATION = "validation"
    DERIVATION = "derivation"


@dataclass(frozen=True)
class Removal:
    kind: RemovalKind
    path: str  # head path; `line` is where the head statement is (GUARD) or where the removed lines were
    line: int
    base_path: str
    base_lines: tuple[int, int]  # first and last removed line of what went (base numbering)
    function: str
    text: str  # the statement (canonical)
    lost: tuple[str, ...]  # the conditions that no longer hold it (GUARD), or that held what went
    target: str = ""  # DERIVATION: the field or environment variable written
    shown: tuple[str, ...] = ()  # GUARD: the conditions that lost an atom, as written
    names: tuple[str, ...] = ()  # identifiers a test of this would mention (field, variable, function)
