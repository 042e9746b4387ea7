"""What a forced flag turns off: the statements its read sites gate, where forcing it decides them.

A derivation `if (G) flag = false;` turns off, at every read of `flag` in a condition, the branch that
runs only while the flag is true — `if (cfg.flag) { ... }`, `if a and cfg.flag:` — and, for a flag forced
true, the branch that runs only while it is false. A branch the flag does not decide alone (the
then-branch of `if a or flag:`, the else-branch of `if a and flag:`) is not turned off. Read sites
come from the followed call graph (files parsed in full) and the repository index; the aliases the
front ends resolve (`self.need_rope = cfg.need_rope_kv_cache`) count as reads. `feasible_skipped`
leaves out the sites the guard rules out (`analysis.coupled.feasible`). Pure: facts in, records out, by path
and line.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewbot.analysis.coupled.feasible import blocked_by, ruled_out
from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.lang.calls import CallGraph
from reviewbot.lang.common import last_component, mentions_field
from reviewbot.lang.facts import FieldRead, FileFacts, GatedStmt
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred

__all__ = ["Skipped", "skipped_behaviour", "feasible_skipped", "facts_of"]

_BOOLS = ("True", "False")


@dataclass(frozen=True)
class Skipped:
    """A statement the forced flag turns off, at one read site of the flag."""

    path: str
    line: int
    text: str
    function: str | None
    read_line: int  # the condition that reads the flag
    alias: str = ""  # the read went through this alias (`self.need_rope`), bound at `alias_line`
    alias_line: int | None = None
    last_line: int | None = None  # the statement may continue up to here (the next gated statement)

    @property
    def lines(self) -> set[int]:
        return set(range(self.line, (self.last_line or self.line) + 1))


def facts_of(graph: CallGraph | None, index: RepoIndex, path: str) -> FileFacts | None:
    found = graph.facts(path) if graph is not None else None
    return found if found is not None else index.files.get(path)


def _flag_sites(d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None) -> list[FieldRead]:
    field = d.head.field
    sites: dict[tuple[str, int], FieldRead] = {}
    followed = set(graph.files) if graph is not None else set()
    for path in sorted(followed):
        facts = graph.files[path] if graph is not None else None
        for r in facts.reads if facts is not None else ():
            if r.field == field and r.in_condition:
                sites.setdefault((r.path, r.line), r)
    for r in index.reads(field):
        if r.in_condition and r.path not in followed:
            sites.setdefault((r.path, r.line), r)
    return [r for _, r in sorted(sites.items()) if not is_test_path(r.path)]


def _is_literal_of(p: Pred, names: set[str]) -> bool:
    atom = p.arg if isinstance(p, Not) else p
    return isinstance(atom, Atom) and any(mentions_field(atom.text, n) for n in names)


def _certainly_skipped(facts: FileFacts, r: FieldRead, value: str) -> bool:
    """Forcing the flag to `value` certainly turns off the branch `skipped_behaviour` takes at read `r`.

    The branch run while the flag is true (`gated`) or false (`gated_else`). A condition that is the
    flag alone decides both; in a conjunction (`if a and flag:`) the flag decides only the then-branch,
    in a disjunction (`if a or flag:`) only the else-branch. Conditions nested deeper, or with the flag
    below the top level, are not taken as certain.
    """
    names = {r.field, last_component(r.expr)}
    # The condition the read is in: it starts on the read's line or above (`if (a\n && cfg.flag)`).
    uses = [
        p
        for p in facts.predicates
        if p.line <= r.line and p.function == r.function and any(mentions_field(p.text, n) for n in names)
    ]
    if not uses:
        return True  # a condition the front end did not record as a predicate: the read decides
    pred = max(uses, key=lambda p: (p.line, p.text)).pred
    if _is_literal_of(pred, names):
        return True
    then_branch = (value == "False") != r.negated  # the branch skipped is the `if` branch
    if isinstance(pred, And) and any(_is_literal_of(a, names) for a in pred.args):
        return then_branch
    if isinstance(pred, Or) and any(_is_literal_of(a, names) for a in pred.args):
        return not then_branch
    return False


def skipped_behaviour(
    d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None
) -> list[tuple[Skipped, GatedStmt]]:
    """The statements the forced value turns off, at every read site of the flag."""
    value = d.head.value
    if value not in _BOOLS:
        return []
    out: list[tuple[Skipped, GatedStmt]] = []
    for r in _flag_sites(d, index, graph):
        facts = facts_of(graph, index, r.path)
        if facts is None or not _certainly_skipped(facts, r, value):
            continue
        stmts = r.gated if value == "False" else r.gated_else
        for s, after in zip(stmts, (*stmts[1:], None)[: len(stmts)], strict=True):
            # A statement spans the lines up to the next gated one (`f(\n  cfg.x)`); the last, its own.
            last = after.line - 1 if after is not None and after.line > s.line else s.line
            sk = Skipped(r.path, s.line, s.text, r.function, r.line, r.alias or "", r.alias_line, last)
            out.append((sk, s))
    return out


def feasible_skipped(
    d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None
) -> list[tuple[Skipped, GatedStmt]]:
    """`skipped_behaviour` without the sites the guard rules out (a decode implementation when the
    guard turns the KV cache off)."""
    rules = ruled_out(d.head.guard)
    return [
        (sk, s)
        for sk, s in skipped_behaviour(d, index, graph)
        if blocked_by((sk.function or "",), rules) is None
    ]
