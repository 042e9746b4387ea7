"""The values a repository itself gives a config's required arguments: a call `Owner(kw=literal, ...)`.

A config whose constructor requires arguments (`ServerArgs(model_path)`, `DeepSpeedConfig(config)`)
has no all-defaults build. The project's own code and tests show how it is built: the first call of
`Owner(...)` (test files first) that passes every required argument by keyword as a Python literal
gives those values; the table's rows then set their columns on top, and the "all-defaults" build is
that call with nothing else set. No such call: no harness (the reason says so).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence

from reviewbot.lang.index import is_test_path
from reviewbot.model.change import ChangeSet

__all__ = ["MAX_FILES", "Sites", "literal_call", "sites_of"]

MAX_FILES = 40  # files read per owner (those that mention `Owner(`, tests first)

Sites = Callable[[str], Iterable[tuple[str, str]]]  # owner -> (path, text) of files that may call it


def _name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _literals(call: ast.Call, required: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
    """The required keywords of `call` as Python source, when each is a literal."""
    if call.args or any(k.arg is None for k in call.keywords):
        return None  # positional or **kwargs: which value is which is not plain
    given = {k.arg: k.value for k in call.keywords if k.arg is not None}
    out = []
    for name in required:
        node = given.get(name)
        if node is None:
            return None
        try:
            out.append((name, repr(ast.literal_eval(node))))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return tuple(out)


def literal_call(
    owner: str, required: Sequence[str], texts: Iterable[tuple[str, str]]
) -> tuple[tuple[tuple[str, str], ...], str] | None:
    """(keyword -> value source, `path:line`) of the first call of `owner` giving every required
    argument as a literal, or None."""
    for path, text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        calls = sorted(
            (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n) == owner),
            key=lambda n: n.lineno,
        )
        for call in calls:
            given = _literals(call, required)
            if given is not None:
                return given, f"{path}:{call.lineno}"
    return None


def sites_of(change: ChangeSet) -> Sites | None:
    """Files of the head that mention `Owner(` (test files first), or None without the head's tree."""
    tree = change.head_tree
    grep = getattr(tree, "grep", None)
    if tree is None or grep is None:
        return None

    def sites(owner: str) -> Iterable[tuple[str, str]]:
        found = grep([f"{owner}("], ["*.py"], substrings=True)
        if not found:
            return
        for path in sorted(found, key=lambda p: (not is_test_path(p), p))[:MAX_FILES]:
            text = tree.read(path)
            if text is not None:
                yield path, text

    return sites
