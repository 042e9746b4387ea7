"""Python function bodies: statements and expressions (the half of the Python front end that knows
tree-sitter-python's statement and expression nodes; `parser.py` handles definitions,
`grammar.py` the grammar hooks and predicates).
"""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from reviewbot.lang.common import canonical_expr, is_path, last_component
from reviewbot.lang.facts import AssignKind, OwnerVia
from reviewbot.lang.owners import short_type
from reviewbot.lang.predicate import Pred, conj, negate
from reviewbot.lang.python.grammar import PyGrammar
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walk.walker import Cond, Ctx, Recv

__all__ = ["PyBody", "FIELD_FUNCS"]

# Tensor libraries and types: a keyword of their constructors (`requires_grad=False`) is no config field.
_TENSOR_LIBS = frozenset({"torch", "nn", "np", "numpy", "jnp", "jax", "cupy", "tf"})
_TENSOR_TYPES = frozenset({"Parameter", "Tensor", "Buffer"})
_REPLACERS = frozenset({"replace", "_replace", "evolve"})
FIELD_FUNCS = frozenset({"field", "Field", "ib", "attrib"})
_SKIP = frozenset({"string", "integer", "float", "comment", "true", "false", "none", "ellipsis"})
_SIMPLE = frozenset({"expression_statement", "return_statement"})
# One pending node of `PyBody.scan`: (node, inside an attribute chain, gating condition, negated).
_Item = tuple[Node, bool, Cond | None, bool]


class PyBody(PyGrammar):
    """Statements and expressions of Python code; subclassed by the definition walker."""

    def __post_init__(self) -> None:
        super().__post_init__()
        # value node id -> target of the assignment it is the right-hand side of (for keyword writes)
        self._kw_target: dict[int, str] = {}

    def definition(self, node: Node, ctx: Ctx) -> None:
        """A function, class or decorated definition met among statements."""
        raise NotImplementedError

    # --- statements ------------------------------------------------------------------------------

    def stmt(self, node: Node, ctx: Ctx) -> None:
        """Walk one statement (or block, or the module) under `ctx`: writes, predicate uses and reads."""
        t = node.type
        if t in _SIMPLE:
            self.stmt_node = node
        if t in ("module", "block"):
            for child in node.named_children:
                self.stmt(child, ctx)
        elif t == "expression_statement":
            for child in _named(node):
                self._expression(child, node, ctx)
        elif t == "if_statement":
            self._if(node, ctx)
        elif t == "return_statement":
            for value in _named(node):
                if ctx.prop is not None:
                    self.emit_value(ctx, ctx.prop, value, node, node)
                elif self.is_bool(value):
                    self.emit_use(self.pred(value), self.unparen(value), ctx)
                self.scan(value, ctx)
        elif t in ("function_definition", "class_definition", "decorated_definition"):
            self.definition(node, ctx)
        elif t == "while_statement":
            cond, body = node.child_by_field_name("condition"), node.child_by_field_name("body")
            if cond is not None:
                self.emit_use(self.pred(cond), self.unparen(cond), ctx)
                self.scan(cond, ctx, Cond([body] if body is not None else [], []))
            for part in (body, node.child_by_field_name("alternative")):
                if part is not None:
                    self.stmt(part, ctx)
        elif t.endswith(("_statement", "_clause")) and t not in ("pass_statement", "import_statement"):
            self._compound(node, ctx)
        elif t != "comment":
            self.scan(node, ctx)

    def _compound(self, node: Node, ctx: Ctx) -> None:
        """for / with / try / match and simple statements: blocks are walked, the rest is read."""
        for child in _named(node):
            if child.type == "block" or child.type.endswith("_clause"):
                self.stmt(child, ctx)
            else:
                self.scan(child, ctx)

    def _if(self, node: Node, ctx: Ctx) -> None:
        cond, then = node.child_by_field_name("condition"), node.child_by_field_name("consequence")
        if cond is None or then is None:
            self._compound(node, ctx)
            return
        alternatives = [a for a in node.children_by_field_name("alternative") if a.type != "comment"]
        negations: list[Pred] = []
        chain: list[tuple[Node, Node, Node]] = [(cond, then, node)]
        for alt in alternatives:
            c, body = alt.child_by_field_name("condition"), alt.child_by_field_name("consequence")
            if alt.type == "elif_clause" and c is not None and body is not None:
                chain.append((c, body, alt))
        for i, (c, body, owner) in enumerate(chain):
            p = self.pred(c)
            self.emit_use(p, self.unparen(c), ctx)
            later = [n for _, _, n in chain[i + 1 :]] + [a for a in alternatives if a.type == "else_clause"]
            self.scan(c, ctx, Cond([body], later))
            here = self.line(owner)
            branch = self.branch(c, here, body, here, self.end_line(body))
            conds = self.cond_span(ctx, *[c for c, _, _ in chain[: i + 1]])
            self.stmt(body, replace(ctx, guard=conj(ctx.guard, *negations, p), branch=branch, conds=conds))
            negations.append(negate(p))
        last_cond, _, last_owner = chain[-1]
        for alt in alternatives:
            body = alt.child_by_field_name("body")
            if alt.type == "else_clause" and body is not None:
                branch = self.branch(
                    last_cond, self.line(last_owner), body, self.line(alt), self.end_line(alt)
                )
                conds = self.cond_span(ctx, *[c for c, _, _ in chain])
                self.stmt(body, replace(ctx, guard=conj(ctx.guard, *negations), branch=branch, conds=conds))

    def _expression(self, expr: Node, stmt: Node, ctx: Ctx) -> None:
        if expr.type == "assignment":
            self._assignment(expr, stmt, ctx)
        elif expr.type == "augmented_assignment":
            left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
            target = self._target(left, ctx) if left is not None else None
            if target is not None and right is not None and left is not None:
                value = canonical_expr(self.txt(right))
                recv = self._recv(left, ctx)
                kind = AssignKind.AUGMENTED
                self.emit_assign(ctx, target, value, expr, stmt, kind, recv=recv, raw=right)
            if right is not None:
                self.env_target = target or ""
                self.scan(right, ctx)
                self.env_target = ""
        else:
            self.scan(expr, ctx)

    def _target(self, node: Node, ctx: Ctx) -> str | None:
        if node.type == "identifier":
            return self.txt(node) if ctx.function is not None else None
        if node.type == "attribute":
            return canonical_expr(self.txt(node))
        return None

    def _assignment(self, node: Node, stmt: Node, ctx: Ctx) -> None:
        targets: list[Node] = []
        value: Node | None = node
        while value is not None and value.type == "assignment":
            left = value.child_by_field_name("left")
            if left is not None:
                targets.append(left)
            value = value.child_by_field_name("right")
        if value is None:
            return
        pairs: list[tuple[Node, Node]] = []
        for left in targets:
            lefts, values = _named(left), _named(value)
            if left.type in ("pattern_list", "tuple_pattern") and value.type in ("expression_list", "tuple"):
                if len(lefts) == len(values):
                    pairs.extend(zip(lefts, values, strict=True))
                continue
            pairs.append((left, value))
        first = ""
        for left, val in pairs:
            target = self._target(left, ctx)
            if target is None:
                if left.type == "subscript" and not self.is_environ(left.child_by_field_name("value")):
                    self.scan(left, ctx)  # `os.environ["X"] = v` writes the environment: not a read of X
                continue
            self.emit_value(ctx, target, val, node, stmt, self._recv(left, ctx))
            self._kw_target[val.id] = target
            self._bind(left, val, ctx, node)
            self.track(left, val, ctx, node)
            first = first or target
        self.env_target = first
        self.scan(value, ctx)
        self.env_target = ""

    def _bind(self, left: Node, value: Node, ctx: Ctx, at: Node) -> None:
        """`self.x = cfg.x` / `x = cfg.x`: an alias for later reads; `self.x = v` in `__init__`: a default."""
        parts = self.attr_parts(left)
        on_self = parts is not None and parts[0] is not None and self.txt(parts[0]) == "self"
        source = canonical_expr(self.txt(self.unparen(value)))
        if parts is not None and on_self and ctx.init and ctx.guard is None and ctx.cls is not None:
            default = self._init_default(value, source, ctx)
            if default is not None:
                self.emit_default(ctx.cls, parts[1], default, left)
        if "." not in source or not is_path(source):
            return
        if parts is not None and on_self:
            self.bind_member(ctx.cls, parts[1], source, " ".join(self.txt(left).split()), at)
        elif left.type == "identifier":
            self.bind_local(ctx.function, self.txt(left), source, at)

    # --- expressions: reads, ternaries, keyword writes -------------------------------------------

    def scan(self, root: Node, ctx: Ctx, cond: Cond | None = None) -> None:
        """Reads, conditional expressions and keyword writes in an expression (iterative)."""
        callees: set[int] = set()
        stack: list[_Item] = [(root, False, cond, False)]
        while stack:
            node, chain, cnd, neg = stack.pop()
            t = node.type
            if t in _SKIP:
                continue
            if t == "attribute":
                obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
                is_callee = node.id in callees
                if not chain and not is_callee and not self._constant(node):
                    self._attribute_read(node, obj, attr, ctx, cnd, neg)
                if obj is not None:
                    stack.append((obj, not is_callee, cnd, neg))
            elif t == "call":
                self._scan_call(node, cnd, neg, ctx, stack, callees)
            elif t == "conditional_expression" and (parts := self.ternary_parts(node)) is not None:
                c, yes, no = parts
                stack.extend([(no, False, cnd, neg), (yes, False, cnd, neg)])
                self.emit_use(self.pred(c), self.unparen(c), ctx)
                stack.append((c, False, Cond([yes], [no]), False))
            elif t == "not_operator":
                operand = node.child_by_field_name("argument")
                if operand is not None:
                    stack.append((operand, False, cnd, not neg))
            elif t == "identifier":
                name = self.txt(node)
                if not chain and self.reads.has_local(ctx.function, name):
                    self.read(ctx, name, node, cnd, neg, local=name)
            elif t == "subscript":
                self._scan_subscript(node, chain, cnd, neg, ctx, stack)
            elif t == "keyword_argument":
                value = node.child_by_field_name("value")
                if value is not None:
                    stack.append((value, False, cnd, neg))
            else:
                stack.extend((c, False, cnd, neg) for c in reversed(node.named_children))

    def _scan_call(
        self, node: Node, cnd: Cond | None, neg: bool, ctx: Ctx, stack: list[_Item], callees: set[int]
    ) -> None:
        """A call: keyword writes, an environment read, its arguments; a method callee is walked, not read."""
        fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if args is not None:
            self._keywords(node, fn, args, ctx)
            if fn is not None:
                self.env_call(node, fn, args, ctx)
            for arg in reversed(_named(args)):
                inner = arg.child_by_field_name("value") if arg.type == "keyword_argument" else arg
                if inner is not None:
                    stack.append((inner, False, cnd, neg))
        if fn is not None and fn.type != "identifier":
            if fn.type == "attribute":
                callees.add(fn.id)
            stack.append((fn, False, cnd, neg))

    def _scan_subscript(
        self, node: Node, chain: bool, cnd: Cond | None, neg: bool, ctx: Ctx, stack: list[_Item]
    ) -> None:
        """`v[s]`: `os.environ["X"]` is an environment read; the subscripts and `v` are walked."""
        value = node.child_by_field_name("value")
        subs = node.children_by_field_name("subscript")
        if value is not None and len(subs) == 1:
            self._environ_subscript(node, value, subs[0], ctx)
        for sub in reversed(subs):
            stack.append((sub, False, cnd, neg))
        if value is not None:
            stack.append((value, chain, cnd, neg))

    def _constant(self, node: Node) -> bool:
        """`RopeStyle.No`, `TaskType.LANGUAGE_MODEL`: class constants, not field reads (like C++ `A::B`)."""
        while node.type == "attribute":
            obj = node.child_by_field_name("object")
            if obj is None:
                return False
            node = obj
        return node.type == "identifier" and self.txt(node)[:1].isupper()

    def _keywords(self, call: Node, fn: Node | None, args: Node, ctx: Ctx) -> None:
        """`Config(f=v)`, `replace(c, f=v)`, `c._replace(f=v)`: KEYWORD writes of `f`."""
        kwargs = [a for a in _named(args) if a.type == "keyword_argument"]
        if fn is None or not kwargs:
            return
        callee = canonical_expr(self.txt(fn))
        last = last_component(callee)
        if last in FIELD_FUNCS or (last not in _REPLACERS and not last[:1].isupper()):
            return
        if callee.split(".", 1)[0] in _TENSOR_LIBS or last in _TENSOR_TYPES:
            return  # `torch.nn.Parameter(w, requires_grad=False)`: a tensor's flag, not a config field
        prefix, recv = self._kw_owner(call, callee, last, args, ctx)
        stmt = self.stmt_node or call
        for kw in kwargs:
            key, value = kw.child_by_field_name("name"), kw.child_by_field_name("value")
            if key is not None and value is not None:
                text = canonical_expr(self.txt(value))
                target = f"{prefix}.{self.txt(key)}"
                self.emit_assign(ctx, target, text, kw, stmt, AssignKind.KEYWORD, recv=recv, raw=value)

    def _kw_owner(self, call: Node, callee: str, last: str, args: Node, ctx: Ctx) -> tuple[str, Recv]:
        """Where a call's keyword writes land: the path they prefix (the assigned target, the object a
        replacer copies, or the constructor) and the object they write into."""
        prefix = self._kw_target.get(call.id)
        if last not in _REPLACERS:
            constructed = Recv(callee, short_type(last), OwnerVia.CONSTRUCTOR)
            return (callee if prefix is None else prefix), constructed
        positional = [a for a in _named(args) if a.type != "keyword_argument"]
        receiver = callee.rsplit(".", 1)[0] if last == "_replace" and "." in callee else None
        if prefix is None:
            first = receiver or (canonical_expr(self.txt(positional[0])) if positional else None)
            prefix = first if first and is_path(first) else None
        if prefix is None:
            prefix = callee
        obj = receiver or ("".join(self.txt(positional[0]).split()) if positional else "")
        return prefix, self.recv_of(ctx, obj)
