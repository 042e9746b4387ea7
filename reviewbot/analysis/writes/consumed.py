"""Whether the value an earlier write left was used before a later write replaced it (pure): then the
later write is a reset after use, not an override that makes the earlier derivation dead."""

from __future__ import annotations

import re
from dataclasses import replace

from reviewbot.analysis.writes.scopes import FileScopes, ScopeKind
from reviewbot.lang.common import has_word
from reviewbot.lang.facts import Assignment

__all__ = ["consumed"]


def consumed(a: Assignment, last: Assignment, scopes: FileScopes | None) -> bool:
    """`last`'s value was consumed before `a` replaced it: cleared after a use, or read by its loop."""
    return (
        _cleared_after_use(a, last, scopes)
        or _read_by_its_loop(a, last, scopes)
        or _filled_in_then_read(a, last, scopes)
    )


def _filled_in_then_read(a: Assignment, last: Assignment, scopes: FileScopes | None) -> bool:
    """`last` only fills the field in while it is unset (its guard names the field: `if not
    hasattr(state, "last_event_time")`, `if x.t is None`), and a statement before `a` reads it: an
    initial value used, then replaced (an interval timer: dev-scan sample 13, torchtitan b2cd149f6)."""
    return (
        scopes is not None
        and last.guard is not None
        and has_word(last.guard_text, last.field or last.target.rsplit(".", 1)[-1])
        and _read_between(a, scopes, last.stmt_end or last.line, a.line)
    )


def _root(target: str) -> str:
    return re.split(r"[.\[]", target, maxsplit=1)[0]


def _cleared_after_use(a: Assignment, last: Assignment, scopes: FileScopes | None) -> bool:
    """Used, then cleared (`free(self.buffers)`; `self.buffers = []`): clean-up, not a dead value. A
    real value written after a read still replaces the setting for everything after it."""
    return (
        scopes is not None
        and a.value.replace(" ", "") in _RESET
        and _read_between(a, scopes, last.stmt_end or last.line, a.line)
    )


# Values that clear a field after use rather than set it.
_RESET = frozenset(
    {"None", "nullptr", "[]", "{}", "()", "0", '""', "''", "False", "false", "set()", "dict()", "list()"}
)


def _read_between(a: Assignment, scopes: FileScopes, after: int, before: int) -> bool:
    """Whether a statement between two writes reads the field (`free(self.buffers)` between
    `self.buffers += pinned` and `self.buffers = []`), or may through a call: the first write's value
    was consumed. An update (`x += n`) reads it; a plain write (`x = v`) does not."""
    if before - after < 2:
        return False
    field, root = re.escape(a.field or a.target.rsplit(".", 1)[-1]), re.escape(a.receiver or _root(a.target))
    mention = re.compile(rf"(?:\.|->|\b){field}\b(?!\s*=(?!=))")
    # A method of the same object, or a call handed it, may read the field (`self._path = p;
    # module = self.module_state_dict(); self._path = None`: the callee reads `self._path`).
    handed = re.compile(rf"\b{root}\s*(?:\.|->)\s*\w+\s*\(|[(,]\s*{root}\s*[,)]")
    between = scopes.source(after + 1, before - 1)
    return bool(mention.search(between) or handed.search(between))


def _read_by_its_loop(a: Assignment, last: Assignment, scopes: FileScopes | None) -> bool:
    """`a` resets the field (`0`, `None`, `[]`) after a loop holding `last`, whose other statements read
    the field or hand its object to a call: the next iteration consumes each value before the reset
    (`ctx.batch_size_offset += n` per micro-batch, `ctx.batch_size_offset = 0` after: dev-scan sample 12,
    Megatron 629b6150f)."""
    if scopes is None or a.value.replace(" ", "") not in _RESET:
        return False
    loops = [sc for sc in scopes.around(last.line) if sc.kind == ScopeKind.LOOP and not sc.holds(a.line)]
    if not loops:
        return False
    loop, first, end = loops[0], last.stmt_start or last.line, last.stmt_end or last.line
    # the loop's other statements (the write's own `+=` reads only what it then replaces), and a call
    # on the object the field hangs off (`self._forward(...)` for `self.ctx.offset`)
    outer = replace(last, receiver=re.split(r"\.|->", last.receiver or _root(last.target))[0])
    return any(
        _read_between(w, scopes, after, before)
        for w in (last, outer)
        for after, before in ((loop.start - 1, first), (end, loop.end + 1))
    )
