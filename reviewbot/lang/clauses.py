"""Statements with the conditions they run under, and option defaults, of one C++ or Python file.

The derivation facts (`facts.Assignment`) cover writes of fields; the rules that compare a file before
and after a change (`guard-removed`, `env-switch-renamed`, `default-changed`) also need the statements
that are not field writes: a guard clause (`if cond: raise ...`, `if (!ok) throw ...;`), a validation
(`assert`, `FT_CHECK(...)`), an environment write that aliases one switch to another
(`os.environ["NEW"] = os.environ.get("OLD")`, `setenv("NEW", getenv("OLD"), 1)`), a call that only runs
under a condition. `clauses(path, text)` lists every simple statement of the file with the chain of
conditions around it, outermost first (`elif` / `else if` branches carry the negations of the branches
before them), and the option defaults that deployments inherit: `add_argument("--x", default=...)` and
parameter defaults (`def build(use_x: bool = False)`, `void f(bool use_x = false);`).

Texts are in the canonical spelling of `common.canonical_expr`, so both revisions of a file compare
equal when only whitespace, `self.`/`this->` or `::`/`.` spelling differ.

The records (`Clause`, `Guard`, `OptionDefault`, ...) are defined in `lang.clause_records` and re-exported
here, where their callers import them; the option defaults are read by `lang.option_defaults`.
"""

from __future__ import annotations

import contextlib
import re
from functools import lru_cache

import tree_sitter_cpp
import tree_sitter_python
from tree_sitter import Node

from reviewbot.lang.clause_records import (
    Clause,
    ClauseKind,
    Clauses,
    Guard,
    OptionDefault,
    OptionKind,
    atoms,
    written_atoms,
)
from reviewbot.lang.common import canonical_expr
from reviewbot.lang.env import env_sources, env_write
from reviewbot.lang.facts import Lang, lang_for_path
from reviewbot.lang.option_defaults import (
    add_argument_default,
    add_declared_defaults,
    add_parameter_defaults,
    calls_in,
)
from reviewbot.lang.treesitter import LazyParser, first_line, last_line, named, text

__all__ = [
    "ClauseKind",
    "Guard",
    "Clause",
    "OptionKind",
    "OptionDefault",
    "Clauses",
    "clauses",
    "atoms",
    "written_atoms",
]

_PY = LazyParser(tree_sitter_python.language)
_CPP = LazyParser(tree_sitter_cpp.language)
_MAX_DEPTH = 200  # nesting followed at most this deep (generated code); deeper statements are left out
# Check macros: FT_CHECK, TORCH_CHECK_EQ, glog/TVM `CHECK_LE`, `DCHECK`, `ICHECK`, `TVM_FFI_ICHECK(...)`.
_CHECK_MACRO = re.compile(
    r"(?:\w+_)?[DIP]?(?:CHECK|ASSERT|REQUIRE)(?:_\w+)?|assert|static_assert|TORCH_CHECK\w*"
)


@lru_cache(maxsize=128)
def clauses(path: str, source: str) -> Clauses:
    """Statements and option defaults of one file (empty for other languages). Cached: the same
    changed file is read by several rules of one round."""
    lang = lang_for_path(path)
    if lang is None:
        return Clauses(path, Lang.PYTHON)
    parser = _PY if lang is Lang.PYTHON else _CPP
    root = parser.get().parse(source.encode("utf-8", "replace")).root_node
    walker = _Walker(lang)
    with contextlib.suppress(RecursionError):  # what was found so far stands; deeper statements are left out
        walker.block(root, (), "", 0)
    return Clauses(path, lang, tuple(walker.out), tuple(walker.options))


def _unparen(t: str) -> str:
    t = t.strip()
    while t.startswith("(") and t.endswith(")"):
        inner = t[1:-1]
        depth = 0
        for c in inner:
            depth += 1 if c == "(" else -1 if c == ")" else 0
            if depth < 0:
                return t
        t = inner.strip()
    return t


class _Walker:
    def __init__(self, lang: Lang) -> None:
        self.lang = lang
        self.out: list[Clause] = []
        self.options: list[OptionDefault] = []

    # --- structure --------------------------------------------------------------------------------

    def block(self, node: Node, guards: tuple[Guard, ...], scope: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        for child in named(node):
            self.statement(child, guards, scope, depth + 1)

    def statement(self, node: Node, guards: tuple[Guard, ...], scope: str, depth: int) -> None:
        t = node.type
        if t == "if_statement":
            self._if(node, guards, scope, depth)
        elif t in ("function_definition", "decorated_definition"):
            self._function(node, guards, scope, depth)
        elif t in ("class_definition", "class_specifier", "struct_specifier"):
            self._class(node, scope, depth)
        elif t == "field_declaration":
            add_declared_defaults(
                self.options, node, scope
            )  # a member: its default is a fact; a method: its defaults
        elif t in _BODIES:
            self.block(node, guards, scope, depth)
        elif t == "case_statement":
            value = node.child_by_field_name("value")
            spelled = f"case {canonical_expr(text(value))}" if value is not None else "default"
            case = Guard(spelled, False, first_line(node))
            for child in named(node):
                if child is not value:
                    self.statement(child, (*guards, case), scope, depth + 1)
        elif t in _TRANSPARENT:
            for child in named(node):
                if child.type in _NESTED:
                    self.statement(child, guards, scope, depth + 1)
        elif t in _STATEMENT_TYPES:
            if t == "declaration" and not scope:
                add_declared_defaults(
                    self.options, node, scope
                )  # a prototype at namespace scope: its defaults
            else:
                self._simple(node, guards, scope)

    def _class(self, node: Node, scope: str, depth: int) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is None:
            return
        inner = text(name) if name is not None else ""
        cls = f"{scope}{self._sep}{inner}" if scope and inner else inner or scope
        for child in named(body):
            if child.type in ("declaration", "field_declaration") and self.lang is Lang.CPP:
                add_declared_defaults(
                    self.options, child, cls
                )  # a method or constructor declared with default arguments
            else:
                self.statement(child, (), cls, depth + 1)

    @property
    def _sep(self) -> str:
        return "." if self.lang is Lang.PYTHON else "::"

    def _if(self, node: Node, guards: tuple[Guard, ...], scope: str, depth: int) -> None:
        cond = node.child_by_field_name("condition")
        here = _guard(cond, node)
        body = node.child_by_field_name("consequence")
        if body is not None:
            self._branch(body, (*guards, here), scope, depth)
        before = [here]
        for alt in (c for c in node.children if c.type in ("elif_clause", "else_clause")):
            negs = tuple(Guard(g.text, True, g.line, g.written) for g in before)
            if alt.type == "elif_clause":
                c2 = alt.child_by_field_name("condition")
                g2 = _guard(c2, alt)
                b2 = alt.child_by_field_name("consequence")
                if b2 is not None:
                    self._branch(b2, (*guards, *negs, g2), scope, depth)
                before.append(g2)
                continue
            inner = alt.child_by_field_name("body") or (named(alt)[0] if named(alt) else None)
            if inner is None:
                continue
            if inner.type == "if_statement":  # C++ `else if`: the nested if chains on
                self._if(inner, (*guards, *negs), scope, depth + 1)
            else:
                self._branch(inner, (*guards, *negs), scope, depth)

    def _branch(self, body: Node, guards: tuple[Guard, ...], scope: str, depth: int) -> None:
        if body.type in _BODIES:
            self.block(body, guards, scope, depth + 1)
        else:
            self.statement(body, guards, scope, depth + 1)

    def _function(self, node: Node, guards: tuple[Guard, ...], scope: str, depth: int) -> None:
        if node.type == "decorated_definition":
            inner = node.child_by_field_name("definition")
            if inner is not None:
                self.statement(inner, guards, scope, depth)
            return
        name = self._function_name(node, scope)
        add_parameter_defaults(self.options, node, name, self.lang)
        body = node.child_by_field_name("body")
        if body is not None:
            self.block(body, (), name, depth)
        if self.lang is Lang.CPP:
            inits = next((c for c in node.children if c.type == "field_initializer_list"), None)
            for init in named(inits):
                self.out.append(self._clause(init, ClauseKind.ASSIGN, (), name))

    def _function_name(self, node: Node, scope: str) -> str:
        if self.lang is Lang.PYTHON:
            name = node.child_by_field_name("name")
            short = text(name) if name is not None else "?"
            return f"{scope}.{short}" if scope else short
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("function_declarator",):
            decl = decl.child_by_field_name("declarator")
        inner = decl.child_by_field_name("declarator") if decl is not None else None
        short = text(inner) if inner is not None else "?"
        return f"{scope}::{short}" if scope and "::" not in short else short

    # --- statements --------------------------------------------------------------------------------

    def _simple(self, node: Node, guards: tuple[Guard, ...], scope: str) -> None:
        kind = self._kind(node)
        self.out.append(self._clause(node, kind, guards, scope))
        if self.lang is Lang.PYTHON:
            for call in calls_in(node):
                add_argument_default(self.options, call, scope)

    def _kind(self, node: Node) -> ClauseKind:
        t = node.type
        if t in ("raise_statement", "throw_statement"):
            return ClauseKind.RAISE
        if t in ("return_statement", "continue_statement", "break_statement"):
            return ClauseKind.RETURN
        if t == "assert_statement":
            return ClauseKind.CHECK
        inner = named(node)[0] if named(node) else None
        if inner is None:
            return ClauseKind.OTHER
        if inner.type == "throw_expression":
            return ClauseKind.RAISE
        if inner.type in ("assignment", "augmented_assignment", "assignment_expression"):
            return ClauseKind.ENV_WRITE if env_write(canonical_expr(text(inner))) else ClauseKind.ASSIGN
        if inner.type in ("call", "call_expression"):
            fn = inner.child_by_field_name("function")
            callee = canonical_expr(text(fn)) if fn is not None else ""
            if env_write(canonical_expr(text(inner))):
                return ClauseKind.ENV_WRITE
            if _CHECK_MACRO.fullmatch(callee.rsplit(".", 1)[-1]):
                return ClauseKind.CHECK
            return ClauseKind.CALL
        if t == "declaration":
            return ClauseKind.ASSIGN
        return ClauseKind.OTHER

    def _clause(self, node: Node, kind: ClauseKind, guards: tuple[Guard, ...], scope: str) -> Clause:
        body = canonical_expr(text(node)).rstrip(";")
        written = env_write(body) if kind is ClauseKind.ENV_WRITE else None
        return Clause(
            kind=kind,
            text=body,
            line=first_line(node),
            end_line=last_line(node),
            guards=guards,
            function=scope,
            env_name=written[0] if written else "",
            env_sources=env_sources(written[1] if written else body),
        )


def _guard(cond: Node | None, at: Node) -> Guard:
    if cond is None:
        return Guard("", False, first_line(at))
    raw = _unparen(" ".join(text(cond).split()))
    return Guard(canonical_expr(raw), False, first_line(at), raw)


# Children of a transparent statement that are walked (not its loop variables, conditions, handlers' types).
_NESTED_EXTRA = frozenset(
    {
        "if_statement",
        "case_statement",
        "function_definition",
        "class_specifier",
        "struct_specifier",
        "class_definition",
    }
)

# Statements whose children are statements (loops, try, with, preprocessor blocks, namespaces).
_TRANSPARENT = frozenset(
    {
        "for_statement", "while_statement", "do_statement", "for_range_loop", "try_statement",
        "with_statement", "except_clause", "finally_clause", "catch_clause", "namespace_definition",
        "linkage_specification", "template_declaration", "preproc_if", "preproc_ifdef", "preproc_else",
        "preproc_elif", "switch_statement", "labeled_statement", "match_statement", "case_clause",
        "else_clause", "export_statement",
    }
)  # fmt: skip
_BODIES = frozenset(
    {
        "block",
        "compound_statement",
        "declaration_list",
        "field_declaration_list",
        "module",
        "translation_unit",
    }
)
_STATEMENT_TYPES = frozenset(
    {
        "expression_statement", "return_statement", "raise_statement", "assert_statement", "throw_statement",
        "continue_statement", "break_statement", "declaration", "delete_statement", "pass_statement",
        "global_statement", "nonlocal_statement", "del_statement", "print_statement", "exec_statement",
    }
)  # fmt: skip
_NESTED = _BODIES | _TRANSPARENT | _STATEMENT_TYPES | _NESTED_EXTRA
