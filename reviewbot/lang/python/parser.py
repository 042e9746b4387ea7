"""Python front end: tree-sitter-python syntax trees -> derivation facts (`facts.FileFacts`).

Covers attribute and local writes under if/elif/else and conditional expressions, keyword
arguments of config constructors and `replace(...)`, `@property` derivations, class and
dataclass defaults (and unconditional `self.x = v` in `__init__`), Enum subclasses, and
attribute reads with what they gate (one level of aliasing through `self.x` or a local).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import tree_sitter_python
from tree_sitter import Node

from reviewbot.lang.common import canonical_expr, last_component
from reviewbot.lang.env import unquote
from reviewbot.lang.facts import FileFacts, Lang, Owner, OwnerKind, OwnerVia
from reviewbot.lang.owners import DATACLASS_BASES, DATACLASS_DECORATORS, is_config_name, short_type
from reviewbot.lang.predicate import Atom
from reviewbot.lang.python.body import FIELD_FUNCS, PyBody
from reviewbot.lang.treesitter import LazyParser, count_errors, error_spans
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walk.walker import Ctx

__all__ = ["parse"]

_PARSER = LazyParser(tree_sitter_python.language)

_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
_PROPERTIES = frozenset({"property", "cached_property", "functools.cached_property"})
_DELEGATE = re.compile(r"self\.([A-Za-z_]\w*)")


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
    return walker.facts(count_errors(tree.root_node), error_spans(tree.root_node))


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
            self._class(inner, ctx, node, decorators)

    def _param_types(self, node: Node | None) -> list[tuple[str, str]]:
        """(name, short type) of the annotated parameters: `cfg: ModelConfig`, `c: "Cfg" = None`."""
        out: list[tuple[str, str]] = []
        for p in _named(node):
            if p.type not in ("typed_parameter", "typed_default_parameter"):
                continue
            ty = p.child_by_field_name("type")
            name = p.child_by_field_name("name")
            if name is None:
                name = next((c for c in p.named_children if c.type == "identifier"), None)
            if name is not None and ty is not None:
                out.append((self.txt(name), short_type(self.txt(ty))))
        return out

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

        params = node.child_by_field_name("parameters")
        body = node.child_by_field_name("body")

        def fctx() -> Ctx:
            return Ctx(
                function=qual,
                cls=ctx.cls,
                scope=qual,
                prop=name if in_class and any(d in _PROPERTIES for d in decorators) else None,
                init=in_class and name == "__init__",
                method=in_class,
                params=self._params(params),
            )

        def walk() -> None:
            saved, self.types = self.types, {}
            for pname, ptype in self._param_types(params):
                self.set_type(pname, ptype, OwnerVia.PARAM)
            try:
                if body is not None:
                    self.stmt(body, fctx())
            except RecursionError:
                self.degraded += 1
            finally:
                self.types = saved

        constructor = in_class and name in ("__init__", "__post_init__")
        if constructor and body is not None and self.focus is not None and not self.focus(self.txt(node)):
            # A constructor declares the class's fields: outside the focus, only its `self.x = ...`
            # statements are read (for their types), not walked.
            saved, self.types = self.types, {}
            for pname, ptype in self._param_types(params):
                self.set_type(pname, ptype, OwnerVia.PARAM)
            self._init_fields(body, fctx())
            self.types = saved
        self.walk_body(node, ctx.cls, walk)

    def _init_fields(self, body: Node, ctx: Ctx) -> None:
        """The fields a constructor declares (`self.x = ...`, also inside its if/else blocks), without
        walking it: see `PyOwners.track`."""
        stack: list[tuple[Node, bool]] = [(body, False)]
        while stack:
            node, guarded = stack.pop()
            for st in _named(node):
                if st.type == "expression_statement":
                    inner = _named(st)
                    if len(inner) == 1 and inner[0].type == "assignment":
                        left, right = (
                            inner[0].child_by_field_name("left"),
                            inner[0].child_by_field_name("right"),
                        )
                        if left is not None and right is not None and left.type == "attribute":
                            # Any guard will do: a guarded first assignment declares the field without a default.
                            self.track(
                                left, right, replace(ctx, guard=Atom("?")) if guarded else ctx, inner[0]
                            )
                elif st.type == "if_statement":
                    for part in _named(st):
                        if part.type == "block":
                            stack.append((part, True))
                        elif part.type in ("else_clause", "elif_clause"):
                            stack.extend((b, True) for b in _named(part) if b.type == "block")

    def _class(self, node: Node, ctx: Ctx, outer: Node, decorators: list[str] | None = None) -> None:
        name_node, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if name_node is None or body is None:
            return
        name = self.txt(name_node)
        qual = f"{ctx.scope}.{name}" if ctx.scope else name
        bases = {
            last_component(canonical_expr(self.txt(b)))
            for b in _named(node.child_by_field_name("superclasses"))
            if b.type != "keyword_argument"
        }
        is_enum = bool(bases & _ENUM_BASES)
        if not is_enum:
            self._owner(node, name, qual, bases, [d.split("(", 1)[0] for d in decorators or ()], body)
        cctx = Ctx(cls=qual, scope=qual)
        members: list[str] = []
        for st in _named(body):
            self.stmt_node = st
            inner = _named(st) if st.type == "expression_statement" else []
            if len(inner) == 1 and inner[0].type == "assignment":
                left, right = inner[0].child_by_field_name("left"), inner[0].child_by_field_name("right")
                if left is not None and left.type == "identifier":
                    attr = self.txt(left)
                    if not is_enum:
                        self._class_field(qual, attr, inner[0], left, right)
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

    def _owner(
        self, node: Node, name: str, qual: str, bases: set[str], decorators: list[str], body: Node
    ) -> None:
        dataclass_like = bool(bases & DATACLASS_BASES) or any(d in DATACLASS_DECORATORS for d in decorators)
        kind = OwnerKind.DATACLASS if dataclass_like else OwnerKind.CLASS
        # A dataclass or a pydantic model is a record; it holds configuration when its name says so.
        config = is_config_name(name) or any(is_config_name(b) for b in bases)
        self.emit_owner(
            Owner(
                name,
                qual,
                kind,
                self.path,
                self.line(node),
                self.lang,
                tuple(sorted(bases)),
                self._delegate(body),
                config,
            )
        )

    def _delegate(self, body: Node) -> str:
        """The member `__getattr__` forwards unknown attributes to (`return self.params.__getattr__(k)`)."""
        for st in _named(body):
            fn = st.child_by_field_name("definition") if st.type == "decorated_definition" else st
            if fn is None or fn.type != "function_definition":
                continue
            fname = fn.child_by_field_name("name")
            if fname is not None and self.txt(fname) == "__getattr__":
                for m in _DELEGATE.finditer(self.txt(fn)):
                    if not m.group(1).startswith("__"):
                        return m.group(1)
        return ""

    def _class_field(self, qual: str, attr: str, assign: Node, left: Node, right: Node | None) -> None:
        """A class-level field: `x: T = v`, `x: T`, `x = v`, or the names of `__slots__`."""
        if attr == "__slots__" and right is not None:
            for item in _named(right):
                slot = unquote(self.txt(item))
                if slot and slot.isidentifier():
                    self.emit_field(qual, slot, "", None, item)
            return
        if attr.startswith("__") and attr.endswith("__"):
            return
        ann = assign.child_by_field_name("type")
        default = self._default_value(right) if right is not None else None
        if ann is not None:
            type_ = short_type(self.txt(ann))
        else:
            type_ = self.value_type(right) if right is not None else ""
        self.emit_field(qual, attr, type_, default, left)

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
