"""C++ node shapes and conditions: the grammar hooks `Walker` asks and C++ predicates.

What tree-sitter-cpp calls a call, a member access, a ternary, a parenthesised condition or a nested
statement (the hooks `Walker` and `GatedScan` ask), how a condition becomes a `Pred` (`a && !b`,
comparisons), and the name a declarator declares. None of it walks statements or keeps walking state,
so it sits below `CppBody` (which walks function bodies) and `parser.py` (declarations), both of which
inherit it.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.cpp.owners import CMP_OPS, NOT_OPS, CppOwners
from reviewbot.lang.predicate import Atom, Pred, conj, disj, negate
from reviewbot.lang.treesitter import named as _named

__all__ = ["CppGrammar", "LOOPS"]

# Loops and switch: `split_statement` nests their body under their condition; `CppBody` walks them whole.
LOOPS = frozenset({"while_statement", "do_statement", "for_statement", "for_range_loop", "switch_statement"})
_AND = frozenset({"&&", "and"})
_OR = frozenset({"||", "or"})
_STREAM_LOG = re.compile(r"\b(?:std::)?c(?:out|err|log)\s*<<")


class CppGrammar(CppOwners):
    """C++ grammar hooks and predicates; subclassed by the statement walker (`CppBody`)."""

    assignment_types = frozenset({"assignment_expression"})

    # --- grammar hooks ---------------------------------------------------------------------------

    def split_statement(self, node: Node) -> tuple[Node | None, list[Node]] | None:
        t = node.type
        if t in ("compound_statement", "else_clause", "try_statement", "ERROR"):
            return None, _named(node)
        if t == "if_statement":
            inner = [
                n
                for n in (node.child_by_field_name("consequence"), node.child_by_field_name("alternative"))
                if n
            ]
            return node.child_by_field_name("condition"), inner
        if t in LOOPS or t == "catch_clause":
            body = node.child_by_field_name("body")
            return node.child_by_field_name("condition"), [body] if body is not None else []
        if t == "case_statement":
            value = node.child_by_field_name("value")
            return None, [c for c in _named(node) if value is None or c.id != value.id]
        return None

    def call_parts(self, node: Node) -> tuple[Node, Node | None] | None:
        if node.type != "call_expression":
            return None
        fn = node.child_by_field_name("function")
        return None if fn is None else (fn, node.child_by_field_name("arguments"))

    def attr_parts(self, node: Node) -> tuple[Node | None, str] | None:
        if node.type != "field_expression":
            return None
        fld = node.child_by_field_name("field")
        return None if fld is None else (node.child_by_field_name("argument"), self.txt(fld))

    def ternary_parts(self, node: Node) -> tuple[Node, Node, Node] | None:
        if node.type != "conditional_expression":
            return None
        c, a, b = (node.child_by_field_name(f) for f in ("condition", "consequence", "alternative"))
        return (c, a, b) if c is not None and a is not None and b is not None else None

    def extra_log(self, text: str) -> bool:
        return _STREAM_LOG.search(text) is not None

    def unparen(self, node: Node) -> Node:
        while node.type in ("parenthesized_expression", "condition_clause"):
            inner = node.child_by_field_name("value") if node.type == "condition_clause" else None
            inner = inner or next(iter(_named(node)), None)
            if inner is None:
                break
            node = inner
        return node

    def is_predicate(self, node: Node) -> bool:
        inner = self.unparen(node)
        return self.is_bool(inner) or (inner.type == "binary_expression" and self._op(inner) in CMP_OPS)

    def is_bool(self, node: Node) -> bool:
        node = self.unparen(node)
        if node.type == "unary_expression":
            return self._op(node) in NOT_OPS
        return node.type == "binary_expression" and self._op(node) in _AND | _OR

    # --- predicates ------------------------------------------------------------------------------

    def _chain(self, node: Node, ops: frozenset[str]) -> list[Node]:
        """Operands of `a && b && c` (left-nested, not crossing parentheses), in source order."""
        out: list[Node] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "binary_expression" and self._op(n) in ops:
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                stack.extend(x for x in (right, left) if x is not None)
            else:
                out.append(n)
        return out

    def pred(self, node: Node) -> Pred:
        node = self.unparen(node)
        t = node.type
        if t == "unary_expression" and self._op(node) in NOT_OPS:
            arg = node.child_by_field_name("argument")
            if arg is not None:
                return negate(self.pred(arg))
        elif t == "binary_expression":
            op = self._op(node)
            if op in _AND or op in _OR:
                parts = [self.pred(x) for x in self._chain(node, _AND if op in _AND else _OR)]
                if op in _OR:
                    return disj(*parts)
                joined = conj(*parts)
                assert joined is not None
                return joined
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in CMP_OPS and left is not None and right is not None:
                return self.compare(left, op, right)
        return Atom(canonical_expr(self.txt(node)))

    def declarator_name(self, node: Node | None) -> str | None:
        """The declared name inside `*p`, `&r`, `a[3]`, `x = v` and function declarators."""
        for _ in range(12):
            if node is None:
                return None
            if node.type in ("identifier", "field_identifier", "qualified_identifier", "operator_name"):
                return "".join(self.txt(node).split())
            if node.type == "destructor_name":
                return self.txt(node)
            node = node.child_by_field_name("declarator") or next(iter(_named(node)[-1:]), None)
        return None
