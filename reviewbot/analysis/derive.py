"""Which derivations and predicates did the change add or alter? (pure; facts in, records out)"""

from __future__ import annotations

from dataclasses import dataclass

from reviewbot.lang.facts import AssignKind, Assignment, FileFacts, PredicateUse
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import ChangeSet

__all__ = ["ChangedDerivation", "assignment_anchor", "changed_derivations", "added_predicates"]


@dataclass(frozen=True)
class ChangedDerivation:
    """A head assignment that the change added or whose guard/value it changed."""

    head: Assignment
    base: tuple[Assignment, ...]  # base writes of the same target in the same function (may be empty)
    new_branch: bool  # the guarded branch did not exist at base (new `if` or new assignment)


def assignment_anchor(a: Assignment) -> str:
    """Line-independent anchor of a guarded write: function, guard and statement."""
    guard = a.guard.key if a.guard is not None else ""
    return f"{a.function or ''}|{guard}|{a.target}={a.value}"


_DERIVATION_KINDS = (AssignKind.PLAIN, AssignKind.TERNARY, AssignKind.AUGMENTED)


def _touched(a: Assignment, added: set[int]) -> bool:
    if a.line in added:
        return True
    if a.guard_line is not None and a.guard_line in added:
        return True
    # A changed enclosing condition further out: any added line between the branch start and the write.
    return a.branch_start is not None and any(a.branch_start <= n <= a.line for n in added)


def _guard_key(a: Assignment) -> str:
    return a.guard.key if a.guard is not None else ""


def changed_derivations(
    change: ChangeSet, base_facts: dict[str, FileFacts], head_facts: dict[str, FileFacts]
) -> list[ChangedDerivation]:
    """Head writes of config fields (dotted targets) that the change added or whose guard/value changed."""
    out: list[ChangedDerivation] = []
    for f in change.files:
        facts = head_facts.get(f.path)
        if facts is None or f.skipped is not None or is_test_path(f.path):
            continue
        added = set(f.added_lines)
        base = base_facts.get(f.old_path or f.path)
        # `self.use_mmap = True` is canonicalised to `use_mmap`: a bare target is a field (not a
        # local variable) when the file declares it as a member with a default.
        members = {d.field for d in facts.defaults}
        for a in facts.assignments:
            if a.kind not in _DERIVATION_KINDS or ("." not in a.target and a.target not in members):
                continue
            if not _touched(a, added):
                continue
            before = tuple(
                b
                for b in (base.assignments if base else ())
                if b.target == a.target and b.function == a.function
            )
            same = [b for b in before if _guard_key(b) == _guard_key(a) and b.value == a.value]
            if same:
                continue  # moved or reformatted, not changed
            new_branch = not any(_guard_key(b) == _guard_key(a) for b in before)
            out.append(ChangedDerivation(head=a, base=before, new_branch=new_branch))
    return out


def added_predicates(change: ChangeSet, head_facts: dict[str, FileFacts]) -> list[PredicateUse]:
    """Predicate uses on added lines of non-test source files."""
    out: list[PredicateUse] = []
    for f in change.files:
        facts = head_facts.get(f.path)
        if facts is None or is_test_path(f.path):
            continue
        added = set(f.added_lines)
        out.extend(p for p in facts.predicates if p.line in added)
    return out
