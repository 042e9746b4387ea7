"""Functions tested for truth without being called, known by their calls elsewhere (pure, apart from
searching the head tree).

`if current_platform.is_cuda:` is always true: `is_cuda` is a method, and a bound method is a truthy
object (vLLM 371d04d39 added exactly that guard; 32ef4983c added the missing `()`). The spelling says
nothing of its own: `torch.backends.cudnn.enabled` is a bool attribute, `current_platform.is_cuda` a
method. What tells them apart is how the repository uses the same spelling: code that *calls*
`current_platform.is_cuda()` elsewhere (a bool would raise there) and never assigns it has a function
in hand. This is pylint's `using-constant-test` for a function, without type inference: the proof is
a call of the same dotted name in the head tree, quoted as evidence.

Judged, on the added lines of the changed Python files only, in a truth position (the test of an
`if`/`elif`/`while`/`assert`/conditional expression and the operands of `and`/`or`/`not` in one):
- a dotted name whose root the module imports at its top level and never rebinds
  (`current_platform.is_cuda`, `torch.cuda.is_available`), not `self`/`cls` (their methods are
  `truthy_tests`' own);
- a bare name the module imports with `from ... import name` and never rebinds (`if is_hip:`).

Not judged: a test whose guarded body calls the same name (`if hooks.on_start: hooks.on_start()`: the
attribute may be `None`, the test asks whether one is set); a spelling the repository assigns
(`x.cb = None`) or never calls; a test the base file already made.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from reviewbot.analysis.pyast import Texts, changed_python, python_tree
from reviewbot.analysis.sides import Side
from reviewbot.analysis.truthy_tests import truth_positions
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree, read_many

__all__ = ["UncalledTest", "uncalled_calls"]

_MAX_FILES = 200


@dataclass(frozen=True)
class UncalledTest:
    path: str
    line: int
    text: str  # the name as tested, as written (`current_platform.is_cuda`)
    function: str  # the enclosing function ("" at module level)
    in_assert: bool
    called: tuple[str, int, str]  # a call of the same name elsewhere: path, line, text (stripped)


def _imported(tree: ast.Module) -> set[str]:
    """Names the module binds exactly once, by an import at its top level."""
    counts: dict[str, int] = {}
    imported: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
            if node in tree.body:
                imported.update(names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names = [node.id]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    return {n for n in imported if counts.get(n) == 1}


def _root(e: ast.expr) -> str | None:
    """The root name of a dotted name (`a` of `a.b.c`); None for anything else (calls, subscripts)."""
    while isinstance(e, ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def _tests(tree: ast.Module) -> Iterator[tuple[ast.expr, list[ast.stmt], bool, str]]:
    """(test, the statements it guards, in an assert, enclosing function) of every truth test."""

    def walk(node: ast.AST, fn: str) -> Iterator[tuple[ast.expr, list[ast.stmt], bool, str]]:
        for child in ast.iter_child_nodes(node):
            name = fn
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
            elif isinstance(child, ast.If | ast.While):
                yield child.test, child.body, False, fn
            elif isinstance(child, ast.IfExp):
                yield child.test, [ast.Expr(child.body)], False, fn
            elif isinstance(child, ast.Assert):
                yield child.test, [], True, fn
            yield from walk(child, name)

    yield from walk(tree, "")


def _calls_in(body: list[ast.stmt], spelling: str) -> bool:
    return any(
        isinstance(n, ast.Call) and ast.unparse(n.func) == spelling for st in body for n in ast.walk(st)
    )


def _candidates(head: ast.Module, added: frozenset[int]) -> Iterator[tuple[ast.expr, bool, str]]:
    imported = _imported(head)
    for test, body, in_assert, fn in _tests(head):
        for e in truth_positions(test):
            if e.lineno not in added or not isinstance(e, ast.Attribute | ast.Name):
                continue
            root = _root(e)
            if root is None or root not in imported or root in ("self", "cls"):
                continue
            if isinstance(e, ast.Name) and not _from_imported(head, e.id):
                continue
            if _calls_in(body, ast.unparse(e)):
                continue  # `if x.hook: x.hook()`: whether one is set
            yield e, in_assert, fn


def _from_imported(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(n, ast.ImportFrom) and any((a.asname or a.name) == name for a in n.names)
        for n in tree.body
    )


def _tested_before(base_text: str | None) -> set[str]:
    base = python_tree(base_text)
    if base is None:
        return set()
    return {ast.unparse(e) for test, _, _, _ in _tests(base) for e in truth_positions(test)}


def _call_of(spelling: str, texts: dict[str, str]) -> tuple[str, int, str] | None:
    """A call of `spelling` in `texts` when none of them assigns it; None otherwise."""
    name = r"(?<![\w.])" + re.escape(spelling)
    # a call, not the definition (`def is_hip():` names it with a parenthesis too)
    call = re.compile(r"(?<!def )(?<!def  )" + name + r"\s*\(")
    assigned = re.compile(name + r"\s*(?::[^=\n]*)?=(?!=)")
    found: tuple[str, int, str] | None = None
    # evidence from the code itself before a test's mock or skip marker
    for path in sorted(texts, key=lambda p: (is_test_path(p), p)):
        text = texts[path]
        if assigned.search(text):
            return None
        m = call.search(text) if found is None else None
        if m is not None:
            line = text.count("\n", 0, m.start()) + 1
            found = (path, line, text.split("\n")[line - 1].strip())
    return found


def uncalled_calls(changed: Iterable[Side], texts: Texts, tree: RepoTree | None) -> list[UncalledTest]:
    """The function tests the change adds (see the module doc), each with a call that proves it."""
    found: list[tuple[Side, str, ast.expr, bool, str]] = []
    for s, base_text, head_text, head in changed_python(changed, texts):
        before = _tested_before(base_text)
        for e, in_assert, fn in _candidates(head, frozenset(s.added)):
            if ast.unparse(e) not in before:
                found.append((s, head_text, e, in_assert, fn))
    if not found:
        return []
    heads = {p: h for p, (_, h) in texts.items() if h and p.endswith(".py")}
    search = _searcher(tree, heads)
    out: list[UncalledTest] = []
    for s, head_text, e, in_assert, fn in found:
        spelling = ast.unparse(e)
        called = _call_of(spelling, search(spelling))
        if called is not None:
            text = ast.get_source_segment(head_text, e) or spelling
            out.append(UncalledTest(s.path, e.lineno, text, fn, in_assert, called))
    return out


def _searcher(tree: RepoTree | None, heads: dict[str, str]) -> Callable[[str], dict[str, str]]:
    """`spelling` -> the Python files of the head tree that name its last part (the changed files' heads
    first; at most 200 files read)."""
    grep: Callable[[list[str]], set[str] | None] | None = getattr(tree, "grep", None)

    def search(spelling: str) -> dict[str, str]:
        last = spelling.rsplit(".", 1)[-1]
        texts = {p: t for p, t in heads.items() if last in t}
        hits = grep([last]) if tree is not None and callable(grep) else None
        more = sorted(p for p in hits or () if p.endswith(".py") and p not in texts)
        if len(more) > _MAX_FILES:
            return {}  # too many files to read: an unread one may assign it, so nothing is proven
        if tree is not None and more:
            texts.update({p: t for p, t in read_many(tree, more).items() if t})
        return texts

    return search
