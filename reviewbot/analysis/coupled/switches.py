"""Config switches a forced flag silently turns off: the behaviour it gates, followed into calls.

A derivation `if (G) flag = false;` skips, at every read site of `flag`, the code the flag gates
(`analysis.coupled.skipped`). That code may consume other config fields (`use_logn_attn` inside the fused
kernel the flag skips). This module follows each skipped statement up to two call levels further
(`reviewbot.lang.calls`, inherited methods included) and collects the config fields consumed there.
For each it records what decides whether losing it matters:

- whether the guard constrains it, or the same derivation function forces it to a neutral value
  whenever the guard holds (decided with a truth table);
- whether it is a switch (declared `bool`, or an enum read in a condition) — sizes and dtypes passed
  to a kernel keep their meaning wherever else the kernel's work is done;
- whether the guard makes it irrelevant (`rope_config.dim` when the guard pins the rope style to `No`);
- which of its consumers lie on paths that can run while the guard holds (`feasible`: no decode path
  when the guard turns the KV cache off);
- whether anything else reads it (`readers`): a switch read on another path keeps its effect.

Pure: facts in, records out; every list is ordered by a stable key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewbot.analysis.coupled.feasible import RuledOut, blocked_by, moot_reason, ruled_out
from reviewbot.analysis.coupled.forced import field_writes, forced_neutral
from reviewbot.analysis.coupled.readers import Readers, exclusively_reached, other_readers
from reviewbot.analysis.coupled.skipped import Skipped, facts_of, feasible_skipped, skipped_behaviour
from reviewbot.analysis.coupled.switch_kind import owner_family, switch_kind
from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.configs import guard_fields, shared
from reviewbot.lang.calls import Callee, CallGraph, owner_of
from reviewbot.lang.common import last_component
from reviewbot.lang.facts import Assignment, FieldRead, FileFacts, Function
from reviewbot.lang.index import RepoIndex

__all__ = ["Consumer", "CoupledField", "coupled_fields", "callees_of_skipped", "config_family"]

_BOOLS = ("True", "False")
_NAME = re.compile(r"[A-Za-z_]\w*")
MAX_CALL_LEVELS = 2


@dataclass(frozen=True)
class Consumer:
    """Where a config field takes effect inside skipped code."""

    field: str  # as displayed: `use_logn_attn`, `rope_config.dim`
    path: str
    line: int
    function: str | None
    gates: str  # what the read gates or the statement it is read in
    skipped: Skipped
    chain: tuple[str, ...] = ()  # call steps from the skipped statement to this function
    neutral: str = "False"  # the value under which this consumer does nothing
    alias: str = ""
    alias_line: int | None = None
    in_condition: bool = False  # the field is tested (`if cfg.x:`), not passed on
    through: tuple[str, ...] = ()  # the functions and classes of the call chain (for `feasible`)

    @property
    def key(self) -> tuple[int, str, int, str, int, tuple[str, ...]]:
        """A total order: shortest chain first, then by place (consumer, skipped site, chain)."""
        sk = self.skipped
        return (len(self.chain), self.path, self.line, sk.path, sk.line, self.chain)

    def names(self) -> tuple[str, ...]:
        """Every function and class on the path, the skipped site's function first."""
        return (self.skipped.function or "", *self.through, self.function or "")


@dataclass(frozen=True)
class CoupledField:
    field: str
    consumers: tuple[Consumer, ...]  # every consumer found, by `Consumer.key`
    constrained: bool  # the guard (or what its atoms are derived from) tests the field
    forced: str = ""  # non-empty: how the derivation function forces it neutral under the guard
    writes: tuple[Assignment, ...] = ()  # writes of the field in the derivation function
    switch: str = ""  # "bool" | "enum" | "" (not a switch: a size, a dtype, a path)
    declared: str = ""  # where its type or default was read: `AttentionConfig.h:40`
    default: str = ""  # its declared default, canonical (`False`), when known
    moot: str = ""  # non-empty: why the guard makes the field irrelevant
    feasible: tuple[Consumer, ...] = ()  # consumers on paths that can run while the guard holds
    blocked: str = ""  # why the other consumers cannot run (`!use_kvcache`: decoding needs a KV cache)
    readers: Readers = Readers(scanned=False)

    @property
    def neutral(self) -> str:
        """The value under which the skipped code does nothing with the field: as its first test reads
        it (`if (x)` acts when true, so false is neutral), else false."""
        return _neutral_of(list(self.feasible or self.consumers))

    @property
    def lost(self) -> bool:
        """A switch that loses all its effect whenever the rule fires (see the module doc)."""
        return (
            not self.constrained
            and not self.forced
            and bool(self.switch)
            and not self.moot
            and bool(self.feasible)
            and self.readers.scanned
            and not self.readers.elsewhere
            and not self.readers.widely_read
        )


def config_family(d: ChangedDerivation, index: RepoIndex) -> set[str]:
    """Field names of the derived object: members of the flag's declaring type(s) and the siblings the
    derivation function writes on the same receiver (`config.x = ...`)."""
    a = d.head
    owners = {fd.owner for fd in index.defaults(a.field)}
    family = {fd.field for facts in index.files.values() for fd in facts.defaults if fd.owner in owners}
    # Members declared without a default (`RopeConfig rope_config;`) belong to it too.
    family.update(decl.field for owner in sorted(owners) for decl in index.fields_of(owner))
    receiver = a.target.rsplit(".", 1)[0] if "." in a.target else ""
    facts = index.files.get(a.path)
    if receiver and facts is not None:
        for w in facts.assignments:
            if w.function == a.function and w.target.startswith(receiver + "."):
                family.add(w.target[len(receiver) + 1 :].split(".", 1)[0])
    family.discard(a.field)
    return family


def _display(r: FieldRead, facts: FileFacts, family: set[str]) -> str | None:
    """The config field a read consumes, relative to the config object (`rope_config.style`), or None."""
    path = r.expr
    if r.alias and r.alias_line is not None:
        bound = [
            w for w in facts.assignments if w.line == r.alias_line and w.field == last_component(r.alias)
        ]
        if bound:
            path = bound[0].value
    parts = path.split(".")
    for i, part in enumerate(parts[:-1] if len(parts) > 1 else []):
        if part in family:
            return ".".join(parts[i:])
    return r.field if r.field in family else None


def _roots(graph: CallGraph | None, index: RepoIndex, family: set[str]) -> set[str]:
    """Names that hold the config object: receivers of config-field reads (the flag's included) and
    what they are copied to."""
    roots: set[str] = set()
    files = list(graph.files.values()) if graph is not None else list(index.files.values())
    for facts in files:
        for r in facts.reads:
            parts = r.expr.split(".")
            if len(parts) >= 2 and (r.field in family or any(p in family for p in parts[1:-1])):
                roots.add(parts[0])
    # Copies both ways: `cfg = attn_configs` makes `cfg` hold it; `cfg_(cfg)` (a member initialised from
    # a parameter) makes the parameter hold it too.
    for facts in files:
        for w in facts.assignments:
            if "." not in w.target and w.value in roots:
                roots.add(w.target)
            elif w.target in roots and _NAME.fullmatch(w.value):
                roots.add(w.value)
    return roots


def _describe_read(r: FieldRead, facts: FileFacts) -> str:
    stmts = r.gated if r.gated else r.gated_else
    if r.in_condition and stmts:
        return f"gates `{stmts[0].text}` ({r.path}:{stmts[0].line})"
    writes = [w.text for w in facts.assignments if w.line == r.line and w.text]
    return f"`{writes[0]}`" if writes else f"read at {r.path}:{r.line}"


def _neutral(r: FieldRead) -> str:
    # A condition whose true branch does nothing acts when the field is false: true is then neutral.
    return "True" if r.in_condition and not r.gated and r.gated_else else "False"


class _Walk:
    def __init__(self, index: RepoIndex, graph: CallGraph | None, family: set[str], flag: str) -> None:
        self.index = index
        self.graph = graph
        self.family = family
        self.flag = flag
        self.roots = _roots(graph, index, family | {flag})
        self.reached: set[tuple[str, str | None]] = set()  # functions the skipped code runs

    def consumers_at(
        self,
        facts: FileFacts,
        function: str | None,
        lines: set[int] | None,
        skipped: Skipped,
        chain: tuple[str, ...],
        through: tuple[str, ...] = (),
    ) -> list[Consumer]:
        out: list[Consumer] = []
        for r in facts.reads:
            if r.function != function or (lines is not None and r.line not in lines) or r.field == self.flag:
                continue
            shown = _display(r, facts, self.family)
            if shown is None:
                continue
            out.append(
                Consumer(
                    field=shown,
                    path=r.path,
                    line=r.line,
                    function=function,
                    gates=_describe_read(r, facts),
                    skipped=skipped,
                    chain=chain,
                    neutral=_neutral(r),
                    alias=r.alias or "",
                    alias_line=r.alias_line,
                    in_condition=r.in_condition,
                    through=through,
                )
            )
        return out

    def follow(
        self,
        path: str,
        function: str | None,
        lines: set[int] | None,
        skipped: Skipped,
        chain: tuple[str, ...],
        through: tuple[str, ...] = (),
    ) -> list[Consumer]:
        if self.graph is None or len(chain) >= MAX_CALL_LEVELS:
            return []
        out: list[Consumer] = []
        for site in self.graph.sites_in(path, function, lines):
            for callee in self.graph.resolve(site, self.roots):
                step = _step(callee)
                if step in chain:
                    continue
                fn = callee.function
                facts = self.graph.facts(fn.path)
                if facts is None:
                    continue
                self.reached.add((fn.path, fn.name))
                names = (*through, *([callee.cls] if callee.cls else []), fn.name)
                out.extend(self.consumers_at(facts, fn.name, None, skipped, (*chain, step), names))
                out.extend(self.follow(fn.path, fn.name, None, skipped, (*chain, step), names))
        return out


def _step(c: Callee) -> str:
    via = f" of the object built in {c.via}" if c.via else ""
    fn = c.function
    return f"{c.site.path}:{c.site.line} `{c.site.callee}` runs `{fn.name}` ({fn.path}:{fn.start_line}){via}"


def callees_of_skipped(
    d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None
) -> list[tuple[Skipped, Function, tuple[str, ...]]]:
    """Functions the skipped statements run, up to two call levels deep, on paths that can run while
    the guard holds (for what the comment claims)."""
    if graph is None:
        return []
    walk = _Walk(index, graph, config_family(d, index), d.head.field)
    rules = ruled_out(d.head.guard)
    out: list[tuple[Skipped, Function, tuple[str, ...]]] = []

    def visit(
        path: str, function: str | None, lines: set[int] | None, sk: Skipped, chain: tuple[str, ...]
    ) -> None:
        if len(chain) >= MAX_CALL_LEVELS:
            return
        for site in graph.sites_in(path, function, lines):
            for c in graph.resolve(site, walk.roots):
                step = _step(c)
                if step in chain or blocked_by((c.cls, c.function.name), rules) is not None:
                    continue
                out.append((sk, c.function, (*chain, step)))
                visit(c.function.path, c.function.name, None, sk, (*chain, step))

    for sk, _ in feasible_skipped(d, index, graph):
        visit(sk.path, sk.function, sk.lines, sk, ())
    return out


def coupled_fields(d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None) -> list[CoupledField]:
    """Config fields consumed by the code the forced flag skips, one record per field, by name.

    Two checks ask for the same derivation (guard-ignores-coupled-flag, comment-guard-mismatch): the
    answer is kept with the index, under the derivation and graph it was computed for (kept alive with
    it, so their ids cannot be reused meanwhile)."""
    return list(shared("coupled_fields", index, (d, graph), lambda: tuple(_coupled_fields(d, index, graph))))


def _coupled_fields(d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None) -> list[CoupledField]:
    if d.head.guard is None or d.head.value not in _BOOLS:
        return []
    family = config_family(d, index)
    walk = _Walk(index, graph, family, d.head.field)
    consumers: list[Consumer] = []
    skipped_lines: set[tuple[str, int]] = set()
    for sk, _ in skipped_behaviour(d, index, graph):
        facts = facts_of(graph, index, sk.path)
        if facts is None:
            continue
        skipped_lines.update((sk.path, line) for line in sk.lines)
        consumers.extend(walk.consumers_at(facts, sk.function, sk.lines, sk, ()))
        consumers.extend(walk.follow(sk.path, sk.function, sk.lines, sk, ()))
    tested = guard_fields(d.head.guard, index)
    rules = ruled_out(d.head.guard)
    by_field: dict[str, list[Consumer]] = {}
    for c in consumers:
        by_field.setdefault(c.field, []).append(c)
    out: list[CoupledField] = []
    inside: set[tuple[str, str | None]] | None = None  # computed once, for the first candidate
    for shown, found in sorted(by_field.items()):
        found = sorted(set(found), key=lambda c: c.key)
        constrained = last_component(shown) in tested
        writes = field_writes(d, index, shown)
        owner, owners = owner_family(d, index, shown)
        kind, declared, default = switch_kind(index, owner, shown, any(c.in_condition for c in found))
        feasible = [c for c in found if blocked_by(c.names(), rules) is None]
        blocked = next((r for c in found if (r := blocked_by(c.names(), rules)) is not None), None)
        neutral = _neutral_of(feasible or found)
        forced = ""
        if not constrained and forced_neutral(d, index, writes, neutral):
            where = ", ".join(sorted({f"{w.path}:{w.line}" for w in writes}))
            forced = f"`{shown}` is forced to `{neutral}` whenever the guard holds ({where})"
        lost_candidate = kind and not constrained and not forced and feasible
        if lost_candidate and graph is not None and inside is None:
            inside = exclusively_reached(
                walk.reached, graph, skipped_lines, rules, last_component(d.head.field)
            )
        readers = (
            other_readers(
                last_component(shown),
                index,
                graph,
                inside or set(),
                skipped_lines,
                rules,
                _family(owners, found),
            )
            if lost_candidate
            else Readers(scanned=False)
        )
        out.append(
            CoupledField(
                shown,
                tuple(found),
                constrained,
                forced,
                tuple(writes),
                switch=kind,
                declared=declared,
                default=default,
                moot=moot_reason(d.head.guard, shown),
                feasible=tuple(feasible),
                blocked=_blocked_text(blocked),
                readers=readers,
            )
        )
    return out


def _family(owners: frozenset[str], found: list[Consumer]) -> frozenset[str]:
    """The owner types whose reads of the switch are its own: the config's family and, with it, the
    classes whose methods hold the consumers, which read the member bare (`check_tensors` in
    `llama_model_loader::load_all_data`, built from `params.check_tensors`; dev-scan sample 13: a read
    in the other branch went unseen)."""
    if not owners:
        return owners
    return owners | {h for c in found if (h := owner_of(c.function)) is not None}


def _neutral_of(consumers: list[Consumer]) -> str:
    tests = [c for c in consumers if c.in_condition]
    return (tests or consumers)[0].neutral if consumers else "False"


def _blocked_text(rule: RuledOut | None) -> str:
    return f"`{rule.literal}`: {rule.why}" if rule is not None else ""
