"""Config fields that a forced flag silently turns off: the behaviour it gates, followed into calls.

A derivation `if (G) flag = false;` skips, at every read site of `flag`, the code the flag gates. That
code may consume other config fields (`use_logn_attn` inside the fused kernel the flag skips). This
module follows each read site (with the aliasing the front ends resolve) into the gated statements and
up to two call levels further (`reviewbot.lang.calls`), and collects the config fields consumed there.
For each it says whether the guard constrains it and whether the same derivation function forces it to
a neutral value whenever the guard holds (decided with a truth table). Pure: facts in, records out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach import guard_fields
from reviewbot.analysis.truthtable import Outcome, truth_table
from reviewbot.lang.calls import Callee, CallGraph
from reviewbot.lang.common import last_component, mentions_field
from reviewbot.lang.facts import AssignKind, Assignment, FieldRead, FileFacts, Function, GatedStmt
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.predicate import Or, Pred

__all__ = ["Consumer", "Skipped", "CoupledField", "coupled_fields", "skipped_behaviour", "config_family"]

_BOOLS = ("True", "False")
MAX_CALL_LEVELS = 2


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


@dataclass(frozen=True)
class CoupledField:
    field: str
    consumers: tuple[Consumer, ...]
    constrained: bool  # the guard (or what its atoms are derived from) tests the field
    forced: str = ""  # non-empty: how the derivation function forces it neutral under the guard
    writes: tuple[Assignment, ...] = ()  # writes of the field in the derivation function


def _facts(graph: CallGraph | None, index: RepoIndex, path: str) -> FileFacts | None:
    found = graph.facts(path) if graph is not None else None
    return found if found is not None else index.files.get(path)


def config_family(d: ChangedDerivation, index: RepoIndex) -> set[str]:
    """Field names of the derived object: members of the flag's declaring type(s) and the siblings the
    derivation function writes on the same receiver (`config.x = ...`)."""
    a = d.head
    owners = {fd.owner for fd in index.defaults(a.field)}
    family = {fd.field for facts in index.files.values() for fd in facts.defaults if fd.owner in owners}
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
    for facts in files:
        for w in facts.assignments:
            if "." not in w.target and w.value in roots:
                roots.add(w.target)
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

    def consumers_at(
        self,
        facts: FileFacts,
        function: str | None,
        lines: set[int] | None,
        skipped: Skipped,
        chain: tuple[str, ...],
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
                out.extend(self.consumers_at(facts, fn.name, None, skipped, (*chain, step)))
                out.extend(self.follow(fn.path, fn.name, None, skipped, (*chain, step)))
        return out


def _step(c: Callee) -> str:
    via = f" of the object built in {c.via}" if c.via else ""
    fn = c.function
    return f"{c.site.path}:{c.site.line} `{c.site.callee}` runs `{fn.name}` ({fn.path}:{fn.start_line}){via}"


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


def _in_disjunction(facts: FileFacts, r: FieldRead) -> bool:
    """`if flag or other:` — forcing the flag does not by itself skip the branch."""
    return any(
        isinstance(p.pred, Or)
        and p.line == r.line
        and any(mentions_field(a.text, r.field) for a in p.pred.atoms())
        for p in facts.predicates
    )


def skipped_behaviour(
    d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None
) -> list[tuple[Skipped, GatedStmt]]:
    """The statements the forced value turns off, at every read site of the flag."""
    value = d.head.value
    if value not in _BOOLS:
        return []
    out: list[tuple[Skipped, GatedStmt]] = []
    for r in _flag_sites(d, index, graph):
        facts = _facts(graph, index, r.path)
        if facts is None or _in_disjunction(facts, r):
            continue
        stmts = r.gated if value == "False" else r.gated_else
        for s, after in zip(stmts, (*stmts[1:], None)[: len(stmts)], strict=True):
            # A statement spans the lines up to the next gated one (`f(\n  cfg.x)`); the last, its own.
            last = after.line - 1 if after is not None and after.line > s.line else s.line
            sk = Skipped(r.path, s.line, s.text, r.function, r.line, r.alias or "", r.alias_line, last)
            out.append((sk, s))
    return out


def callees_of_skipped(
    d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None
) -> list[tuple[Skipped, Function, tuple[str, ...]]]:
    """Functions the skipped statements run, up to two call levels deep (for what the comment claims)."""
    if graph is None:
        return []
    walk = _Walk(index, graph, config_family(d, index), d.head.field)
    out: list[tuple[Skipped, Function, tuple[str, ...]]] = []

    def visit(
        path: str, function: str | None, lines: set[int] | None, sk: Skipped, chain: tuple[str, ...]
    ) -> None:
        if len(chain) >= MAX_CALL_LEVELS:
            return
        for site in graph.sites_in(path, function, lines):
            for c in graph.resolve(site, walk.roots):
                step = _step(c)
                if step in chain:
                    continue
                out.append((sk, c.function, (*chain, step)))
                visit(c.function.path, c.function.name, None, sk, (*chain, step))

    for sk, _ in skipped_behaviour(d, index, graph):
        visit(sk.path, sk.function, sk.lines, sk, ())
    return out


def _writes(d: ChangedDerivation, index: RepoIndex, shown: str) -> list[Assignment]:
    a = d.head
    receiver = a.target.rsplit(".", 1)[0] if "." in a.target else ""
    facts = index.files.get(a.path)
    target = f"{receiver}.{shown}" if receiver else shown
    return [
        w
        for w in (facts.assignments if facts is not None else ())
        if w.function == a.function and w.target == target and w.kind is not AssignKind.BINDING
    ]


def _forced(d: ChangedDerivation, index: RepoIndex, writes: list[Assignment], neutral: str) -> bool:
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
    shown = Outcome("const", neutral).show(first.lang)
    under_guard = [row for row in table["rows"] if row["base"] == shown]
    return bool(under_guard) and not any(row["changed"] for row in under_guard)


def coupled_fields(d: ChangedDerivation, index: RepoIndex, graph: CallGraph | None) -> list[CoupledField]:
    """Config fields consumed by the code the forced flag skips, one record per field."""
    if d.head.guard is None or d.head.value not in _BOOLS:
        return []
    family = config_family(d, index)
    walk = _Walk(index, graph, family, d.head.field)
    consumers: list[Consumer] = []
    for sk, _ in skipped_behaviour(d, index, graph):
        facts = _facts(graph, index, sk.path)
        if facts is None:
            continue
        consumers.extend(walk.consumers_at(facts, sk.function, sk.lines, sk, ()))
        consumers.extend(walk.follow(sk.path, sk.function, sk.lines, sk, ()))
    tested = guard_fields(d.head.guard, index)
    by_field: dict[str, list[Consumer]] = {}
    for c in consumers:
        by_field.setdefault(c.field, []).append(c)
    out: list[CoupledField] = []
    for shown, found in sorted(by_field.items()):
        found = sorted(set(found), key=lambda c: (len(c.chain), c.path, c.line, repr(c)))  # total order
        constrained = last_component(shown) in tested
        writes = _writes(d, index, shown)
        neutral = found[0].neutral
        forced = ""
        if not constrained and _forced(d, index, writes, neutral):
            where = ", ".join(sorted({f"{w.path}:{w.line}" for w in writes}))
            forced = f"`{shown}` is forced to `{neutral}` whenever the guard holds ({where})"
        out.append(CoupledField(shown, tuple(found), constrained, forced, tuple(writes)))
    return out
