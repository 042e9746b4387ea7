"""C++ front end: tree-sitter-cpp syntax trees -> derivation facts (`facts.FileFacts`).

Covers what config-derivation code is made of: member writes and local `bool` declarations under
if/else and ternaries, struct member initialisers, enums, pybind `def_readwrite` bindings, and
field reads (`x.f`, `this->f`, and bare member names inside methods) with what they gate.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import tree_sitter_cpp
from tree_sitter import Node

from reviewbot.lang.common import canonical_expr, is_path, last_component
from reviewbot.lang.cpp.body import CLASSES, CppBody
from reviewbot.lang.cpp.macros import blank_macros, extra_macros
from reviewbot.lang.facts import FileFacts, Lang, Owner, OwnerKind, OwnerVia
from reviewbot.lang.owners import is_config_name, short_type
from reviewbot.lang.treesitter import LazyParser, count_errors, error_spans
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walk.walker import Ctx, Recv

__all__ = ["parse"]

_PARSER = LazyParser(tree_sitter_cpp.language)

_CONTAINERS = frozenset(
    {
        "translation_unit",
        "namespace_definition",
        "declaration_list",
        "linkage_specification",
        "template_declaration",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "field_declaration_list",
        "ERROR",
    }
)
_TYPED_DECLS = frozenset({"declaration", "type_definition", "field_declaration", "alias_declaration"})
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


def parse(path: str, text: str, focus: Callable[[str], bool] | None = None) -> FileFacts:
    """Facts of one C++ file; never raises on bad input (see `FileFacts.parse_errors`).

    With `focus`, only function bodies whose text it accepts are walked (see `Walker.walk_body`).
    """
    # Known macros (CUDA qualifiers, export macros, kernel launches) are blanked first: tree-sitter
    # cannot read them and would wrap the declaration holding one in an ERROR node.
    tree = _PARSER.get().parse(blank_macros(text.encode("utf-8", "replace"), extra_macros()))
    walker = _CppWalker(path, text, Lang.CPP, focus=focus)
    try:
        walker.declarations(tree.root_node, None)
    except RecursionError:
        walker.degraded += 1
    walker.macro_bindings()
    return walker.facts(count_errors(tree.root_node), error_spans(tree.root_node))


class _CppWalker(CppBody):
    """Namespaces, classes, enums, member defaults and function definitions of one file."""

    def declarations(self, node: Node, cls: str | None) -> None:
        """Namespaces, classes, enums and functions below `node` (a container)."""
        for child in node.named_children:
            t = child.type
            if t == "function_definition":
                self._function(child, cls)
            elif t in CLASSES:
                self._class(child, cls)
            elif t == "enum_specifier":
                self._enum(child)
            elif t in _TYPED_DECLS:
                ty = child.child_by_field_name("type")
                if ty is not None and ty.type in CLASSES:
                    self._class(ty, cls)
                elif ty is not None and ty.type == "enum_specifier":
                    self._enum(ty)
                if t == "field_declaration" and cls is not None:
                    self._member_defaults(child, cls)
                if t == "declaration" and ".def" in self.txt(child):
                    self._static_bindings(child)
            elif t in _CONTAINERS:
                self.declarations(child, cls)

    def _static_bindings(self, decl: Node) -> None:
        """`static auto x = torch::jit::class_<T>(...).def_readwrite(...)...;` at namespace scope."""
        ctx = Ctx()
        stack = [decl]
        while stack:
            node = stack.pop()
            if node.type == "call_expression":
                fn = node.child_by_field_name("function")
                if fn is not None and fn.type == "field_expression":
                    self._binding(fn, node.child_by_field_name("arguments"), ctx)
            stack.extend(node.named_children)

    def _class(self, node: Node, outer: str | None) -> None:
        name_node, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if body is None:
            return
        name = _TEMPLATE_ARGS.sub("", "".join(self.txt(name_node).split())) if name_node is not None else ""
        full = f"{outer}::{name}" if outer and name else (name or outer or "")
        before = len(self.defaults)
        self.declarations(body, full or None)
        short = name.rsplit("::", 1)[-1]
        if short and node.type != "union_specifier":
            bases = tuple(
                sorted(
                    {
                        short_type(self.txt(b))
                        for clause in node.named_children
                        if clause.type == "base_class_clause"
                        for b in clause.named_children
                        if b.type in ("type_identifier", "qualified_identifier", "template_type")
                    }
                    - {""}
                )
            )
            struct = node.type == "struct_specifier"
            # A struct with member defaults is plain configuration data by convention; any type whose
            # name says so (`ModelConfig`, `GptInitParameter`) is too.
            config = is_config_name(short) or (struct and len(self.defaults) > before)
            kind = OwnerKind.STRUCT if struct else OwnerKind.CLASS
            self.emit_owner(
                Owner(short, full, kind, self.path, self.line(node), self.lang, bases, "", config)
            )

    def _enum(self, node: Node) -> None:
        name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if name is None or body is None:
            return
        members = []
        for e in body.named_children:
            member = e.child_by_field_name("name") if e.type == "enumerator" else None
            if member is not None:
                members.append(self.txt(member))
        self.enums[self.txt(name).rsplit("::", 1)[-1]] = tuple(members)

    def _member_defaults(self, decl: Node, cls: str) -> None:
        """Member declarations: a FieldDecl each (with its type), a FieldDefault for an initialiser."""
        name: str | None = None
        ty = decl.child_by_field_name("type")
        type_text = self.txt(ty) if ty is not None else ""
        pending: tuple[str, str, Node] | None = None
        for i, child in enumerate(decl.children):
            role = decl.field_name_for_child(i)
            if role == "declarator":
                if pending is not None:
                    self.emit_field(cls, pending[0], pending[1], None, pending[2])
                    pending = None
                name = self.declarator_name(child) if child.type != "function_declarator" else None
                if name is not None and "::" not in name:
                    shape = "*" if child.type == "pointer_declarator" else ""
                    pending = (name, short_type(type_text + shape), child)
            elif role == "default_value" and name is not None:
                inner = _named(child) if child.type == "initializer_list" else [child]
                value = inner[0] if len(inner) == 1 else child
                text = canonical_expr(self.txt(value))
                self.emit_default(cls, name, text, child)
                if pending is not None:
                    self.emit_field(cls, pending[0], pending[1], text, pending[2])
                    pending = None
                name = None
        if pending is not None:
            self.emit_field(cls, pending[0], pending[1], None, pending[2])

    def _function(self, fn: Node, cls: str | None) -> None:
        decl = fn.child_by_field_name("declarator")
        for _ in range(12):
            if decl is None or decl.type == "function_declarator":
                break
            decl = decl.child_by_field_name("declarator") or next(iter(_named(decl)[-1:]), None)
        if decl is None:
            return
        name = self.declarator_name(decl.child_by_field_name("declarator"))
        if not name:
            return
        name = _TEMPLATE_ARGS.sub("", name)
        if cls and "::" not in name:
            name = f"{cls}::{name}"
        owner = name.rsplit("::", 1)[0] if "::" in name else None
        self.emit_function(name, fn)
        is_ctor = owner is not None and last_component(owner.replace("::", ".")) == name.rsplit("::", 1)[-1]
        ctx = Ctx(function=name, cls=owner, scope=name, method=owner is not None, init=is_ctor)
        params = decl.child_by_field_name("parameters")

        def walk() -> None:
            names = (self.declarator_name(p.child_by_field_name("declarator")) for p in _named(params))
            self.locals = {n for n in names if n}
            self.types = {}
            for p in _named(params):
                pname = self.declarator_name(p.child_by_field_name("declarator"))
                ptype = p.child_by_field_name("type")
                if pname and ptype is not None:
                    self.set_type(pname, short_type(self.txt(ptype)), OwnerVia.PARAM)
            try:
                for child in fn.named_children:
                    if child.type == "field_initializer_list":
                        self._member_inits(child, ctx)
                body = fn.child_by_field_name("body")
                if body is not None:
                    self.stmt(body, ctx)
            except RecursionError:
                self.degraded += 1

        self.walk_body(fn, owner, walk)

    def _member_inits(self, inits: Node, ctx: Ctx) -> None:
        """`Impl(const Cfg& c) : flag_(c.flag)`: a write of `flag_` and an alias of `c.flag`."""
        for init in inits.named_children:
            parts = _named(init)
            if init.type != "field_initializer" or len(parts) < 2:
                continue
            member, args = self.txt(parts[0]), parts[-1]
            inner = _named(args)
            value = inner[0] if len(inner) == 1 else args
            text = canonical_expr(self.txt(value))
            recv = Recv("this", last_component((ctx.cls or "").replace("::", ".")), OwnerVia.SELF)
            self.emit_assign(ctx, canonical_expr(member), text, init, init, recv=recv, raw=value)
            if len(inner) == 1 and "." in text and is_path(text):
                self.bind_member(ctx.cls, member, text, member, init)
            self.scan(args, ctx)
