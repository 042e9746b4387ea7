"""Where a write sits in its function (pure): the loops, `catch`/`except` handlers, switch arms, lambdas
and blocks around a line, the names each of them declares, and the source as written.

The derivation facts place a write in its function and under its `if` conditions, but a function is
not one scope: a local declared in a loop, a block, a lambda or a `catch` clause is another variable
in another loop, block, lambda or clause, and a lambda's body is another function altogether (a
command-line option's handler runs when that option is given, not where it is registered). The
override rules ask this module:

- `same_flow(root, earlier, later)`: can a write on line `earlier` of an object named `root` be
  overwritten by the write on line `later` (no lambda, handler or scope that declares `root` of its own
  lies around one write and not the other);
- `in_handler(line)`: the line runs only when an exception was caught;
- `in_option_handler(line)`: the line is in a lambda registered for a command-line option
  (`add_opt(arg({"-v", "--verbose"}, ..., [](params & p) { p.verbosity = 1; }))`);
- `source(start, end)`: the statement exactly as written, for evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_cpp
import tree_sitter_python
from tree_sitter import Node

from reviewbot.lang.facts import Lang, lang_for_path
from reviewbot.lang.treesitter import LazyParser, first_line, last_line, named, text

__all__ = ["ScopeKind", "Scope", "FileScopes", "file_scopes"]

_PY = LazyParser(tree_sitter_python.language)
_CPP = LazyParser(tree_sitter_cpp.language)
_MAX_DEPTH = 400


class ScopeKind:
    FUNCTION = "function"
    LAMBDA = "lambda"
    LOOP = "loop"
    HANDLER = "handler"  # a `catch` / `except` clause
    CASE = "case"  # one arm of a C++ `switch` (`case 28: ...; break;`) or a Python `match`
    BLOCK = "block"  # a C++ compound statement inside a function


@dataclass(frozen=True)
class Scope:
    kind: str
    start: int
    end: int
    declares: frozenset[str]  # names bound in the scope: loop variables, parameters, locals declared in it
    option: bool = False  # LAMBDA: registered for a command-line option
    switch: tuple[int, int] = (0, 0)  # CASE: the lines of the switch / match body it is an arm of
    leaves: bool = False  # CASE: its last statement leaves the switch (`break`, `return`, `throw`)

    def holds(self, line: int) -> bool:
        return self.start <= line <= self.end


_LOOPS = frozenset({"for_statement", "for_range_loop", "while_statement", "do_statement", "for_in_clause"})
_HANDLERS = frozenset({"catch_clause", "except_clause"})
_CASES = frozenset({"case_statement", "case_clause"})
# Statements that leave a switch arm: no fall-through into the next one.
_JUMPS = frozenset({"break_statement", "return_statement", "throw_statement", "continue_statement"})


def _arm_leaves(node: Node, lang: Lang) -> bool:
    """A Python `case` never falls through; a C++ arm leaves when its last statement is a jump (a
    `break` inside a loop or an `if` of the arm does not count)."""
    if lang is Lang.PYTHON:
        return True
    last = [c for c in named(node) if c.type != "comment"]
    while last and last[-1].type == "compound_statement":
        last = [c for c in named(last[-1]) if c.type != "comment"]
    return bool(last) and last[-1].type in _JUMPS


_FUNCTIONS = frozenset({"function_definition"})
_LAMBDAS = frozenset({"lambda_expression", "lambda"})
_IDENT = re.compile(r"[A-Za-z_]\w*")
_OPTION = re.compile(r"""^["']--?[A-Za-z]""")


def _names(node: Node | None) -> set[str]:
    """Identifiers a declarator or a Python target binds (`auto& r`, `(a, b)`, `const T* p = ...`)."""
    if node is None:
        return set()
    if node.type in ("identifier", "field_identifier"):
        return {text(node)}
    if node.type in ("init_declarator", "reference_declarator", "pointer_declarator", "array_declarator"):
        inner = node.child_by_field_name("declarator") or (named(node)[0] if named(node) else None)
        if node.type == "reference_declarator" and inner is None:
            inner = next((c for c in named(node) if c.type == "identifier"), None)
        return (
            _names(inner)
            if inner is not None
            else {t for c in named(node) if c.type == "identifier" for t in (text(c),)}
        )
    if node.type in ("pattern_list", "tuple_pattern", "list_pattern", "structured_binding_declarator"):
        return {n for c in named(node) for n in _names(c)}
    if node.type in ("parameter_declaration", "optional_parameter_declaration", "declaration"):
        out: set[str] = set()
        for d in node.children_by_field_name("declarator"):
            out |= _names(d)
        return out
    return set()


def _declared_in(node: Node, lang: Lang) -> set[str]:
    """Names a scope node binds of its own."""
    t = node.type
    out = _header_names(node, lang)
    for stmt in named(_scope_body(node)):
        if stmt.type == "declaration":  # C++ `T x = ...;` directly in the scope
            out |= _names(stmt)
        elif lang is Lang.PYTHON and t in _LOOPS | _HANDLERS and stmt.type == "expression_statement":
            inner = named(stmt)[0] if named(stmt) else None
            if inner is not None and inner.type == "assignment":
                out |= _names(inner.child_by_field_name("left"))
    return out


def _header_names(node: Node, lang: Lang) -> set[str]:
    """Names a scope binds in its header: loop variables, caught exceptions, parameters."""
    out: set[str] = set()
    t = node.type
    if t == "for_range_loop":
        out |= _names(node.child_by_field_name("declarator"))
    elif t == "for_statement" and lang is Lang.CPP:
        init = node.child_by_field_name("initializer")
        if init is not None and init.type == "declaration":
            out |= _names(init)
    elif t in ("for_statement", "for_in_clause"):  # Python
        out |= _names(node.child_by_field_name("left"))
    elif t == "catch_clause":
        params = node.child_by_field_name("parameters")
        for p in named(params):
            out |= _names(p)
    elif t == "except_clause":
        for c in named(node):
            if c.type == "as_pattern":
                alias = c.child_by_field_name("alias")
                out |= {text(alias).strip()} if alias is not None else set()
    elif t in _LAMBDAS or t in _FUNCTIONS:
        out = _parameter_names(node)
    return out


def _parameter_names(node: Node) -> set[str]:
    """The parameters of a function or lambda (a name without a declarator: its last identifier)."""
    out: set[str] = set()
    params = node.child_by_field_name("parameters")
    if params is None:
        decl = node.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters") if decl is not None else None
    for p in named(params):
        found = _names(p)
        out |= found or set(_IDENT.findall(text(p).split("=", 1)[0].split(":", 1)[0])[-1:])
    return out


def _scope_body(node: Node) -> Node | None:
    """The block whose direct statements belong to the scope."""
    t = node.type
    if t == "compound_statement":
        return node
    return node.child_by_field_name("body") or (
        next((c for c in named(node) if c.type in ("compound_statement", "block")), None)
        if t in _HANDLERS
        else None
    )


def _option_lambda(node: Node) -> bool:
    """A lambda passed (at most two calls up) to a call that names a command-line option (`"--x"`)."""
    up: Node | None = node.parent
    for _ in range(2):
        while up is not None and up.type in ("argument_list", "initializer_list", "argument"):
            up = up.parent
        if up is None or up.type not in ("call_expression", "call"):
            return False
        args = up.child_by_field_name("arguments")
        for arg in named(args):
            items = named(arg) if arg.type == "initializer_list" else [arg]
            if any(i.type in ("string_literal", "string") and _OPTION.match(text(i)) for i in items):
                return True
        up = up.parent
    return False


def call_text(lines: Sequence[str], line: int, opener: str = "add_argument(") -> str:
    """The text of the call that holds 1-based `line`: from the line that opens it (up to 3 lines
    above) to the line where its parentheses close, at most 12 lines; quoted text is not counted."""
    start = next((n for n in range(line, max(line - 4, 0), -1) if opener in lines[n - 1]), line)
    out, depth = [], 0
    for row in lines[start - 1 : start + 11]:
        out.append(row)
        bare = re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", "", row)
        depth += bare.count("(") - bare.count(")")
        if depth <= 0:
            break
    return "\n".join(out)


_STORE_ACTION = re.compile(r"""action\s*=\s*["']store_(true|false)["']""")


@dataclass(frozen=True)
class FileScopes:
    lang: Lang
    scopes: tuple[Scope, ...]
    lines: tuple[str, ...]
    # Python command-line options the file declares (`add_argument("--seq-par", dest=...)`), by
    # destination (`seq_par`), with the line of the declaration.
    options: tuple[tuple[str, int], ...] = ()

    def option_line(self, dest: str) -> int | None:
        return next((line for name, line in self.options if name == dest), None)

    def option_stores(self, dest: str) -> str:
        """`"True"` for a `store_true` option of that destination, `"False"` for `store_false`, else
        "": the one value the command line can give it (read off its declaration, up to 8 lines)."""
        line = self.option_line(dest)
        if line is None:
            return ""
        m = _STORE_ACTION.search(call_text(self.lines, line))
        return ("True" if m.group(1) == "true" else "False") if m else ""

    def around(self, line: int) -> list[Scope]:
        """The scopes that hold `line`, outermost first."""
        return [s for s in self.scopes if s.holds(line)]

    def in_handler(self, line: int) -> bool:
        return any(s.kind == ScopeKind.HANDLER for s in self._inner(line))

    def in_option_handler(self, line: int) -> bool:
        return any(s.kind == ScopeKind.LAMBDA and s.option for s in self.around(line))

    def _inner(self, line: int) -> list[Scope]:
        """The scopes around `line` inside its innermost function or lambda."""
        found = self.around(line)
        cut = max(
            (i for i, s in enumerate(found) if s.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA)), default=-1
        )
        return found[cut + 1 :]

    def same_flow(self, root: str, earlier: int, later: int) -> bool:
        """Whether the write on line `earlier` to an object named `root` can be the one the write on
        line `later` overwrites: not when a lambda or a function holds one of them and not the other,
        not when they sit in different `catch` / `except` clauses or in two arms of a switch (the earlier
        arm leaving it with `break` / `return`), and not when a loop, block or clause
        holding only one of them declares `root` itself (its own local, another variable)."""
        a, b = self.around(earlier), self.around(later)
        for s in {*a} ^ {*b}:
            if s.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                return False
            if s.kind == ScopeKind.HANDLER and any(
                t.kind == ScopeKind.HANDLER for t in {*a} ^ {*b} if t != s
            ):
                return False
            if (
                s.kind == ScopeKind.CASE
                and s in a
                and s.leaves
                and any(t.kind == s.kind and t.switch == s.switch for t in {*b} - {*a})
            ):
                return False  # two arms of one switch, the earlier one leaving it: never both
            if root in s.declares:
                return False
        return True

    def source(self, start: int, end: int | None = None) -> str:
        """Lines `start`..`end` as written, joined by single spaces (indentation dropped)."""
        last = end if end is not None and end >= start else start
        chunk = self.lines[start - 1 : last]
        return " ".join(x.strip() for x in chunk if x.strip())


def _options(root: Node) -> list[tuple[str, int]]:
    """`parser.add_argument("--a-b", ...)` / `group.add_argument("-x", "--a-b", dest="c")`: (dest, line)."""
    out: list[tuple[str, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "call":
            continue
        fn = node.child_by_field_name("function")
        if fn is None or not text(fn).endswith("add_argument"):
            continue
        args = named(node.child_by_field_name("arguments"))
        flags = [text(a).strip("\"'") for a in args if a.type == "string"]
        dest = next(
            (
                text(v).strip("\"'")
                for a in args
                if a.type == "keyword_argument"
                and (k := a.child_by_field_name("name")) is not None
                and text(k) == "dest"
                and (v := a.child_by_field_name("value")) is not None
            ),
            "",
        )
        name = dest or next((f.lstrip("-") for f in flags if f.startswith("--")), "")
        if name:
            out.append((name.replace("-", "_"), first_line(node)))
    return sorted(out, key=lambda o: (o[1], o[0]))


def _walk(root: Node, lang: Lang) -> list[Scope]:
    out: list[Scope] = []
    stack: list[tuple[Node, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, in_fn = stack.pop()
        if depth > _MAX_DEPTH:
            continue
        t = node.type
        kind = ""
        if t in _FUNCTIONS:
            kind = ScopeKind.FUNCTION
        elif t in _LAMBDAS:
            kind = ScopeKind.LAMBDA
        elif t in _LOOPS:
            kind = ScopeKind.LOOP
        elif t in _HANDLERS:
            kind = ScopeKind.HANDLER
        elif t in _CASES:
            kind = ScopeKind.CASE
        elif (
            t == "compound_statement"
            and in_fn
            and node.parent is not None
            and node.parent.type not in (*_FUNCTIONS, *_LAMBDAS, *_LOOPS, *_HANDLERS)
        ):
            kind = ScopeKind.BLOCK
        if kind:
            out.append(
                Scope(
                    kind,
                    first_line(node),
                    last_line(node),
                    frozenset(_declared_in(node, lang)),
                    option=kind == ScopeKind.LAMBDA and _option_lambda(node),
                    switch=(first_line(node.parent), last_line(node.parent)) if node.parent else (0, 0),
                    leaves=kind == ScopeKind.CASE and _arm_leaves(node, lang),
                )
            )
        inside = in_fn or kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA)
        stack.extend((c, depth + 1, inside) for c in reversed(node.children))
    return sorted(out, key=lambda s: (s.start, -s.end))


@lru_cache(maxsize=64)
def file_scopes(path: str, source: str) -> FileScopes | None:
    """The scopes of one C++ or Python file (None for other languages). Cached: both override rules
    ask for the same changed files in a round."""
    lang = lang_for_path(path)
    if lang is None:
        return None
    parser = _PY if lang is Lang.PYTHON else _CPP
    root = parser.get().parse(source.encode("utf-8", "replace")).root_node
    options = tuple(_options(root)) if lang is Lang.PYTHON and "add_argument" in source else ()
    return FileScopes(lang, tuple(_walk(root, lang)), tuple(source.splitlines()), options)
