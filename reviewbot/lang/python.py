"""Python front end: tree-sitter-python syntax trees -> derivation facts (`facts.FileFacts`).

Covers attribute and local writes under if/elif/else and conditional expressions, keyword
arguments of config constructors and `replace(...)`, `@property` derivations, class and
dataclass defaults (and unconditional `self.x = v` in `__init__`), Enum subclasses, and
attribute reads with what they gate (one level of aliasing through `self.x` or a local).
"""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter_python
from tree_sitter import Node

from reviewbot.lang.common import canonical_expr, last_component
from reviewbot.lang.facts import FileFacts, Lang
from reviewbot.lang.python_body import FIELD_FUNCS, PyBody
from reviewbot.lang.treesitter import LazyParser, count_errors
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walker import Ctx

__all__ = ["parse"]

_PARSER = LazyParser(tree_sitter_python.language)

_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
_PROPERTIES = frozenset({"property", "cached_property", "functools.cached_property"})


def parse(path: str, text: str, focus: Callable[[str], bool] | None = None) -> FileFacts:
    """Facts of one Python file; never raises on bad input (see `FileFacts.parse_errors`).

    With `focus`, only function bodies whose text it accepts are walked (see `Walker.walk_body`).
    """
    tree = _PARSER.get().parse(text.encode("utf-8", "replace"))
    walker = _PyWalker(path, text, Lang.PYTHON, focus=focus)
    try:
        walker.stmt(tree.root_node, Ctx())
    except RecursionError:
        walker.degraded += 1
    return walker.facts(count_errors(tree.root_node))


class _PyWalker(PyBody):
    """Modules, classes (defaults, enums) and function definitions of one file."""

    def definition(self, node: Node, ctx: Ctx) -> None:
        if node.type == "function_definition":
            self._function(node, ctx, [], node)
        elif node.type == "class_definition":
            self._class(node, ctx, node)
        else:
            self._definition(node, ctx)

    def _definition(self, node: Node, ctx: Ctx) -> None:
        decorators = [
            canonical_expr(self.txt(d)).lstrip("@") for d in node.named_children if d.type == "decorator"
        ]
        inner = node.child_by_field_name("definition")
        if inner is not None and inner.type == "function_definition":
            self._function(inner, ctx, decorators, node)
        elif inner is not None and inner.type == "class_definition":
            self._class(inner, ctx, node)

    def _params(self, node: Node | None) -> tuple[tuple[str, str | None], ...]:
        out: list[tuple[str, str | None]] = []
        for p in _named(node):
            if p.type == "identifier":
                out.append((self.txt(p), None))
            elif p.type == "typed_parameter":
                name = next((c for c in p.named_children if c.type == "identifier"), None)
                if name is not None:
                    out.append((self.txt(name), None))
            elif p.type in ("default_parameter", "typed_default_parameter"):
                name, value = p.child_by_field_name("name"), p.child_by_field_name("value")
                if name is not None:
                    out.append(
                        (self.txt(name), canonical_expr(self.txt(value)) if value is not None else None)
                    )
        return tuple(out)

    def _function(self, node: Node, ctx: Ctx, decorators: list[str], outer: Node) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.txt(name_node)
        qual = f"{ctx.scope}.{name}" if ctx.scope else name
        self.emit_function(qual, outer)
        in_class = ctx.cls is not None and ctx.function is None

        def walk() -> None:
            fctx = Ctx(
                function=qual,
                cls=ctx.cls,
                scope=qual,
                prop=name if in_class and any(d in _PROPERTIES for d in decorators) else None,
                init=in_class and name == "__init__",
                method=in_class,
                params=self._params(node.child_by_field_name("parameters")),
            )
            body = node.child_by_field_name("body")
            try:
                if body is not None:
                    self.stmt(body, fctx)
            except RecursionError:
                self.degraded += 1

        self.walk_body(node, ctx.cls, walk)

    def _class(self, node: Node, ctx: Ctx, outer: Node) -> None:
        name_node, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if name_node is None or body is None:
            return
        name = self.txt(name_node)
        qual = f"{ctx.scope}.{name}" if ctx.scope else name
        bases = {
            last_component(canonical_expr(self.txt(b)))
            for b in _named(node.child_by_field_name("superclasses"))
        }
        is_enum = bool(bases & _ENUM_BASES)
        cctx = Ctx(cls=qual, scope=qual)
        members: list[str] = []
        for st in _named(body):
            self.stmt_node = st
            inner = _named(st) if st.type == "expression_statement" else []
            if len(inner) == 1 and inner[0].type == "assignment":
                left, right = inner[0].child_by_field_name("left"), inner[0].child_by_field_name("right")
                if left is not None and left.type == "identifier":
                    attr = self.txt(left)
                    if right is not None:
                        if is_enum and not attr.startswith("_"):
                            members.append(attr)
                        elif not is_enum:
                            self.emit_default(qual, attr, self._default_value(right), left)
                        self.scan(right, cctx)
                    continue
            self.stmt(st, cctx)
        if is_enum:
            self.enums[name] = tuple(members)

    def _default_value(self, value: Node) -> str:
        """`field(default=v)` -> v, `field(default_factory=F)` -> `F()`, anything else as written."""
        parts = self.call_parts(value)
        if parts is not None and last_component(canonical_expr(self.txt(parts[0]))) in FIELD_FUNCS:
            args = _named(parts[1])
            for arg in args:
                if arg.type == "keyword_argument":
                    key, val = arg.child_by_field_name("name"), arg.child_by_field_name("value")
                    if key is not None and val is not None and self.txt(key) == "default":
                        return canonical_expr(self.txt(val))
                    if key is not None and val is not None and self.txt(key) == "default_factory":
                        return f"{canonical_expr(self.txt(val))}()"
            if args and args[0].type != "keyword_argument":
                return canonical_expr(self.txt(args[0]))
        return canonical_expr(self.txt(value))
