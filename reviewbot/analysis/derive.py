"""Which derivations and predicates did the change add or alter? (pure; facts in, records out)

A *derivation* is a write of an owner's field whose value or guard depends on something (other fields,
the environment, constants), or a write of a local that flows into such a field:

- `config.x = ...` (a dotted target) and `self.x = ...` / `this->x = ...` / a bare member written in a
  method of a *config owner* (`Owner.config`: dataclasses, pydantic/attrs models, C++ structs with
  member defaults, types named like configuration; see `lang/owners.py`) or of a class whose field has
  a declared default;
- `x = <guarded or computed value>` followed by `self.f = x` (or `cfg.f = x + 1`): the local's write
  is a derivation of `f` (`Assignment.via` names the local), with the local's guard and value;
- not a constructor's declaration (`self.x = False`, `self.x = x` unguarded in `__init__` / a
  constructor), not a plain unguarded copy of a parameter (`self.x = x`), not pickling
  (`__setstate__`).

A derivation changed when any line of its statement (a multi-line statement counts as a whole), of its
guarding condition, or of the block between the condition and the statement was added or edited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from reviewbot.lang.facts import AssignKind, Assignment, FileFacts, OwnerVia, PredicateUse
from reviewbot.lang.index import DEFAULT_EXCLUDES, is_excluded, is_test_path
from reviewbot.lang.owners import PICKLING, is_config_name, is_constant_value, is_init_function
from reviewbot.lang.predicate import Pred, conj
from reviewbot.model.change import ChangeSet

__all__ = [
    "ChangedDerivation",
    "assignment_anchor",
    "changed_derivations",
    "added_predicates",
    "derivation_writes",
]


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
_MAX_FLOW = 3  # locals followed back from a field write: `a = ...; b = a + 1; self.f = b`
_WORD = re.compile(r"[A-Za-z_]\w*")
_SUBSCRIPT = re.compile(r"\[([^\[\]]*)\]")
_CONFIG_WORD = re.compile(
    r"(?i)conf|cfg|(?:^|_)(?:params?|parameters|args|arguments|settings|options|opts)$|^(?:params|args)_"
)


@dataclass(frozen=True)
class _Write:
    """A derivation candidate and the statements whose lines make it change."""

    head: Assignment
    parts: tuple[Assignment, ...]


def _lines(a: Assignment) -> tuple[int, int]:
    start = a.stmt_start if a.stmt_start is not None else a.line
    end = a.stmt_end if a.stmt_end is not None else a.line
    return min(start, a.line), max(end, a.line)


def _touched(a: Assignment, added: set[int]) -> bool:
    start, end = _lines(a)
    if any(start <= n <= end for n in added):
        return True
    if a.guard_line is not None and a.guard_line in added:
        return True
    # A changed enclosing condition further out: any added line between the branch start and the write.
    return a.branch_start is not None and any(a.branch_start <= n <= a.line for n in added)


def _guard_key(a: Assignment) -> str:
    return a.guard.key if a.guard is not None else ""


def _function_short(function: str | None) -> str:
    return (function or "").replace("::", ".").rsplit(".", 1)[-1]


def _config_classes(facts: FileFacts) -> set[str]:
    """Config owners declared in this file (`Owner.config`)."""
    return {o.name for o in facts.owners if o.config}


def _configish(name: str) -> bool:
    """A receiver or member named like configuration: `config`, `cfg`, `attn_config`, `params`, `args`."""
    return _CONFIG_WORD.search(name) is not None


def _is_field_write(a: Assignment, config: set[str], defaults: set[tuple[str, str]]) -> bool:
    """A write of a config owner's field (see the module doc)."""
    if a.owner_via is OwnerVia.SELF and "." not in a.owner:
        # `self.x` (Python: the class is in this file) or a C++ member write (the class may be
        # declared in a header: its name then has to say it holds configuration).
        return a.owner in config or is_config_name(a.owner) or (a.owner, a.field) in defaults
    if "." in a.target:
        # `cfg.x = ...`: the object's type or name has to say it holds configuration; a weights
        # struct or a tensor (`weight.data_type`, `layers[i].kernel`) is not one.
        if a.owner:
            root, *members = a.owner.split(".")
            if root in config or is_config_name(root) or any(_configish(m) for m in members):
                return True
        return any(_configish(part) for part in a.target.split(".")[:-1])
    return a.lang.value == "cpp" and any(a.target == f for _, f in defaults)


def _is_declaration(a: Assignment, copies_param: bool) -> bool:
    """A constructor's declaration (`self.x = False`, `self.x = x`) or a plain unguarded copy of a
    parameter (`self.x = x`): a setting, not a derivation."""
    if a.guard is not None or a.kind is not AssignKind.PLAIN:
        return False
    if copies_param:
        return True
    return is_init_function(a.function) and is_constant_value(a.value)


def _locals_by_function(facts: FileFacts) -> dict[tuple[str | None, str], list[Assignment]]:
    out: dict[tuple[str | None, str], list[Assignment]] = {}
    for a in facts.assignments:
        if "." not in a.target and a.owner_via is OwnerVia.NONE and a.kind in _DERIVATION_KINDS:
            out.setdefault((a.function, a.target), []).append(a)
    return out


def _reaching(writes: list[Assignment], use: Assignment) -> list[Assignment]:
    """Writes of a local that can reach `use` (same function, earlier lines): those after the last
    write that runs whenever `use` runs (no guard, or the same guard)."""
    before = sorted((w for w in writes if w.line < use.line), key=lambda w: (w.line, w.value))
    start = 0
    for i, w in enumerate(before):
        if w.guard is None or _guard_key(w) == _guard_key(use):
            start = i
    return before[start:]


def _substitute(expr: str, name: str, value: str) -> str:
    if expr == name:
        return value
    return re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", f"({value})", expr)


def _flows(
    head: Assignment, local: str, locals_: dict[tuple[str | None, str], list[Assignment]]
) -> list[_Write]:
    """`head` (a field write) takes its value from `local`; one derivation per write of the local that
    reaches it, followed back through unguarded locals (`b = a + 1`) up to _MAX_FLOW steps."""
    out: list[_Write] = []
    frontier: list[tuple[Assignment, str, str, Pred | None, tuple[Assignment, ...], int]] = [
        (head, local, head.value, head.guard, (head,), 0)
    ]
    while frontier:
        use, name, expr, guard, parts, depth = frontier.pop()
        for w in _reaching(locals_.get((use.function, name), []), use):
            value = _substitute(expr, name, w.value)
            nested = [n for n in _flow_names(w, locals_) if n != name]
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
            out.append(_Write(flow, (*parts, w)))
    return out


def _flow_names(a: Assignment, locals_: dict[tuple[str | None, str], list[Assignment]]) -> list[str]:
    """Locals whose value flows into `a`: not an index (`w[i]`), not a loop counter (`i++`, `i += 1`)."""
    indices = {n for inner in _SUBSCRIPT.findall(a.value) for n in _WORD.findall(inner)}
    out = []
    for n in sorted(set(_WORD.findall(a.value)) - indices):
        writes = locals_.get((a.function, n))
        if writes and not any(w.kind is AssignKind.AUGMENTED for w in writes):
            out.append(n)
    return out


def _is_param(
    value: str, function: str | None, locals_: dict[tuple[str | None, str], list[Assignment]]
) -> bool:
    """A bare lower-case name that no statement of the function assigns: a parameter (or a global)."""
    return _WORD.fullmatch(value) is not None and value[:1].islower() and (function, value) not in locals_


def derivation_writes(facts: FileFacts) -> list[tuple[Assignment, tuple[Assignment, ...]]]:
    """The derivations of one file: (derivation, the statements whose lines belong to it).

    Field writes stand for themselves; a field write whose value reads locals of its function becomes
    one derivation per write of those locals that reaches it (see `ChangedDerivation`)."""
    config = _config_classes(facts)
    defaults = {(d.owner, d.field) for d in facts.defaults}
    locals_ = _locals_by_function(facts)
    out: list[_Write] = []
    for a in facts.assignments:
        if a.kind not in _DERIVATION_KINDS or _function_short(a.function) in PICKLING:
            continue
        if not _is_field_write(a, config, defaults):
            continue
        names = _flow_names(a, locals_)
        flows = [f for n in names for f in _flows(a, n, locals_)]
        if flows:
            out.extend(flows)
            continue
        if _is_declaration(a, _is_param(a.value, a.function, locals_)):
            continue
        out.append(_Write(a, (a,)))
    out.sort(key=lambda w: (w.head.line, w.head.target, w.head.value, _guard_key(w.head)))
    return [(w.head, w.parts) for w in out]


def _same(a: Assignment, b: Assignment) -> bool:
    return _guard_key(a) == _guard_key(b) and a.value == b.value


def changed_derivations(
    change: ChangeSet,
    base_facts: dict[str, FileFacts],
    head_facts: dict[str, FileFacts],
    exclude: Sequence[str] = DEFAULT_EXCLUDES,
) -> list[ChangedDerivation]:
    """Head derivations that the change added or whose guard/value it changed (vendored trees, matched
    by `exclude` globs, are not reviewed)."""
    out: list[ChangedDerivation] = []
    for f in change.files:
        facts = head_facts.get(f.path)
        if facts is None or f.skipped is not None or is_test_path(f.path) or is_excluded(f.path, exclude):
            continue
        added = set(f.added_lines)
        base = base_facts.get(f.old_path or f.path)
        # Earlier writes of the same target: the base's own statements and its derivations through locals.
        base_writes = (
            list(base.assignments) + [b for b, _ in derivation_writes(base)] if base is not None else []
        )
        seen: set[tuple[int, str, str, str]] = set()
        for a, parts in derivation_writes(facts):
            if not any(_touched(p, added) for p in parts):
                continue
            key = (a.line, a.target, a.value, _guard_key(a))
            if key in seen:
                continue
            seen.add(key)
            before = tuple(b for b in base_writes if b.target == a.target and b.function == a.function)
            if any(_same(b, a) for b in before):
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
