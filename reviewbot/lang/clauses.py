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
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

import tree_sitter_cpp
import tree_sitter_python
from tree_sitter import Node

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.env import env_sources, env_write
from reviewbot.lang.facts import Lang, lang_for_path
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
_CHECK_MACRO = re.compile(r"(?:\w+_)?(?:CHECK|ASSERT|REQUIRE)(?:_\w+)?|assert|static_assert|TORCH_CHECK\w*")


class ClauseKind(str, Enum):
    ASSIGN = "assign"  # `x = v`, `x += v`, `T x = v;`
    ENV_WRITE = "env-write"  # `os.environ["X"] = v`, `setenv("X", v, 1)`: see `Clause.env_name`
    CALL = "call"  # a call for its effect
    RAISE = "raise"  # `raise ...`, `throw ...;`
    RETURN = "return"  # `return ...`, `continue`, `break`
    CHECK = "check"  # `assert cond`, `assert(cond)`, `FT_CHECK(cond)`, `TORCH_CHECK(cond, ...)`
    OTHER = "other"

    @property
    def validates(self) -> bool:
        """A statement that rejects a configuration: a raise, a throw, an assertion or a check macro."""
        return self in (ClauseKind.RAISE, ClauseKind.CHECK)


@dataclass(frozen=True)
class Guard:
    """One condition a statement runs under; `negated` for the else side of it."""

    text: str  # canonical condition, without the outer parentheses
    negated: bool
    line: int
    written: str = ""  # as written (one line, outer parentheses dropped), for messages

    @property
    def shown(self) -> str:
        body = self.written or self.text
        return f"not ({body})" if self.negated else body

    @property
    def spelled(self) -> str:
        return f"not ({self.text})" if self.negated else self.text


@dataclass(frozen=True)
class Clause:
    kind: ClauseKind
    text: str  # canonical statement text
    line: int
    end_line: int
    guards: tuple[Guard, ...] = ()  # outermost first
    function: str = ""  # `Class.method` / `Class::method`; "" at module or namespace level
    env_name: str = ""  # ENV_WRITE: the variable written
    env_sources: tuple[str, ...] = ()  # environment variables the statement reads (`os.environ.get("OLD")`)

    @property
    def guard_atoms(self) -> frozenset[str]:
        return frozenset(a for g in self.guards for a in atoms(g))


class OptionKind(str, Enum):
    ARGUMENT = "argument"  # `parser.add_argument("--x", default=...)`
    PARAMETER = "parameter"  # a function parameter's default


@dataclass(frozen=True)
class OptionDefault:
    kind: OptionKind
    name: str  # the option's destination (`--max-len` -> `max_len`) or the parameter's name
    default: str  # canonical
    function: str  # `Class.method` / `Class::method` (the enclosing one for an argument)
    line: int


@dataclass(frozen=True)
class Clauses:
    path: str
    lang: Lang
    clauses: tuple[Clause, ...] = ()
    options: tuple[OptionDefault, ...] = ()


_TOP_AND = re.compile(r"\s*(?<![\w.])and(?![\w])\s*|\s*&&\s*")


def _conjuncts(t: str) -> list[str]:
    depth, start, out = 0, 0, []
    for m in _TOP_AND.finditer(t):
        depth = sum(1 if c in "([{" else -1 if c in ")]}" else 0 for c in t[: m.start()])
        if depth == 0:
            out.append(t[start : m.start()])
            start = m.end()
    out.append(t[start:])
    return [a.strip() for a in out if a.strip()]


def atoms(guard: Guard) -> tuple[str, ...]:
    """The conjuncts a guard requires: `a and b` -> (`a`, `b`); a negated guard stays whole."""
    if guard.negated:
        return (guard.spelled,)
    return tuple(canonical_expr(a) for a in _conjuncts(guard.text))


def written_atoms(guard: Guard) -> dict[str, str]:
    """Each conjunct of `atoms(guard)` as written (`!use_kvcache` for `!use_kvcache`); the canonical
    text when the written one does not split the same way."""
    if guard.negated or not guard.written:
        return {a: guard.shown for a in atoms(guard)}
    raw = _conjuncts(guard.written)
    canonical = atoms(guard)
    if len(raw) != len(canonical):
        return {a: a for a in canonical}
    return dict(zip(canonical, raw, strict=True))


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
            self._cpp_declaration(node, scope)  # a member: its default is a fact; a method: its defaults
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
                self._cpp_declaration(node, scope)  # a prototype at namespace scope: its defaults
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
                self._cpp_declaration(child, cls)  # a method or constructor declared with default arguments
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
        self._parameters(node, name)
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
            for call in _calls(node):
                self._argument(call, scope)

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

    # --- option defaults --------------------------------------------------------------------------

    def _argument(self, call: Node, scope: str) -> None:
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
            else next(
                (n.lstrip("-") for n in names if n.startswith("--")), names[0].lstrip("-") if names else ""
            )
        )
        if name:
            self.options.append(
                OptionDefault(
                    OptionKind.ARGUMENT,
                    name.replace("-", "_"),
                    canonical_expr(text(default)),
                    scope,
                    first_line(call),
                )
            )

    def _parameters(self, node: Node, function: str) -> None:
        if self.lang is Lang.PYTHON:
            params = node.child_by_field_name("parameters")
            for p in named(params):
                if p.type in ("default_parameter", "typed_default_parameter"):
                    self._parameter(p.child_by_field_name("name"), p.child_by_field_name("value"), function)
            return
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        self._cpp_parameters(decl, function)

    def _cpp_parameters(self, decl: Node | None, function: str) -> None:
        params = decl.child_by_field_name("parameters") if decl is not None else None
        for p in named(params):
            if p.type == "optional_parameter_declaration":
                self._parameter(
                    p.child_by_field_name("declarator"), p.child_by_field_name("default_value"), function
                )

    def _parameter(self, name: Node | None, value: Node | None, function: str) -> None:
        if name is None or value is None:
            return
        short = re.sub(r"[^\w]", "", text(name))
        if short:
            self.options.append(
                OptionDefault(
                    OptionKind.PARAMETER, short, canonical_expr(text(value)), function, first_line(name)
                )
            )

    def _cpp_declaration(self, node: Node, scope: str) -> None:
        """A method declared with default arguments in a class body: `void f(bool x = false);`."""
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("function_declarator",):
            decl = decl.child_by_field_name("declarator") if decl.type != "init_declarator" else None
        if decl is None:
            return
        inner = decl.child_by_field_name("declarator")
        short = text(inner) if inner is not None else "?"
        name = f"{scope}::{short}" if scope and "::" not in short else short
        self._cpp_parameters(decl, name)


def _guard(cond: Node | None, at: Node) -> Guard:
    if cond is None:
        return Guard("", False, first_line(at))
    raw = _unparen(" ".join(text(cond).split()))
    return Guard(canonical_expr(raw), False, first_line(at), raw)


def _calls(node: Node) -> list[Node]:
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
