"""Switches a change introduces, and writes guarded by one (pure).

A write under a switch the change adds (`if args.grad_reduce_in_bf16: args.accumulate_allreduce_grads_in_fp32
= False`, with `--grad-reduce-in-bf16` new in the same change) replaces other settings only for who turns
the new switch on: that is what the switch asks for, and nobody had it on before. The override rules read
it as the switch's job, not as an override of what the user set (dev-scan sample 9).
"""

from __future__ import annotations

import re

from reviewbot.lang.facts import Assignment
from reviewbot.lang.predicate import Atom, plain_conjuncts
from reviewbot.model.change import ChangeSet

__all__ = ["new_switch_guard", "new_switches", "not_this_changes", "touched"]

# `parser.add_argument("--grad-reduce-in-bf16", action="store_true")`, a dataclass or pydantic bool field
# (`grad_reduce_in_bf16: bool = False`), a C++ bool member (`bool grad_reduce_in_bf16 = false;`).
_OPTION = re.compile(r"""add_argument\(\s*["']--([A-Za-z][\w-]*)["']""")
_PY_FIELD = re.compile(r"^\s*([a-z_]\w*)\s*:\s*(?:bool|Optional\[bool\])\s*=")
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh")
_CPP_FIELD = re.compile(r"^\s*bool\s+([a-z_]\w*)\s*(?:=|\{|;)")


def new_switches(change: ChangeSet) -> set[str]:
    """The option destinations and bool fields that lines the change adds declare."""
    found: set[str] = set()
    for f in change.files:
        if f.head_text is None or f.skipped is not None:
            continue
        lines = f.head_text.split("\n")
        for n in f.added_lines:
            line = lines[n - 1] if 0 < n <= len(lines) else ""
            found.update(m.replace("-", "_") for m in _OPTION.findall(line))
            # a C++ member is declared in a header; `bool unsupported = ...;` in a function is a local
            field = _PY_FIELD if f.path.endswith(".py") else _CPP_FIELD if f.path.endswith(_HEADERS) else None
            m = field.match(line) if field is not None else None
            if m:
                found.add(m.group(1))
    return found


def new_switch_guard(a: Assignment, change: ChangeSet, switches: set[str] | None = None) -> bool:
    """`a`'s guard requires a switch the change declares (a plain conjunction that tests it un-negated),
    which the base of `a`'s file never named: only who turns it on runs the write."""
    parts = plain_conjuncts(a.guard) if a.guard is not None else None
    if not parts:
        return False
    f = change.file(a.path)
    before = set(re.findall(r"\w+", f.base_text)) if f is not None and f.base_text else set()
    tested = {
        m.group(1)
        for c in parts
        if isinstance(c, Atom)  # tested un-negated
        for m in re.finditer(r"(?:\.|\b)([a-z_]\w*)\b(?!\s*\()", c.text)
    }
    if not tested:
        return False
    return bool((tested & (new_switches(change) if switches is None else switches)) - before)


def touched(a: Assignment, change: ChangeSet) -> bool:
    """The change wrote `a`'s statement or one of its enclosing conditions. An untouched write whose inputs changed
    (`has_mtp = prepare(..., has_external_mtp)` after a new `has_external_mtp`) overrode the same
    settings before the change (dev-scan sample 9)."""
    f = change.file(a.path)
    if f is None:
        return True
    lines = set(range(min(a.stmt_start or a.line, a.line), max(a.stmt_end or a.line, a.line) + 1))
    if a.guard_line:
        lines.add(a.guard_line)
    for first, last in a.guard_spans:
        lines.update(range(first, last + 1))
    return bool(lines & set(f.added_lines))


def not_this_changes(a: Assignment, change: ChangeSet, switches: set[str] | None = None) -> bool:
    """The override is not one this change makes: it leaves the write and its guard as they were, or
    the write only runs for who turns on a switch the change introduces (`switches`: `new_switches`
    of the change, computed once by a caller that asks for many writes)."""
    return not touched(a, change) or new_switch_guard(a, change, switches)
