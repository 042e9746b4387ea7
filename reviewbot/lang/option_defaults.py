"""Option defaults that deployments inherit, read off the statements and functions of one file.

`parser.add_argument("--max-len", default=8)` (the option `max_len` defaults to 8) and parameter defaults
(`def build(use_x: bool = False)`, `void f(bool use_x = false);`). The tree walk of `lang.clauses` asks
these functions at each statement, function and C++ declaration it meets, and they append what they find
to the walk's list as they go (so a walk cut short by a RecursionError keeps what it had). They are kept
apart from the walk because they read another part of the tree (argument lists, parameter lists,
declarators) and need no guards of their own, only the enclosing function's name.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from reviewbot.lang.clause_records import OptionDefault, OptionKind
from reviewbot.lang.common import canonical_expr
from reviewbot.lang.facts import Lang
from reviewbot.lang.treesitter import first_line, named, text

__all__ = ["calls_in", "add_argument_default", "add_parameter_defaults", "add_declared_defaults"]


def calls_in(node: Node) -> list[Node]:
    """Call nodes inside one statement (not inside nested functions), in source order."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("lambda", "function_definition"):
            continue
        if n.type == "call":
            out.append(n)
        stack.extend(reversed(n.named_children))
    return out


def add_argument_default(out: list[OptionDefault], call: Node, scope: str) -> None:
    """`parser.add_argument("--max-len", type=int, default=8)`: the option `max_len` defaults to 8."""
    fn = call.child_by_field_name("function")
    if fn is None or not text(fn).endswith("add_argument"):
        return
    args = named(call.child_by_field_name("arguments"))
    flags = [a for a in args if a.type == "string"]
    keywords = {
        text(k): v
        for a in args
        if a.type == "keyword_argument"
        and (k := a.child_by_field_name("name")) is not None
        and (v := a.child_by_field_name("value")) is not None
    }
    default = keywords.get("default")
    if default is None:
        return
    dest = keywords.get("dest")
    names = [text(f).strip("\"'") for f in flags]
    name = (
        text(dest).strip("\"'")
        if dest is not None
        else next((n.lstrip("-") for n in names if n.startswith("--")), names[0].lstrip("-") if names else "")
    )
    if name:
        out.append(
            OptionDefault(
                OptionKind.ARGUMENT,
                name.replace("-", "_"),
                canonical_expr(text(default)),
                scope,
                first_line(call),
            )
        )


def add_parameter_defaults(out: list[OptionDefault], node: Node, function: str, lang: Lang) -> None:
    """The defaults of a function definition's parameters, in order."""
    if lang is Lang.PYTHON:
        params = node.child_by_field_name("parameters")
        for p in named(params):
            if p.type in ("default_parameter", "typed_default_parameter"):
                _parameter(out, p.child_by_field_name("name"), p.child_by_field_name("value"), function)
        return
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    _cpp_parameters(out, decl, function)


def add_declared_defaults(out: list[OptionDefault], node: Node, scope: str) -> None:
    """A method declared with default arguments in a class body: `void f(bool x = false);`."""
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type not in ("function_declarator",):
        decl = decl.child_by_field_name("declarator") if decl.type != "init_declarator" else None
    if decl is None:
        return
    inner = decl.child_by_field_name("declarator")
    short = text(inner) if inner is not None else "?"
    name = f"{scope}::{short}" if scope and "::" not in short else short
    _cpp_parameters(out, decl, name)


def _cpp_parameters(out: list[OptionDefault], decl: Node | None, function: str) -> None:
    params = decl.child_by_field_name("parameters") if decl is not None else None
    for p in named(params):
        if p.type == "optional_parameter_declaration":
            _parameter(
                out, p.child_by_field_name("declarator"), p.child_by_field_name("default_value"), function
            )


def _parameter(out: list[OptionDefault], name: Node | None, value: Node | None, function: str) -> None:
    if name is None or value is None:
        return
    short = re.sub(r"[^\w]", "", text(name))
    if short:
        out.append(
            OptionDefault(
                OptionKind.PARAMETER, short, canonical_expr(text(value)), function, first_line(name)
            )
        )
