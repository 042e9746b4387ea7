"""Field reads of one file, with one level of aliasing resolved when the file is done.

Reads are logged while walking; aliases (`self.flag = cfg.flag`, `flag = cfg.flag`, a C++
member initialiser) may be bound after a read in source order (a method above `__init__`), so
they are resolved only at the end, by `ReadLog.resolve`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from reviewbot.lang.common import last_component
from reviewbot.lang.facts import FieldRead, GatedStmt, Lang, OwnerVia

__all__ = ["Cond", "ReadLog"]

Gated = tuple[GatedStmt, ...]


@dataclass
class Cond:
    """What a condition controls: reads inside it gate `then` (true) and `other` (false)."""

    then: list[Node]
    other: list[Node]
    gated: Gated | None = None  # filled on first use
    gated_else: Gated | None = None


@dataclass(frozen=True)
class _Read:
    field: str
    expr: str
    line: int
    function: str | None
    cond: Cond | None
    negated: bool
    cls: str | None
    member: str | None  # `x` of `self.x` / `this->x` / an implicit C++ member read
    local: str | None  # a bare local name: kept only when it aliases a field
    pos: int = 0  # byte offset, to order a local read after its binding on the same line
    owner: str = ""  # type path of the receiver (see `lang/owners.py`)
    owner_via: OwnerVia = OwnerVia.NONE


@dataclass
class ReadLog:
    path: str
    lang: Lang
    _reads: list[_Read] = field(default_factory=list)
    _member: dict[tuple[str, str], tuple[str, str, int]] = field(default_factory=dict)
    _local: dict[tuple[str, str], list[tuple[int, int, str, str]]] = field(default_factory=dict)

    def add(
        self,
        expr: str,
        line: int,
        function: str | None,
        cls: str | None,
        cond: Cond | None,
        negated: bool,
        member: str | None = None,
        local: str | None = None,
        pos: int = 0,
        owner: str = "",
        owner_via: OwnerVia = OwnerVia.NONE,
    ) -> None:
        self._reads.append(
            _Read(
                last_component(expr),
                expr,
                line,
                function,
                cond,
                negated,
                cls,
                member,
                local,
                pos,
                owner,
                owner_via,
            )
        )

    def bind_member(self, cls: str | None, member: str, source: str, alias: str, line: int) -> None:
        """`self.member = source` / `member_(source)`: `self.member` reads in `cls` read `source`."""
        if cls is not None and source != member:
            self._member.setdefault((cls, member), (last_component(source), alias, line))

    def bind_local(self, function: str | None, name: str, source: str, line: int, end: int = 0) -> None:
        """`name = source` in `function`; reads of `name` after byte offset `end` read `source`."""
        if function is not None and source != name:
            self._local.setdefault((function, name), []).append((line, end, last_component(source), name))

    def aliased_members(self) -> list[tuple[str, str]]:
        """(class, member) of every member alias bound so far."""
        return list(self._member)

    def has_local(self, function: str | None, name: str) -> bool:
        return function is not None and (function, name) in self._local

    def _alias_of(self, r: _Read) -> tuple[str, str, int] | None:
        if r.member is not None and r.cls is not None:
            found = self._member.get((r.cls, r.member))
            if found is not None and found[2] != r.line:
                return found
        if r.local is not None and r.function is not None:
            best: tuple[str, str, int] | None = None
            for bind_line, end, source_field, alias in self._local.get((r.function, r.local), ()):
                if end <= r.pos:
                    best = (source_field, alias, bind_line)
            return best
        return None

    def _make(
        self, r: _Read, gates: tuple[Gated, Gated], fld: str, alias: tuple[str, str, int] | None
    ) -> FieldRead:
        return FieldRead(
            field=fld,
            expr=r.expr,
            path=self.path,
            line=r.line,
            function=r.function,
            lang=self.lang,
            in_condition=r.cond is not None,
            negated=r.negated,
            gated=gates[0],
            gated_else=gates[1],
            alias=alias[1] if alias else None,
            alias_line=alias[2] if alias else None,
            # Through an alias the object read is the alias's source, whose type the read does not know.
            owner="" if alias else r.owner,
            owner_via=OwnerVia.NONE if alias else r.owner_via,
        )

    def resolve(self, gated: Callable[[list[Node]], Gated]) -> list[FieldRead]:
        """FieldReads in line order; an aliased read names the original field (and, if the alias has
        another name, is also a read of that name)."""
        out: list[FieldRead] = []
        for r in self._reads:
            gates: tuple[Gated, Gated] = ((), ())
            if r.cond is not None:
                if r.cond.gated is None or r.cond.gated_else is None:
                    r.cond.gated, r.cond.gated_else = gated(r.cond.then), gated(r.cond.other)
                # `gated` is what runs when the field is true: the else-branch of `if (!x)`.
                gates = (r.cond.gated_else, r.cond.gated) if r.negated else (r.cond.gated, r.cond.gated_else)
            alias = self._alias_of(r)
            if alias is not None:
                out.append(self._make(r, gates, alias[0], alias))
                if alias[0] == r.field:
                    continue
            if r.local is None:
                out.append(self._make(r, gates, r.field, None))
        out.sort(key=lambda fr: fr.line)
        return out
