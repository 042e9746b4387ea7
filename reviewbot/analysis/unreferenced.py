"""Code nothing runs: a method of a class that nothing in the repository names, or a private method
nothing calls.

A `NameError` only happens when its line runs. A method of a class that no file of the repository
names (not instantiated, subclassed, imported, registered by a string or listed in `__all__`) is never
run by the project, so a name missing there is a lint-level note, not a crash. Blind judges of an
undefined-name scan (bench/devscan/undefscan1.yaml) called all such findings wrong: a `_init_weights`
of a pre-trained-model base class no model inherits, a `__init__` of a text tower a vision-only model
never builds (the only class naming it was itself named nowhere).

The test is textual and errs towards "referenced": any whole-word occurrence of the class name in
another file of the head tree (code, configs, docs, scripts alike) counts, and so does one in the same
file outside the class, unless it lies in another top-level class, or private function, that is itself
named nowhere (decided to a fixed point within the file). A decorated class may be registered by its
decorator and counts as referenced; a public module-level function counts as running (an entry point,
the module's API, or a config registry's entry looked up by the name a command line passes).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from reviewbot.model.change import RepoTree

__all__ = ["unreferenced_class"]  # the class, or the private method, nothing names


_Def = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _top_level(tree: ast.Module) -> dict[str, _Def]:
    return {
        n.name: n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _owner_at(defs: dict[str, _Def], line: int) -> str | None:
    """The top-level class or function whose lines hold `line` (its decorators included)."""
    for name, node in defs.items():
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if first <= line <= (node.end_lineno or node.lineno):
            return name
    return None


def _named_elsewhere(name: str, path: str, tree: RepoTree | None) -> bool | None:
    """Another file of the head tree names `name` (a whole word); None when the tree cannot say."""
    grep: Callable[[list[str]], set[str] | None] | None = getattr(tree, "grep", None)
    if tree is None or not callable(grep):
        return None
    hits = grep([name])
    if hits is None:
        return None
    return any(p != path for p in hits)


def unreferenced_class(function: str, path: str, head_text: str, tree: RepoTree | None) -> str | None:
    """The class of method `function` (`Class.method`, top level of the module at `path`) when nothing
    in the repository names it, or `function` itself when it is a private method nothing names; else
    None (also when the tree cannot be searched)."""
    if "." not in function:
        return None
    cls = function.split(".", 1)[0]
    try:
        module = ast.parse(head_text)
    except (SyntaxError, ValueError):
        return None
    defs = _top_level(module)
    cls_node = defs.get(cls)
    if not isinstance(cls_node, ast.ClassDef):
        return None
    lines = head_text.split("\n")
    dead: dict[str, bool] = {}

    def unnamed(name: str, seen: frozenset[str]) -> bool:
        if name in dead:
            return dead[name]
        node = defs[name]
        if node.decorator_list:
            return False  # a decorator may register it
        if not isinstance(node, ast.ClassDef) and not name.startswith("_"):
            return False  # a public function: an entry point or the module's API, called from outside
        elsewhere = _named_elsewhere(name, path, tree)
        if elsewhere is None or elsewhere:
            dead[name] = False
            return False
        word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
        start, end = node.lineno, node.end_lineno or node.lineno
        for n, text in enumerate(lines, start=1):
            if start <= n <= end or not word.search(text):
                continue
            owner = _owner_at(defs, n)
            if owner in seen:
                continue  # a cycle of classes naming each other, none named from outside it
            if owner is None or not unnamed(owner, seen | {name}):
                dead[name] = False
                return False  # named at module level, or by code that runs
        dead[name] = True
        return True

    if unnamed(cls, frozenset({cls})):
        return cls
    return _unnamed_private_method(function, path, cls_node, lines, tree)


def _unnamed_private_method(
    function: str, path: str, cls: ast.ClassDef, lines: list[str], tree: RepoTree | None
) -> str | None:
    """`Class._helper` when nothing names `_helper` but its own `def`: a private method is called by the
    project itself (a framework hook has a public or dunder name), so one named nowhere never runs
    (`AttentionMaskConverter._ignore_causal_mask_sdpa`, copied in with the class and never called)."""
    name = function.split(".")[1] if function.count(".") == 1 else ""
    if not name.startswith("_") or name.startswith("__"):
        return None
    node = next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name),
        None,
    )
    if node is None or node.decorator_list:
        return None
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    if any(word.search(text) for n, text in enumerate(lines, start=1) if n != node.lineno):
        return None
    return function if _named_elsewhere(name, path, tree) is False else None
