"""C++ function bodies: statements and expressions (the half of the C++ front end that knows
tree-sitter-cpp's statement and expression nodes; `parser.py` handles declarations, `grammar.py` the
grammar hooks and predicates).
"""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from reviewbot.lang.common import canonical_expr, is_path
from reviewbot.lang.cpp.grammar import LOOPS, CppGrammar
from reviewbot.lang.cpp.owners import MEMBER_NAME, NOT_OPS
from reviewbot.lang.facts import AssignKind
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred, conj, negate
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walk.walker import Cond, Ctx

__all__ = ["CppBody", "CLASSES"]

CLASSES = frozenset({"class_specifier", "struct_specifier", "union_specifier"})
_SKIP = frozenset(
    {
        "string_literal",
        "raw_string_literal",
        "char_literal",
        "number_literal",
        "comment",
        "qualified_identifier",
        "template_argument_list",
        "type_descriptor",
        "lambda_capture_specifier",
        "field_identifier",
        "true",
        "false",
        "null",
        "this",
    }
)
# One pending node of `CppBody.scan`: (node, inside a member chain, gating condition, negated).
_Item = tuple[Node, bool, Cond | None, bool]


class CppBody(CppGrammar):
    """Statements and expressions of C++ functions; subclassed by the declaration walker."""

    # --- statements ------------------------------------------------------------------------------

    def stmt(self, node: Node, ctx: Ctx) -> None:
        """Walk one statement (or block) under `ctx`: writes, predicate uses and reads."""
        t = node.type
        if t in ("compound_statement", "ERROR", "labeled_statement", "init_statement"):
            for child in node.named_children:
                self.stmt(child, ctx)
        elif t == "if_statement":
            self._if(node, ctx)
        elif t == "expression_statement":
            for child in _named(node):
                self.stmt(child, ctx)
        elif t == "assignment_expression":
            self._assignment(node, ctx)
        elif t == "update_expression":
            arg = node.child_by_field_name("argument")
            target = self._target(arg) if arg is not None else None
            if target is not None and arg is not None:
                op = "++" if "++" in self.txt(node) else "--"
                self.emit_assign(ctx, target, op, node, node, AssignKind.AUGMENTED, recv=self._recv(arg, ctx))
        elif t == "declaration":
            self._declaration(node, ctx)
        elif t == "return_statement":
            for value in _named(node):
                if self.is_bool(value):
                    self.emit_use(self.pred(value), self.unparen(value), ctx)
                self.scan(value, ctx)
        elif t in LOOPS or t in ("try_statement", "catch_clause", "case_statement"):
            self._compound(node, ctx)
        elif t not in ("comment", "function_definition") and t not in CLASSES:
            self.scan(node, ctx)

    def _compound(self, node: Node, ctx: Ctx) -> None:
        """Loops, switch, try: the while condition gates the body; other parts are read and walked."""
        body = node.child_by_field_name("body")
        for i, child in enumerate(node.children):
            role = node.field_name_for_child(i)
            if not child.is_named or child.type == "comment" or (body is not None and child.id == body.id):
                continue
            if role == "condition" and node.type in ("while_statement", "do_statement"):
                value = self.unparen(child)
                self.emit_use(self.pred(value), value, ctx)
                self.scan(value, ctx, Cond([body] if body is not None else [], []))
            elif role == "declarator":
                name = self.declarator_name(child)
                if name:
                    self.locals.add(name)
            elif role == "parameters":
                for param in _named(child):
                    pname = self.declarator_name(param.child_by_field_name("declarator"))
                    if pname:
                        self.locals.add(pname)
            elif child.type == "declaration":
                self.stmt(child, ctx)
            elif role in ("initializer", "condition", "update", "right", "value"):
                self.scan(child, ctx)
            else:
                self.stmt(child, ctx)
        if body is not None:
            self.stmt(body, ctx)

    def _if(self, node: Node, ctx: Ctx) -> None:
        # `else if` chains are walked in a loop, not by recursion: generated code has long ones.
        current: Node | None = node
        while current is not None:
            clause = current.child_by_field_name("condition")
            then = current.child_by_field_name("consequence")
            if clause is None or then is None:
                self.scan(current, ctx)
                return
            init = clause.child_by_field_name("initializer")
            if init is not None:
                self.stmt(init, ctx)
            cond = self.unparen(clause)
            p = self.pred(cond)
            self.emit_use(p, cond, ctx)
            else_clause = current.child_by_field_name("alternative")
            other = _named(else_clause)
            self.scan(cond, ctx, Cond([then], other))
            line = self.line(current)
            then_branch = self.branch(cond, line, then, line, self.end_line(then))
            conds = self.cond_span(ctx, cond)
            then_guard = conj(_not_implied(ctx.guard, p), p)
            self.stmt(then, replace(ctx, guard=then_guard, branch=then_branch, conds=conds))
            current = None
            if else_clause is not None and other:
                start, end = self.line(else_clause), self.end_line(else_clause)
                else_branch = self.branch(cond, line, else_clause, start, end)
                ctx = replace(ctx, guard=conj(ctx.guard, negate(p)), branch=else_branch, conds=conds)
                if len(other) == 1 and other[0].type == "if_statement":
                    current = other[0]
                    continue
                for child in other:
                    self.stmt(child, ctx)

    def _target(self, node: Node) -> str | None:
        if node.type in ("identifier", "field_expression", "qualified_identifier"):
            return canonical_expr(self.txt(node))
        return None

    def _assignment(self, node: Node, ctx: Ctx) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            self.scan(node, ctx)
            return
        op = self._op(node) or "="
        target = self._target(left)
        recv = self._recv(left, ctx)
        if target is None:
            self.scan(left, ctx)
        elif op == "=":
            self.emit_value(ctx, target, right, node, node, recv)
            self._bind(left, right, ctx, node)
            if left.type == "identifier" and target in self.locals:
                self._track(target, None, right, ctx)
        else:
            value = canonical_expr(self.txt(right))
            self.emit_assign(ctx, target, value, node, node, AssignKind.AUGMENTED, recv=recv, raw=right)
        self.env_target = target or ""
        self.scan(right, ctx)
        self.env_target = ""

    def _bind(self, left: Node, right: Node, ctx: Ctx, at: Node) -> None:
        """One level of aliasing: `this->flag_ = cfg.flag;` / `flag = cfg.flag;`."""
        source = canonical_expr(self.txt(self.unparen(right)))
        if ctx.function is None or "." not in source or not is_path(source):
            return
        alias = "".join(self.txt(left).split())
        if left.type == "field_expression":
            arg, fld = left.child_by_field_name("argument"), left.child_by_field_name("field")
            if arg is not None and arg.type == "this" and fld is not None:
                self.bind_member(ctx.cls, self.txt(fld), source, alias, at)
        elif left.type == "identifier":
            if alias in self.locals:
                self.bind_local(ctx.function, alias, source, at)
            elif ctx.method:
                self.bind_member(ctx.cls, alias, source, alias, at)

    def _declaration(self, node: Node, ctx: Ctx) -> None:
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) != "declarator":
                continue
            if child.type != "init_declarator":
                name = self.declarator_name(child)
                if name:
                    self.locals.add(name)
                    shape = node.child_by_field_name("type") if child.type != "pointer_declarator" else None
                    self._track(name, shape, None, ctx)
                continue
            name = self.declarator_name(child.child_by_field_name("declarator"))
            value = child.child_by_field_name("value")
            if name:
                self.locals.add(name)
            if value is None:
                if name:
                    self._track(name, node.child_by_field_name("type"), None, ctx)
                continue
            if value.type in ("argument_list", "initializer_list"):
                inner = _named(value)
                value = inner[0] if len(inner) == 1 else value
            if name:
                self._track(name, node.child_by_field_name("type"), value, ctx)
            if name and value.type != "lambda_expression":
                self.emit_value(ctx, name, value, child, node)
                source = canonical_expr(self.txt(self.unparen(value)))
                if "." in source and is_path(source):
                    self.bind_local(ctx.function, name, source, child)
            self.env_target = name or ""
            self.scan(value, ctx)
            self.env_target = ""

    # --- expressions: reads, ternaries, bindings -------------------------------------------------

    def scan(self, root: Node, ctx: Ctx, cond: Cond | None = None) -> None:
        """Reads, ternary conditions and pybind bindings in an expression (iterative: deep trees are fine)."""
        callees: set[int] = set()
        stack: list[_Item] = [(root, False, cond, False)]
        while stack:
            node, chain, cnd, neg = stack.pop()
            t = node.type
            if t in _SKIP:
                continue
            if t == "field_expression":
                self._scan_field(node, chain, cnd, neg, ctx, stack, callees)
            elif t == "call_expression":
                self._scan_call(node, cnd, neg, ctx, stack, callees)
            elif t == "conditional_expression":
                self._scan_ternary(node, cnd, neg, ctx, stack)
            elif t == "unary_expression" and self._op(node) in NOT_OPS:
                arg = node.child_by_field_name("argument")
                if arg is not None:
                    stack.append((arg, False, cnd, not neg))
            elif t == "identifier":
                if not chain:
                    self._bare(node, ctx, cnd, neg)
            elif t == "lambda_expression":
                self._scan_lambda(node, ctx)
            elif t == "subscript_expression":
                arg, idx = node.child_by_field_name("argument"), node.child_by_field_name("indices")
                stack.extend((x, chain if x is arg else False, cnd, neg) for x in (idx, arg) if x is not None)
            else:
                stack.extend((c, False, cnd, neg) for c in reversed(node.named_children))

    def _scan_field(
        self,
        node: Node,
        chain: bool,
        cnd: Cond | None,
        neg: bool,
        ctx: Ctx,
        stack: list[_Item],
        callees: set[int],
    ) -> None:
        """`a.b` / `this->b`: read the whole chain once (not its prefixes, not a callee), then walk the object."""
        arg = node.child_by_field_name("argument")
        is_callee = node.id in callees
        if not chain and not is_callee:
            member = self.txt(node.child_by_field_name("field") or node)
            this = arg is not None and arg.type == "this"
            expr = canonical_expr(self.txt(node))
            self.read(ctx, expr, node, cnd, neg, member=member if this else None, recv=self._recv(node, ctx))
        if arg is not None:
            stack.append((arg, not is_callee, cnd, neg))

    def _scan_call(
        self, node: Node, cnd: Cond | None, neg: bool, ctx: Ctx, stack: list[_Item], callees: set[int]
    ) -> None:
        """A call: its arguments, env reads and pybind bindings; a method callee is walked but not read."""
        fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if args is not None:
            stack.append((args, False, cnd, neg))
            if fn is not None:
                self._env_call(node, fn, args, ctx)
        if fn is not None and fn.type == "field_expression":
            self._binding(fn, args, ctx)
            callees.add(fn.id)
            stack.append((fn, False, cnd, neg))
        elif fn is not None and fn.type not in ("identifier", "template_function"):
            stack.append((fn, False, cnd, neg))

    def _scan_ternary(self, node: Node, cnd: Cond | None, neg: bool, ctx: Ctx, stack: list[_Item]) -> None:
        """`c ? yes : no`: a predicate use of `c`, whose reads gate the two branches."""
        c, yes, no = (node.child_by_field_name(f) for f in ("condition", "consequence", "alternative"))
        stack.extend((x, False, cnd, neg) for x in (no, yes) if x is not None)
        if c is not None:
            self.emit_use(self.pred(c), self.unparen(c), ctx)
            stack.append((c, False, Cond([yes] if yes else [], [no] if no else []), False))

    def _scan_lambda(self, node: Node, ctx: Ctx) -> None:
        """A lambda: its parameters are locals, its body is walked as statements."""
        for param in _named(node.child_by_field_name("declarator")):
            for p in _named(param):
                pname = self.declarator_name(p.child_by_field_name("declarator"))
                if pname:
                    self.locals.add(pname)
        body = node.child_by_field_name("body")
        if body is not None:
            self.stmt(body, ctx)

    def _bare(self, node: Node, ctx: Ctx, cond: Cond | None, neg: bool) -> None:
        name = self.txt(node)
        if name in self.locals:
            if self.reads.has_local(ctx.function, name):
                self.read(ctx, name, node, cond, neg, local=name)
        elif ctx.method and MEMBER_NAME.fullmatch(name):
            self.read(ctx, name, node, cond, neg, member=name, recv=self.self_recv(ctx))


def _compared(a: Pred, op: str) -> tuple[str, str] | None:
    """(operand, string literal) of an atom `operand op "literal"` (either side)."""
    if not isinstance(a, Atom):
        return None
    parts = a.text.split(" ")
    if len(parts) != 3 or parts[1] != op:
        return None
    left, right = parts[0], parts[2]
    if right.startswith('"') and not left.startswith('"'):
        return left, right
    if left.startswith('"') and not right.startswith('"'):
        return right, left
    return None


def _options(p: Pred, op: str = "==") -> tuple[str, frozenset[str]] | None:
    """(operand, literals) of `x == "a"` or `x == "a" || x == "b"`: one operand, string literals only."""
    found = [c for a in (p.args if isinstance(p, Or) else (p,)) if (c := _compared(a, op)) is not None]
    operands = {operand for operand, _ in found}
    if len(found) != (len(p.args) if isinstance(p, Or) else 1) or len(operands) != 1:
        return None
    return operands.pop(), frozenset(literal for _, literal in found)


def _not_implied(guard: Pred | None, here: Pred) -> Pred | None:
    """`guard` without the negated option tests that `here` implies. In an argument parser's chain
    (`if (arg == "-a") ... else if (arg == "-b")`), `arg == "-b"` already says `arg != "-a"`; keeping
    every earlier option's negation grew a branch's condition by a term or two per option (over a
    hundred in llama.cpp's `gpt_params_find_arg`), past what a truth table or a mutant can use."""
    mine = _options(here)
    if guard is None or mine is None:
        return guard
    kept: list[Pred] = []
    for g in guard.args if isinstance(guard, And) else (guard,):
        other = _compared(g, "!=")
        if other is not None:
            others: tuple[str, frozenset[str]] | None = (other[0], frozenset({other[1]}))
        else:
            others = _options(g.arg) if isinstance(g, Not) else None
        if others is not None and others[0] == mine[0] and not (others[1] & mine[1]):
            continue  # implied: the operand equals another literal here
        kept.append(g)
    return conj(*kept)
