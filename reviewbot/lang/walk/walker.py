"""The language-independent half of a front end: walking context, fact emission, alias resolution.

`cpp/parser.py` and `python/parser.py` subclass `Walker`; they know their grammar's node types and call the
`emit_*`/`read`/`bind_*` methods here, which fill the records of `facts.py` the same way for
both languages (guards, branch lines, comments, log detection, one level of aliasing).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from tree_sitter import Node

from reviewbot.lang.common import (
    bare_names,
    canonical_expr,
    comment_above,
    last_component,
    mentions_field,
)
from reviewbot.lang.facts import (
    AssignKind,
    Assignment,
    Binding,
    EnvRead,
    FieldDecl,
    FieldDefault,
    FileFacts,
    Function,
    Lang,
    Owner,
    OwnerVia,
    PredicateUse,
)
from reviewbot.lang.predicate import Atom, Pred, conj, negate
from reviewbot.lang.reads import Cond, ReadLog
from reviewbot.lang.walk.gated import Branch, GatedScan
from reviewbot.lang.walk.owners import NO_RECV, OwnerEmitters, Recv, short_class

__all__ = ["Cond", "Ctx", "Recv", "Walker", "NO_RECV", "short_class"]

_BOOLS = frozenset({"True", "False"})


@dataclass(frozen=True)
class Ctx:
    function: str | None = None  # qualified name of the enclosing function
    cls: str | None = None  # class whose members `self.x` / `this->x` / a bare member name refer to
    scope: str | None = None  # qualified container name for nested definitions
    guard: Pred | None = None
    branch: Branch | None = None
    prop: str | None = None  # Python @property whose returns are derivations
    init: bool = False  # Python __init__ / C++ constructor
    method: bool = False
    params: tuple[tuple[str, str | None], ...] = ()  # (name, canonical default or None)
    # (first, last) line of every condition the statement runs under, outermost first: a change to any
    # of them changes the derivations below it (`Assignment.guard_spans`).
    conds: tuple[tuple[int, int], ...] = ()


@dataclass
class Walker(GatedScan, OwnerEmitters):
    """Collects the facts of one file; subclasses walk the tree and call the emitters (the owner
    model's in `OwnerEmitters`; what a branch controls is scanned by `GatedScan`)."""

    assignment_types: ClassVar[frozenset[str]] = frozenset()  # node types whose `left` is a write target
    path: str
    text: str
    lang: Lang = Lang.CPP
    lines: list[str] = field(init=False)
    functions: list[Function] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    predicates: list[PredicateUse] = field(default_factory=list)
    defaults: list[FieldDefault] = field(default_factory=list)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    degraded: int = 0  # parts given up on (recursion too deep); counted as parse errors
    stmt_node: Node | None = None  # the simple statement being walked (for writes inside expressions)
    # With a focus (the index of unchanged files), only function bodies whose text it accepts are walked.
    focus: Callable[[str], bool] | None = None
    reads: ReadLog = field(init=False)
    owners: list[Owner] = field(default_factory=list)
    field_decls: list[FieldDecl] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    env_reads: list[EnvRead] = field(default_factory=list)
    # The current function's known types: local or parameter name -> (type path, how it is known).
    types: dict[str, tuple[str, OwnerVia]] = field(default_factory=dict)
    env_target: str = ""  # the target whose value is being scanned (for `EnvRead.target`)
    _deferred: list[tuple[Node, str | None, Callable[[], None]]] = field(default_factory=list)
    _comments: dict[int, tuple[str, int | None]] = field(default_factory=dict)
    _declared: set[tuple[str, str]] = field(default_factory=set)  # (owner, field) with a FieldDecl

    def __post_init__(self) -> None:
        self.lines = [line.rstrip("\r") for line in self.text.split("\n")]
        self.reads = ReadLog(self.path, self.lang)

    # --- grammar hooks ------------------------------------------------------------------------

    def split_statement(self, node: Node) -> tuple[Node | None, list[Node]] | None:
        """None for a simple statement; else (header expression or None, nested statements/blocks)."""
        raise NotImplementedError

    def call_parts(self, node: Node) -> tuple[Node, Node | None] | None:
        """(callee, arguments) of a call node, else None."""
        raise NotImplementedError

    def attr_parts(self, node: Node) -> tuple[Node | None, str] | None:
        """(object, attribute name) of a member access node, else None."""
        raise NotImplementedError

    def ternary_parts(self, node: Node) -> tuple[Node, Node, Node] | None:
        """(condition, value if true, value if false) of a conditional expression, else None."""
        raise NotImplementedError

    def unparen(self, node: Node) -> Node:
        raise NotImplementedError

    def pred(self, node: Node) -> Pred:
        """The normalised predicate of a condition expression."""
        raise NotImplementedError

    def is_bool(self, node: Node) -> bool:
        """A boolean expression built with &&/||/!/and/or/not (worth recording as a predicate use)."""
        raise NotImplementedError

    def is_predicate(self, node: Node) -> bool:
        """A boolean expression: built with &&/||/!/and/or/not, or a comparison."""
        return self.is_bool(node)

    def extra_log(self, text: str) -> bool:
        """Language-specific logging that is not a call (C++ streams)."""
        return False

    # --- small helpers -----------------------------------------------------------------------

    def comment(self, line: int) -> tuple[str, int | None]:
        found = self._comments.get(line)
        if found is None:  # every write of a statement or branch asks for the same line
            found = self._comments[line] = comment_above(self.lines, line, self.lang is Lang.PYTHON)
        return found

    def branch(self, cond: Node, line: int, block: Node | None, start: int, end: int) -> Branch:
        text, cline = self.comment(line)
        return Branch(" ".join(self.txt(cond).split()), line, start, end, text, cline, block)

    # --- emitters --------------------------------------------------------------------------------

    def emit_function(self, name: str, node: Node) -> None:
        self.functions.append(Function(name, self.path, self.line(node), self.end_line(node), self.lang))

    def emit_use(self, pred: Pred, node: Node, ctx: Ctx) -> None:
        text = " ".join(self.txt(node).split())
        self.predicates.append(PredicateUse(pred, text, self.path, self.line(node), ctx.function, self.lang))

    def emit_default(self, owner: str, name: str, value: str, node: Node) -> None:
        short = owner.replace("::", ".").rsplit(".", 1)[-1]
        self.defaults.append(FieldDefault(short, name, value, self.path, self.line(node), self.lang))

    def emit_assign(
        self,
        ctx: Ctx,
        target: str,
        value: str,
        at: Node,
        stmt: Node,
        kind: AssignKind = AssignKind.PLAIN,
        ternary: tuple[Pred | None, Node] | None = None,
        recv: Recv = NO_RECV,
        raw: Node | None = None,
        boolean: bool = False,
    ) -> None:
        """One write of `target`; `ternary` is (arm guard, innermost ternary condition) for an arm;
        `recv` the written object; `raw` the value's node (for `Assignment.names`)."""
        fld = last_component(target)
        guard = ctx.guard
        b = ctx.branch
        if ternary is not None:
            guard = conj(ctx.guard, ternary[0])
            guard_text = " ".join(self.txt(ternary[1]).split())
            guard_line: int | None = self.line(ternary[1])
            start, end = self.line(stmt), self.end_line(stmt)
            comment, cline = self.comment(start)
        elif b is not None:
            guard_text, guard_line, start, end = b.text, b.line, b.start, b.end
            comment, cline = b.comment, b.comment_line
        else:
            guard_text, guard_line = "", None
            start, end = self.line(stmt), self.end_line(stmt)
            comment, cline = self.comment(start)
        line = self.line(at)
        first = guard is not None and any(mentions_field(a.text, fld) for a in guard.atoms())
        self.assignments.append(
            Assignment(
                target=target,
                field=fld,
                value=value,
                guard=guard,
                path=self.path,
                line=line,
                function=ctx.function,
                lang=self.lang,
                kind=kind,
                text=self.source_line(line),
                guard_text=guard_text,
                guard_line=guard_line,
                branch_start=start,
                branch_end=end,
                comment_above=comment,
                comment_line=cline,
                logs_in_branch=self.block_logs(b) if b is not None else False,
                checks_target_first=first,
                receiver=recv.receiver,
                owner=recv.owner,
                owner_via=recv.via,
                stmt_start=self.line(stmt),
                stmt_end=self.end_line(stmt),
                # Only the derivations of changed files (parsed without a focus) follow locals.
                names=bare_names(self.txt(raw)) if raw is not None and self.focus is None else (),
                guard_spans=ctx.conds,
                boolean=boolean or value in _BOOLS,
            )
        )

    def cond_span(self, ctx: Ctx, *conds: Node) -> tuple[tuple[int, int], ...]:
        """`ctx.conds` and the line spans of `conds` (an `if`'s condition, the earlier `elif`s of an `else`)."""
        return ctx.conds + tuple((self.line(c), self.end_line(c)) for c in conds)

    def compare(self, left: Node, op: str, right: Node) -> Pred:
        """`a == b` as an atom; `x == true` / `x is False` fold into `x` / `!x` so spellings agree."""
        lhs, rhs = canonical_expr(self.txt(left)), canonical_expr(self.txt(right))
        if op in ("==", "!=") and (lhs in _BOOLS) != (rhs in _BOOLS):
            literal, other = (rhs, left) if rhs in _BOOLS else (lhs, right)
            p = self.pred(other)
            return p if (literal == "True") == (op == "==") else negate(p)
        return Atom.comparison(lhs, op, rhs)

    def arms(
        self, node: Node, guard: Pred | None = None, cond: Node | None = None
    ) -> list[tuple[Pred | None, Node, Node | None]]:
        """Values of a (nested) ternary with the condition each needs: `c ? a : b` -> [(c, a), (!c, b)]."""
        parts = self.ternary_parts(self.unparen(node))
        if parts is None:
            return [(guard, node, cond)]
        c, yes, no = parts
        p = self.pred(c)
        return self.arms(yes, conj(guard, p), c) + self.arms(no, conj(guard, negate(p)), c)

    def emit_value(
        self, ctx: Ctx, target: str, value: Node, at: Node, stmt: Node, recv: Recv = NO_RECV
    ) -> None:
        """`target = value`: a PLAIN write or a TERNARY write per arm; a boolean value is a predicate use."""
        arms = self.arms(value)
        if len(arms) > 1:
            for guard, node, cond in arms:
                assert cond is not None
                text = canonical_expr(self.txt(node))
                kind = AssignKind.TERNARY
                self.emit_assign(
                    ctx, target, text, at, stmt, kind, (guard, cond), recv, node, self.is_predicate(node)
                )
        else:
            text = canonical_expr(self.txt(value))
            self.emit_assign(
                ctx, target, text, at, stmt, recv=recv, raw=value, boolean=self.is_predicate(value)
            )
        if self.is_bool(value):
            self.emit_use(self.pred(value), self.unparen(value), ctx)

    def read(
        self,
        ctx: Ctx,
        expr: str,
        node: Node,
        cond: Cond | None,
        negated: bool,
        member: str | None = None,
        local: str | None = None,
        recv: Recv = NO_RECV,
    ) -> None:
        """A read of `expr` (canonical); `local` reads are only kept when they alias a field."""
        self.reads.add(
            expr,
            self.line(node),
            ctx.function,
            ctx.cls,
            cond,
            negated,
            member,
            local,
            node.start_byte,
            recv.owner,
            recv.via,
        )

    def bind_member(self, cls: str | None, member: str, source: str, alias: str, node: Node) -> None:
        """`self.member = source` / `member_(source)`: later `self.member` reads are reads of source."""
        self.reads.bind_member(cls, member, source, alias, self.line(node))

    def bind_local(self, function: str | None, name: str, source: str, node: Node) -> None:
        self.reads.bind_local(function, name, source, self.line(node), node.end_byte)

    # --- focus ----------------------------------------------------------------------------------

    def walk_body(self, node: Node, cls: str | None, walk: Callable[[], None]) -> None:
        """Walk a function body now, or (outside the focus) only if an alias makes it relevant later."""
        if self.focus is None or self.focus(self.txt(node)):
            walk()
        else:
            self._deferred.append((node, cls, walk))

    def walk_deferred(self) -> None:
        """Second pass: bodies of classes whose members alias a focused field (`if self.flag:`)."""
        by_class: dict[str, set[str]] = {}
        for cls, member in self.reads.aliased_members():
            by_class.setdefault(cls, set()).add(member)
        for node, owner, walk in self._deferred:
            members = by_class.get(owner or "")
            if members and re.search(rf"\b(?:{'|'.join(map(re.escape, sorted(members)))})\b", self.txt(node)):
                walk()
        self._deferred.clear()

    # --- result ----------------------------------------------------------------------------------

    def facts(self, parse_errors: int, error_spans: tuple[tuple[int, int], ...] = ()) -> FileFacts:
        self.walk_deferred()
        return FileFacts(
            path=self.path,
            lang=self.lang,
            functions=tuple(sorted(self.functions, key=lambda f: (f.start_line, f.end_line))),
            assignments=tuple(sorted(self.assignments, key=lambda a: a.line)),
            predicates=tuple(sorted(self.predicates, key=lambda p: p.line)),
            reads=tuple(self.reads.resolve(self.gated)),
            defaults=tuple(self.defaults),
            enums=dict(self.enums),
            owners=tuple(self.owners),
            fields=tuple(self.field_decls),
            bindings=tuple(sorted(self.bindings, key=lambda b: (b.line, b.owner, b.name))),
            env_reads=tuple(sorted(self.env_reads, key=lambda e: (e.line, e.name))),
            parse_errors=parse_errors + self.degraded,
            # a part given up on (too deep) could be anywhere: the whole file counts as unread
            error_spans=((1, max(len(self.lines), 1)),) if self.degraded else error_spans,
        )
