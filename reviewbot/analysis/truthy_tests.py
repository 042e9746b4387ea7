"""Python truth tests whose value the code itself fixes (pure): the object tested is always truthy, or
an identity test against a string literal that a value read at run time never is.

Read with the standard `ast` (the same tree every Python rule shares, `analysis.pyast`), on the added
lines of the changed files only, and only where the base did not already have the same expression:

- an `assert` of a parenthesised pair, `assert (cond, "message")`: a non-empty tuple is always true, so
  the assert never fails (pyflakes reports it too: "assertion is always true, perhaps remove
  parentheses?"); an `if`/`while` on a tuple likewise;
- an `or` in a truth position with an operand that is always truthy: a non-empty string or a non-zero
  number literal (`mode == "a" or "b"`), a lambda, or a name of a class or function
  (`builder is None or NotImplementedBuilder`: the class object, not a test of it) — the whole `or`
  is then true for every configuration;
- a method tested without calling it (`if self.use_cache:` where the class defines `def use_cache(self)`
  with no decorator at all: any decorator may make it a property): a bound method is always truthy;
- `is` / `is not` against a string literal (`args.mode is "train"`): it holds only when both are the
  same object; a string read from the command line, a file or the environment is a new one, so the
  test fails for the values operators give (a literal default may be the same interned object). Not
  `""` or a one-character string: CPython keeps one object for each, so there `is` works like `==`.

A truth position is the test of an `if`, `elif`, `while`, `assert` or conditional expression, an operand
of `and`/`or`/`not` in one. A value position (`name = x or "default"`, `(x or "d") in table`) is not one:
there `or` picks a value. Not judged: a name bound more than once or to something else, a class the
module neither defines nor imports, a decorated method.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

from reviewbot.analysis.pyast import Texts, changed_python, python_tree
from reviewbot.analysis.sides import Side

__all__ = ["TruthyKind", "TruthyTest", "truth_positions", "truthy_tests"]


class TruthyKind(str, Enum):
    TUPLE = "tuple"  # `assert (cond, "msg")`, `if (a, b):`
    OPERAND = "operand"  # `x == "a" or "b"`, `b is None or SomeClass`
    UNCALLED = "uncalled"  # `if self.enabled:` for `def enabled(self)`
    IS_LITERAL = "is-literal"  # `mode is "train"`


@dataclass(frozen=True)
class TruthyTest:
    kind: TruthyKind
    path: str
    line: int
    text: str  # the constant sub-expression, as written (`ast.get_source_segment`)
    operand: (
        str  # what fixes it: the truthy operand, the method, what is compared with a literal ("" for a tuple)
    )
    value: bool  # what the sub-expression always gives
    in_assert: bool  # the test of an `assert`: a validation that never fails (or always does)
    function: str  # the enclosing function's qualified name ("" at module level)
    bound_line: int = 0  # where the operand's class/function or the method is defined (0: a literal)


@dataclass(frozen=True)
class _Module:
    """What the module binds at its top level, once: classes and functions (name -> line), and names
    imported from the project whose spelling is a class's (CamelCase: a class object)."""

    callables: dict[str, int]
    rebound: frozenset[str]


def _module_bindings(tree: ast.Module) -> _Module:
    counts: dict[str, int] = {}
    lines: dict[str, int] = {}

    def bind(name: str, line: int) -> None:
        counts[name] = counts.get(name, 0) + 1
        lines.setdefault(name, line)

    callables: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if node in tree.body:
                callables[node.name] = node.lineno
            bind(node.name, node.lineno)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bind(node.id, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node in tree.body:
            for alias in node.names:
                name = alias.asname or alias.name
                bind(name, node.lineno)
                # `from pkg.builder import NotImplementedBuilder`: a CamelCase name imported from a
                # module is a class (constants are UPPER_CASE, functions snake_case).
                if name[:1].isupper() and not name.isupper() and any(c.islower() for c in name):
                    callables[name] = node.lineno
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bind((alias.asname or alias.name).split(".")[0], node.lineno)
        elif isinstance(node, ast.arg):
            bind(node.arg, node.lineno)
    rebound = frozenset(n for n, c in counts.items() if c > 1)
    return _Module({n: ln for n, ln in callables.items() if n not in rebound}, rebound)


def _methods(cls: ast.ClassDef) -> dict[str, int]:
    """Plain methods of a class (no property-like decorator) that no `self.<name> = ...` rebinds."""
    # Undecorated only: any decorator may turn a method into a property (pydantic's `computed_field`,
    # a project's `lazy_property`), and then the attribute is its value, not a bound method.
    defs = {
        n.name: n.lineno
        for n in cls.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not n.decorator_list
    }
    assigned = {
        t.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        # only the object's own attribute rebinds the method (`module.flag = True` sets another object's)
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in ("self", "cls")
    }
    class_level = {
        t.id
        for n in cls.body
        if isinstance(n, ast.Assign | ast.AnnAssign)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }
    # A name defined twice (an overload, a property's getter and setter) is not judged.
    twice = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    dup = {
        name
        for name in twice
        if sum(
            1 for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
        )
        > 1
    }
    return {n: ln for n, ln in defs.items() if n not in assigned | class_level | dup}


def truth_positions(test: ast.expr) -> Iterator[ast.expr]:
    """The test and every operand of `and`/`or`/`not` reached from it: where Python asks for a truth."""
    yield test
    if isinstance(test, ast.BoolOp):
        for v in test.values:
            yield from truth_positions(v)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from truth_positions(test.operand)


def _tests(tree: ast.Module) -> Iterator[tuple[ast.expr, bool, str, ast.ClassDef | None]]:
    """(test, in an assert, enclosing function, enclosing class) for every truth test of the module."""

    def walk(
        node: ast.AST, fn: str, cls: ast.ClassDef | None
    ) -> Iterator[tuple[ast.expr, bool, str, ast.ClassDef | None]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, fn, child)
                continue
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{cls.name}.{child.name}" if cls is not None and not fn else child.name
                yield from walk(child, name, cls)
                continue
            if isinstance(child, ast.If | ast.While | ast.IfExp):
                yield child.test, False, fn, cls
            elif isinstance(child, ast.Assert):
                yield child.test, True, fn, cls
            elif isinstance(child, ast.comprehension):
                for cond in child.ifs:
                    yield cond, False, fn, cls
            yield from walk(child, fn, cls)

    yield from walk(tree, "", None)


def _truthy_operand(e: ast.expr, module: _Module) -> tuple[str, int] | None:
    """`e` is always truthy: (what it is, the line defining it; 0 for a literal)."""
    if isinstance(e, ast.Constant):
        v = e.value
        if isinstance(v, str | bytes) and len(v) > 0:
            return repr(v), 0
        if isinstance(v, int | float) and not isinstance(v, bool) and v != 0:
            return repr(v), 0
        return None
    if isinstance(e, ast.Lambda):
        return "lambda", 0
    if isinstance(e, ast.Name) and e.id in module.callables:
        return e.id, module.callables[e.id]
    return None


def _found(
    test: ast.expr, module: _Module, cls: ast.ClassDef | None
) -> Iterator[tuple[TruthyKind, ast.expr, str, bool, int]]:
    """(kind, constant sub-expression, operand, its value, defining line) in one truth test."""
    methods = _methods(cls) if cls is not None else {}
    for e in truth_positions(test):
        if isinstance(e, ast.Tuple) and e.elts:
            yield TruthyKind.TUPLE, e, "", True, 0
        elif isinstance(e, ast.BoolOp) and isinstance(e.op, ast.Or):
            for v in e.values:
                hit = _truthy_operand(v, module)
                if hit is not None:
                    yield TruthyKind.OPERAND, e, hit[0], True, hit[1]
                    break
        elif (
            isinstance(e, ast.Attribute)
            and isinstance(e.value, ast.Name)
            and e.value.id in ("self", "cls")
            and e.attr in methods
        ):
            yield TruthyKind.UNCALLED, e, e.attr, True, methods[e.attr]
        elif isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], ast.Is | ast.IsNot):
            right = e.comparators[0]
            for side, other in ((e.left, right), (right, e.left)):
                # CPython keeps one object for `""` and for each one-character Latin-1 string, so `x is ""`
                # works like `==` there (a lint nit, not a constant); longer strings are other objects.
                if isinstance(side, ast.Constant) and isinstance(side.value, str) and len(side.value) > 1:
                    # the operand is what is tested (`os.environ["X"]`), not the literal
                    yield TruthyKind.IS_LITERAL, e, ast.unparse(other), isinstance(e.ops[0], ast.IsNot), 0
                    break


def _seen(tree: ast.Module | None, text: str | None) -> set[tuple[TruthyKind, str]]:
    """(kind, expression) of the constant tests a revision already has: not new in this change."""
    if tree is None or text is None:
        return set()
    module = _module_bindings(tree)
    return {(k, ast.unparse(e)) for test, _, _, cls in _tests(tree) for k, e, *_ in _found(test, module, cls)}


def truthy_tests(changed: Iterable[Side], texts: Texts) -> list[TruthyTest]:
    """Constant truth tests the change introduces on added lines of its Python files."""
    out: list[TruthyTest] = []
    for s, base_text, head_text, head in changed_python(changed, texts):
        before = _seen(python_tree(base_text), base_text)
        module = _module_bindings(head)
        for test, in_assert, fn, cls in _tests(head):
            for kind, e, operand, value, bound in _found(test, module, cls):
                if e.lineno not in s.added or (kind, ast.unparse(e)) in before:
                    continue
                text = ast.get_source_segment(head_text, e) or ast.unparse(e)
                out.append(TruthyTest(kind, s.path, e.lineno, text, operand, value, in_assert, fn, bound))
    # One per place: a nested `or` inside a reported `or` says the same thing.
    seen: set[tuple[str, int, TruthyKind]] = set()
    unique = []
    for t in sorted(out, key=lambda t: (t.path, t.line, t.kind.value, -len(t.text))):
        if (t.path, t.line, t.kind) not in seen:
            seen.add((t.path, t.line, t.kind))
            unique.append(t)
    return unique
