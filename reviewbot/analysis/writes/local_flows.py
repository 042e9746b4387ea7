"""Derivations through locals: a field write whose value reads a local of its function.

`x = <guarded or computed value>` followed by `self.f = x` (or `cfg.f = x + 1`) is a derivation of `f`
with the local's guard and value (`Assignment.via` names the local); unguarded locals are followed back
(`a = ...; b = a + 1; self.f = b`), and a local that is only one operand of the field's value is inlined
into it. `analysis.derive` decides which writes are derivations and asks this module where their values
come from; the flow of locals is its own question (which writes reach a use, how a value is
substituted), so it lives apart from that decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from reviewbot.lang.facts import AssignKind, Assignment, FileFacts, OwnerVia
from reviewbot.lang.predicate import Pred, conj

__all__ = [
    "DERIVATION_KINDS",
    "Locals",
    "DerivationWrite",
    "guard_key",
    "locals_by_function",
    "flow_names",
    "follow_local",
    "inline",
    "is_param",
]

# The writes of each local, by (function, name).
Locals = dict[tuple[str | None, str], list[Assignment]]

# The writes that carry a value (of a local into a field); `derive` adds a config constructor's keyword.
DERIVATION_KINDS = (AssignKind.PLAIN, AssignKind.TERNARY, AssignKind.AUGMENTED)
_INLINE_MAX = 80  # longest local value inlined into a derivation's value
_MAX_FLOW = 3  # locals followed back from a field write: `a = ...; b = a + 1; self.f = b`
_WORD = re.compile(r"[A-Za-z_]\w*")
_SUBSCRIPT = re.compile(r"\[([^\[\]]*)\]")


@dataclass(frozen=True)
class DerivationWrite:
    """A derivation candidate and the statements whose lines make it change."""

    head: Assignment
    parts: tuple[Assignment, ...]


def guard_key(a: Assignment) -> str:
    """The guard's normalised text ("" unguarded): writes under the same condition share it."""
    return a.guard.key if a.guard is not None else ""


def locals_by_function(facts: FileFacts) -> Locals:
    out: Locals = {}
    for a in facts.assignments:
        if "." not in a.target and a.owner_via is OwnerVia.NONE and a.kind in DERIVATION_KINDS:
            out.setdefault((a.function, a.target), []).append(a)
    return out


def _reaching(writes: list[Assignment], use: Assignment) -> list[Assignment]:
    """Writes of a local that can reach `use` (same function, earlier lines): those after the last
    write that runs whenever `use` runs (no guard, or the same guard)."""
    before = sorted((w for w in writes if w.line < use.line), key=lambda w: (w.line, w.value))
    start = 0
    for i, w in enumerate(before):
        if w.guard is None or guard_key(w) == guard_key(use):
            start = i
    return before[start:]


def _substitute(expr: str, name: str, value: str, ambiguous: bool) -> str:
    """`expr` with the local `name` replaced by its `value`; kept as is when the canonical text cannot
    tell the local from a field of the same name (`inter_size + self.inter_size`)."""
    if expr == name:
        return value
    if ambiguous:
        return expr
    # A function as the replacement: the value is code, and its backslashes (`"\\u00e9"`) are not
    # escapes of a replacement template.
    return re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", lambda _: f"({value})", expr)


def _members_named(a: Assignment, name: str) -> bool:
    """The value of `a` also reads a member called `name` (`self.name`, `this->name`, `x.name`)."""
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", a.value)) > a.names.count(name)


def follow_local(
    head: Assignment, local: str, locals_: Locals
) -> tuple[list[DerivationWrite], list[Assignment]]:
    """`head` (a field write) reads `local`: one derivation per write of the local that reaches it
    (followed back through unguarded locals, `b = a + 1`, up to _MAX_FLOW steps); an unguarded write of
    a local that is only one operand of `head`'s value (`align = tp * 64; self.f = x + pad(align)`)
    is not a derivation of its own but part of `head`'s statement (second list)."""
    out: list[DerivationWrite] = []
    operands: list[Assignment] = []
    frontier: list[tuple[Assignment, str, str, Pred | None, tuple[Assignment, ...], int]] = [
        (head, local, head.value, head.guard, (head,), 0)
    ]
    while frontier:
        use, name, expr, guard, parts, depth = frontier.pop()
        for w in _reaching(locals_.get((use.function, name), []), use):
            if expr != name and w.guard is None and w.kind is AssignKind.PLAIN:
                operands.append(w)
                continue
            value = _substitute(expr, name, w.value, _members_named(use, name))
            nested = [n for n in flow_names(w, locals_) if n != name]
            if nested and w.guard is None and depth + 1 < _MAX_FLOW:
                frontier.extend((w, n, value, guard, (*parts, w), depth + 1) for n in reversed(nested))
                continue
            flow = replace(
                w,
                target=head.target,
                field=head.field,
                value=value,
                guard=conj(w.guard, guard),
                receiver=head.receiver,
                owner=head.owner,
                owner_via=head.owner_via,
                via=name,
                via_line=head.line,
            )
            out.append(DerivationWrite(flow, (*parts, w)))
    return out, operands


def inline(a: Assignment, operands: list[Assignment]) -> Assignment:
    """`a` with each local operand written once before it replaced by that value (`fuse && x` with
    `fuse = c.qk_norm` -> `(c.qk_norm)&&x`), so the derivation reads on its own; long values stay named."""
    value = a.value
    by_name: dict[str, list[Assignment]] = {}
    for w in operands:
        by_name.setdefault(w.target, []).append(w)
    for name in sorted(by_name):
        writes = by_name[name]
        if len(writes) == 1 and len(writes[0].value) <= _INLINE_MAX:
            value = _substitute(value, name, writes[0].value, _members_named(a, name))
    return a if value == a.value else replace(a, value=value)


def flow_names(a: Assignment, locals_: Locals) -> list[str]:
    """Locals whose value flows into `a`: read as written (`x`, not `self.x`), not an index (`w[i]`),
    not a loop counter (`i++`, `i += 1`)."""
    indices = {n for inner in _SUBSCRIPT.findall(a.value) for n in _WORD.findall(inner)}
    out = []
    for n in sorted(set(a.names) - indices):
        writes = locals_.get((a.function, n))
        if writes and not any(w.kind is AssignKind.AUGMENTED for w in writes):
            out.append(n)
    return out


def is_param(value: str, function: str | None, locals_: Locals) -> bool:
    """A bare name (`x`, `_x`; not a constant, `True`, `kMax`) that no statement of the function assigns: a
    parameter (or a global)."""
    if _WORD.fullmatch(value) is None or value in ("True", "False", "None") or (function, value) in locals_:
        return False
    head = value.lstrip("_")[:1]
    return head.islower() and not (value.startswith("k") and value[1:2].isupper())
