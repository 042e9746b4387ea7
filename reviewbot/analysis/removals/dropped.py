"""Dropped guards (pure): a statement that ran under a condition at base runs under fewer in the head.

The first of the three shapes `analysis.removals.guards` reports, and the one with the most judgement of its
own: pairing each guarded base statement with the same statement, rewritten, in the same function of the
head; keeping only statements that carry a configuration decision (an environment write, a config
validation, a derivation); and leaving out branches that were merged, flags that only ever held one
constant (dead code), and a fill-if-unset turned into a default set before the input is parsed.
`removed.removal_names` also reads the pairs, to tell the index which flags and constructors to learn
about.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.derive import derivation_writes
from reviewbot.analysis.removals.records import Removal, RemovalKind
from reviewbot.analysis.removals.terms import about_config, mentioned_names, touches
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import Clause, ClauseKind, written_atoms
from reviewbot.lang.facts import Assignment, FileFacts
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.owners import is_constant_value

__all__ = ["dropped_conditions", "dropped_guards", "flag_of"]

_TRIVIAL = re.compile(r"^(?:pass|return|break|continue|return None|return True|return False|\.\.\.)$")


def dropped_conditions(s: Side) -> list[tuple[Clause, Clause, frozenset[str]]]:
    """(base statement, head statement, the conditions it lost) for each statement that kept its text."""
    assert s.base is not None and s.head is not None
    out: list[tuple[Clause, Clause, frozenset[str]]] = []
    used: set[int] = set()
    # The head statement was rewritten, or the condition around it was (C++ keeps the statement's line
    # when only the `if` changes).
    head = [h for h in s.head.clauses if touches(h, s.added)]
    for c in s.base.clauses:
        if not c.guards or not touches(c, s.removed) or _TRIVIAL.match(c.text):
            continue
        near = s.head_line(c.line)
        options = [
            h
            for h in head
            if h.kind is c.kind and h.text == c.text and h.function == c.function and h.line not in used
        ]
        if not options:
            continue
        h = min(options, key=lambda h: (abs(h.line - near), h.line))
        lost = c.guard_atoms - h.guard_atoms
        if not lost or h.guard_atoms - c.guard_atoms:
            continue  # nothing dropped, or the conditions were rewritten
        used.add(h.line)
        out.append((c, h, lost))
    return out


_FLAG = re.compile(r"^(?:not )?\(?((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*))\)?$")


def flag_of(atom: str) -> str:
    """The field a condition tests as a flag (`cfg.use_x`, `not (self.use_x)`): its name; "" otherwise."""
    m = _FLAG.match(atom.replace("not (", "not ").rstrip(")") if atom.startswith("not (") else atom)
    return m.group(2) if m is not None and "." in m.group(1) else ""


def _constant_flag(name: str, index: RepoIndex) -> bool:
    """Every write and default of the field in the head sets one and the same constant: a condition
    on it always took the same branch, so dropping it removes dead code, not a decision."""
    values = {w.value for w in index.writers(name) if w.kind.value != "binding" and not is_test_path(w.path)}
    values |= {d.value for d in index.defaults(name)}
    return len(values) == 1 and is_constant_value(next(iter(values)))


def _writes_at(facts: FileFacts | None, c: Clause) -> list[Assignment]:
    if facts is None:
        return []
    return [a for a in facts.assignments if c.line <= a.line <= c.end_line]


def _decides(c: Clause, s: Side) -> bool:
    """A statement that carries a configuration decision: an environment write, a validation of the
    configuration, a derivation (a write of a config owner's field or a switch, see
    `derive.derivation_writes`) — not a local, a call, a log line or a write into a helper object."""
    if c.kind is ClauseKind.ENV_WRITE:
        return True
    if c.kind.validates:
        return about_config(c, s)
    if c.kind is not ClauseKind.ASSIGN or s.base_facts is None:
        return False
    derived = {(d.via_line or d.line, d.field) for d, _ in derivation_writes(s.base_facts)}
    return any((a.line, a.field) in derived for a in _writes_at(s.base_facts, c))


def _merged(c: Clause, lost: frozenset[str], s: Side) -> bool:
    """At base the same target was also written on the other side of a lost condition (`if a: x = f`
    / `elif ...: x = g`): the change merged branches that both wrote it, it did not drop a guard."""
    assert s.base is not None
    targets = {a.target for a in _writes_at(s.base_facts, c)}
    if not targets:
        return False
    negated = {f"not ({atom})" for atom in lost} | {atom[5:-1] for atom in lost if atom.startswith("not (")}
    for other in s.base.clauses:
        if other is c or other.function != c.function or not (other.guard_atoms & negated):
            continue
        if targets & {a.target for a in _writes_at(s.base_facts, other)}:
            return True
    return False


# A test that the statement's own target is unset: `not x`, `!x`, `x.empty()`, `x is None`, `x == 0`,
# `x <= 0` (never `x` or `!x.empty()`: those test that it is set).
_NAME = r"(?P<x>[A-Za-z_][\w.:>-]*?)"
_UNSET = re.compile(
    rf"^(?:(?:not \(?|!\s*\(?){_NAME}\)?"
    rf"|\(?{_NAME.replace('x>', 'y>')}\)?(?:\.empty\(\)|\s+is None|\s*==\s*(?:None|nullptr|NULL|0|\"\"|'')|\s*<=?\s*0))$"
)


def _unset_test(atom: str, target: str) -> bool:
    m = _UNSET.match(atom.strip())
    name = (m.group("x") or m.group("y")) if m is not None else None
    return name is not None and name.replace("->", ".") == target.replace("->", ".")


def _hands_over(clauses: Iterable[Clause], function: str, root: str) -> set[str]:
    """The calls of `function` that pass the whole object `root` (`gpt_params_parse(argc, argv, params)`,
    `parse_args(argv, namespace=args)`), as written (the call text is what base and head compare)."""
    handed = re.compile(rf"[\w.]+\s*\((?:[^()]*[,(=]\s*)?&?{re.escape(root)}\s*[,)]")
    return {
        m.group(0)
        for x in clauses
        if x.function == function
        for t in (x.text, *(g.text for g in x.guards))
        for m in handed.finditer(t)
        if _READS_INPUT.search(m.group(0))
    }


# A call that fills the object from the user's input: a parser (`gpt_params_parse`, `parse_args`), one
# given the command line (`argv`) or argparse's `namespace=`; not one the settings are passed on to.
_READS_INPUT = re.compile(r"(?i)(?<![a-z])pars(?:e|er|ing)|\bargv\b|namespace\s*=|from_(?:cli|args|argv)")


def _default_before_input(c: Clause, h: Clause, lost: frozenset[str], s: Side) -> bool:
    """`if (params.prompt.empty()) params.prompt = "Hello";` after `gpt_params_parse(argc, argv,
    params)` became `params.prompt = "Hello";` before it: the value is still only a default, which the
    user's input replaces; set-if-unset kept its meaning though the guard went. Every lost condition
    tests the written field for unset (`x.empty()`, `x is None`, `not x`), and a call that fills the
    whole object from the input (a parser, `argv`, `namespace=args`) now runs after the write where it
    did not at base. A call that passes the settings on (`run_server(params)`) proves nothing."""
    assert s.base is not None and s.head is not None
    targets = {a.target for a in _writes_at(s.base_facts, c)}
    if len(targets) != 1:
        return False
    target = next(iter(targets))
    if not all(_unset_test(atom, target) for atom in lost):
        return False
    root = re.split(r"\.|->", target, maxsplit=1)[0]
    if root == target or root in ("self", "this"):
        return False  # a local or a member of the object itself: nothing hands it over to be filled
    after_at_base = _hands_over((x for x in s.base.clauses if x.line > c.end_line), c.function, root)
    after_in_head = _hands_over((x for x in s.head.clauses if x.line > h.end_line), h.function, root)
    return bool(after_in_head - after_at_base)


def dropped_guards(s: Side, index: RepoIndex) -> list[Removal]:
    """One removal per function and lost condition, at the first statement that lost it."""
    out: dict[tuple[str, frozenset[str]], Removal] = {}
    for c, h, lost in dropped_conditions(s):
        if not _decides(c, s) or _merged(c, lost, s) or _default_before_input(c, h, lost, s):
            continue
        flags = [flag_of(a) for a in lost]
        if all(flags) and all(_constant_flag(f, index) for f in flags):
            continue  # the guard tested a flag nothing ever sets otherwise: dead code went
        first = min(g.line for g in c.guards)
        key = (c.function, lost)
        if key not in out:
            out[key] = Removal(
                RemovalKind.GUARD, s.path, h.line, s.old_path, (first, c.end_line), c.function, c.text,
                tuple(sorted(lost)), names=mentioned_names(c),
                shown=tuple(w for g in c.guards for a, w in written_atoms(g).items() if a in lost),
            )  # fmt: skip
    return list(out.values())
