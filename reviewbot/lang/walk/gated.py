"""What a branch controls: the statements under it, the names they use, and whether it logs.

A read in a condition carries the statements of the branch it gates (`Read.gated`, `GatedStmt`); a write
under a branch says whether that branch logs (`Assignment.logs_in_branch`). Both scan a subtree for
calls and member accesses through the grammar hooks of `Walker`, and neither needs the walking context
(`Ctx`) or the emitters, so they live here, as a mixin `Walker` inherits, apart from the walk itself.
`Branch` is the innermost if / elif / else block a statement is in, which `block_logs` fills once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tree_sitter import Node

from reviewbot.lang.common import callee_parts, is_log_callee
from reviewbot.lang.facts import GatedStmt

__all__ = ["Branch", "GatedScan", "MAX_GATED"]

MAX_GATED = 40  # statements kept per gated branch; enough to see what a flag controls


@dataclass
class Branch:
    """The innermost if / elif / else block around a statement."""

    text: str  # the condition as written
    line: int  # line of the `if` / `elif` (or of the `if` for an `else`)
    start: int
    end: int
    comment: str
    comment_line: int | None
    block: Node | None
    logs: bool | None = None  # filled on first use


class GatedScan:
    """Scans of the statements a branch controls; the grammar hooks they ask are `Walker`'s."""

    assignment_types: ClassVar[frozenset[str]]

    if TYPE_CHECKING:  # the grammar hooks are `Walker`'s, the source helpers `OwnerEmitters`'

        def split_statement(self, node: Node) -> tuple[Node | None, list[Node]] | None: ...
        def call_parts(self, node: Node) -> tuple[Node, Node | None] | None: ...
        def attr_parts(self, node: Node) -> tuple[Node | None, str] | None: ...
        def extra_log(self, text: str) -> bool: ...
        def txt(self, node: Node) -> str: ...
        def line(self, node: Node) -> int: ...
        def source_line(self, line: int) -> str: ...

    def gated(self, nodes: list[Node]) -> tuple[GatedStmt, ...]:
        """The statements under `nodes` in source order (a nested if/loop gives its header, then its
        body), at most MAX_GATED."""
        out: list[GatedStmt] = []
        stack = list(reversed(nodes))
        while stack and len(out) < MAX_GATED:
            node = stack.pop()
            if node.type == "comment":
                continue
            parts = self.split_statement(node)
            if parts is None:
                out.append(self.gated_stmt(node))
                continue
            header, inner = parts
            if header is not None:
                out.append(self.gated_stmt(header))
            stack.extend(reversed(inner))
        return tuple(out)

    def gated_stmt(self, node: Node) -> GatedStmt:
        """One statement (or header expression): its first line, the calls it makes, the fields it reads."""
        calls, fields = self.names(node)
        line = self.line(node)
        return GatedStmt(line, self.source_line(line), calls, fields)

    def _calls_and_attrs(self, node: Node) -> Iterator[tuple[str, Node]]:
        """('call', callee) and ('attr', node) for every call and every member access that is read
        (not a callee, not the target of an assignment) under node."""
        skip: set[int] = set()
        stack = [node]
        while stack:
            n = stack.pop()
            call = self.call_parts(n)
            if call is not None:
                skip.add(call[0].id)
                yield "call", call[0]
            elif n.id not in skip and self.attr_parts(n) is not None:
                yield "attr", n
            elif n.type in self.assignment_types:
                target = n.child_by_field_name("left")
                if target is not None:
                    skip.add(target.id)
            stack.extend(reversed(n.named_children))  # source order

    def names(self, node: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(callee name components, attribute names read) under node, each in source order, unique."""
        calls: dict[str, None] = {}
        fields: dict[str, None] = {}
        for kind, n in self._calls_and_attrs(node):
            if kind == "call":
                calls.update(dict.fromkeys(callee_parts(self.txt(n))))
            else:
                parts = self.attr_parts(n)
                if parts is not None:
                    fields[parts[1]] = None
        return tuple(calls), tuple(fields)

    def block_logs(self, b: Branch) -> bool:
        """The branch's block logs (computed once per branch)."""
        if b.logs is None:
            b.logs = b.block is not None and (
                any(
                    kind == "call" and is_log_callee(self.txt(n))
                    for kind, n in self._calls_and_attrs(b.block)
                )
                or self.extra_log(self.txt(b.block))
            )
        return b.logs
