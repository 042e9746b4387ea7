"""Is a coupled field forced to its neutral value wherever a guard holds? (decided by a truth table)"""

from __future__ import annotations

from dataclasses import replace

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.tables.truthtable import truth_table, written
from reviewbot.lang.facts import AssignKind, Assignment
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import Pred

__all__ = ["field_writes", "forced_neutral"]


def field_writes(d: ChangedDerivation, index: RepoIndex, shown: str) -> list[Assignment]:
    a = d.head
    receiver = a.target.rsplit(".", 1)[0] if "." in a.target else ""
    facts = index.files.get(a.path)
    target = f"{receiver}.{shown}" if receiver else shown
    return [
        w
        for w in (facts.assignments if facts is not None else ())
        if w.function == a.function and w.target == target and w.kind is not AssignKind.BINDING
    ]


def forced_neutral(d: ChangedDerivation, index: RepoIndex, writes: list[Assignment], neutral: str) -> bool:
    """True when, in every row of the truth table where the guard holds, the field ends up `neutral`.

    The table compares the function's writes of the field (head) against a reference that is the
    field forced to `neutral` under the guard (base): no changed row under the guard means forced.
    """
    guard: Pred | None = d.head.guard
    if not writes or guard is None:
        return False
    first = writes[0]
    reference = replace(first, guard=guard, value=neutral, kind=AssignKind.PLAIN, line=d.head.line)
    table = truth_table([ChangedDerivation(head=first, base=(reference,), new_branch=False)], writes, index)
    forced = written(neutral)  # the reference's outcome where the guard holds
    under_guard = [row for row in table.rows if row.base == forced]
    return bool(under_guard) and not any(row.changed for row in under_guard)
