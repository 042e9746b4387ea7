"""Python node shapes and conditions: the grammar hooks `Walker` asks and Python predicates.

What tree-sitter-python calls a call, an attribute access, a conditional expression, a parenthesised
expression or a nested statement (the hooks `Walker` and `GatedScan` ask), and how a condition becomes a
`Pred` (`a and not b`, chained comparisons, `is` / `in`). None of it walks statements or keeps walking
state, so it sits below `PyBody` (which walks statements) and `parser.py` (definitions), both of which
inherit it.
"""

from __future__ import annotations

from tree_sitter import Node

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.predicate import Atom, Pred, conj, disj, negate
from reviewbot.lang.python.owners import PyOwners
from reviewbot.lang.treesitter import named as _named

__all__ = ["PyGrammar"]


class PyGrammar(PyOwners):
    """Python grammar hooks and predicates; subclassed by the statement walker (`PyBody`)."""

    assignment_types = frozenset({"assignment", "augmented_assignment"})

    # --- grammar hooks ---------------------------------------------------------------------------

    def split_statement(self, node: Node) -> tuple[Node | None, list[Node]] | None:
        t = node.type
        if t in ("block", "module", "try_statement"):
            return None, _named(node)
        if t in ("else_clause", "finally_clause", "except_clause", "case_clause"):
            return None, [c for c in _named(node) if c.type == "block"]
        if t == "if_statement":
            rest = node.children_by_field_name("alternative")
            then = node.child_by_field_name("consequence")
            return node.child_by_field_name("condition"), ([then] if then else []) + list(rest)
        if t == "elif_clause":
            then = node.child_by_field_name("consequence")
            return node.child_by_field_name("condition"), [then] if then else []
        if t in ("while_statement", "for_statement", "with_statement"):
            header = node.child_by_field_name("condition") or node.child_by_field_name("right")
            inner = [node.child_by_field_name("body"), node.child_by_field_name("alternative")]
            return header, [n for n in inner if n is not None]
        return None

    def call_parts(self, node: Node) -> tuple[Node, Node | None] | None:
        if node.type != "call":
            return None
        fn = node.child_by_field_name("function")
        return None if fn is None else (fn, node.child_by_field_name("arguments"))

    def attr_parts(self, node: Node) -> tuple[Node | None, str] | None:
        if node.type != "attribute":
            return None
        attr = node.child_by_field_name("attribute")
        return None if attr is None else (node.child_by_field_name("object"), self.txt(attr))

    def ternary_parts(self, node: Node) -> tuple[Node, Node, Node] | None:
        parts = _named(node) if node.type == "conditional_expression" else []
        return (parts[1], parts[0], parts[2]) if len(parts) == 3 else None

    def unparen(self, node: Node) -> Node:
        while node.type == "parenthesized_expression":
            inner = next(iter(_named(node)), None)
            if inner is None:
                break
            node = inner
        return node

    def is_predicate(self, node: Node) -> bool:
        inner = self.unparen(node)
        return self.is_bool(inner) or inner.type == "comparison_operator"

    def is_bool(self, node: Node) -> bool:
        return self.unparen(node).type in ("not_operator", "boolean_operator")

    # --- predicates ------------------------------------------------------------------------------

    def _bool_op(self, node: Node) -> str:
        op = node.child_by_field_name("operator")
        return op.type if op is not None else ""

    def pred(self, node: Node) -> Pred:
        node = self.unparen(node)
        t = node.type
        if t == "not_operator":
            arg = node.child_by_field_name("argument")
            if arg is not None:
                return negate(self.pred(arg))
        elif t == "boolean_operator":
            op = self._bool_op(node)
            operands: list[Node] = []
            stack = [node]
            while stack:
                n = stack.pop()
                if n.type == "boolean_operator" and self._bool_op(n) == op:
                    stack.extend(
                        x for x in (n.child_by_field_name("right"), n.child_by_field_name("left")) if x
                    )
                else:
                    operands.append(n)
            parts = [self.pred(x) for x in operands]
            if op == "or":
                return disj(*parts)
            joined = conj(*parts)
            assert joined is not None
            return joined
        elif t == "comparison_operator":
            found = self._comparison(node)
            if found is not None:
                return found
        return Atom(canonical_expr(self.txt(node)))

    def _comparison(self, node: Node) -> Pred | None:
        """`a < b < c` -> `a < b && b < c`; `is` / `is not` compare like `==` / `!=`."""
        operands: list[Node] = []
        ops: list[str] = []
        for child in node.children:
            if child.type == "comment":
                continue
            if child.is_named:
                operands.append(child)
            else:
                ops.append(" ".join(self.txt(child).split()))
        if not ops or len(operands) != len(ops) + 1:
            return None
        parts: list[Pred] = []
        for left, op, right in zip(operands, ops, operands[1:], strict=False):
            op = {"is": "==", "is not": "!=", "<>": "!="}.get(op, op)
            if op in ("in", "not in"):
                atom = Atom(f"{canonical_expr(self.txt(left))} in {canonical_expr(self.txt(right))}")
                parts.append(atom if op == "in" else negate(atom))
            else:
                parts.append(self.compare(left, op, right))
        return conj(*parts)
