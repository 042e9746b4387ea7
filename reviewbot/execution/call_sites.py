"""The values a repository itself gives a config's required arguments: a call `Owner(kw=literal, ...)`.

A config whose constructor requires arguments (`ServerArgs(model_path)`, `DeepSpeedConfig(config)`)
has no all-defaults build. The project's own code and tests show how it is built: the first call of
`Owner(...)` (test files first) that passes every required argument as a Python literal gives those
values; the table's rows then set their columns on top, and the "all-defaults" build is that call with
nothing else set. No such call: no harness (the reason says so).

An argument counts as a literal when it is one (`tool_call_parser="llama3"`), or a name the same file
binds once, at its top level, to one (`sequence_length=_SEQUENCE_LENGTH` with `_SEQUENCE_LENGTH = 10`);
a positional argument counts for the parameter at its place when the caller gives the constructor's
positional parameters (`FunctionCallParser(self.tools, "llama3")`). `call_values` yields what each call
gives, literal or not, so a harness can fill the rest with placeholders the code it runs never reads
(execution/harness_placeholder.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Sequence

from reviewbot.lang.index import is_test_path
from reviewbot.model.change import ChangeSet

__all__ = ["MAX_FILES", "Sites", "call_values", "literal_call", "sites_of"]

MAX_FILES = 40  # files read per owner (those that mention `Owner(`, tests first)

Sites = Callable[[str], Iterable[tuple[str, str]]]  # owner -> (path, text) of files that may call it


def _name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _constants(tree: ast.Module) -> dict[str, str]:
    """Names the module binds once, at its top level, to a literal -> that literal (Python source)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.setdefault(node.id, []).append(node)
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name) or len(bound[targets[0].id]) != 1:
                continue
            try:
                out[targets[0].id] = repr(ast.literal_eval(stmt.value))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return out


def _value(node: ast.expr, constants: dict[str, str]) -> str | None:
    """`node` as a literal's source: a literal, or a module constant bound to one; None otherwise."""
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    try:
        return repr(ast.literal_eval(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _given(
    call: ast.Call, required: Sequence[str], positional: Sequence[str], constants: dict[str, str]
) -> dict[str, str] | None:
    """Required argument -> literal source, for those `call` gives as literals (None: the call's
    arguments cannot be told apart: `*args`, `**kwargs`, more positional arguments than known)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if len(call.args) > len(positional):
        return None
    nodes = dict(zip(positional, call.args, strict=False))
    nodes.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    out = {}
    for name in required:
        node = nodes.get(name)
        value = _value(node, constants) if node is not None else None
        if value is not None:
            out[name] = value
    return out


def call_values(
    owner: str, required: Sequence[str], texts: Iterable[tuple[str, str]], positional: Sequence[str] = ()
) -> Iterator[tuple[tuple[tuple[str, str], ...], str]]:
    """For each call of `owner` (files in the order given, calls in line order): the required arguments
    it gives as literals (keyword -> value source, in `required`'s order) and its `path:line`
    (`positional`: the constructor's positional parameters, in order)."""
    for path, text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        calls = sorted(
            (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n) == owner),
            key=lambda n: n.lineno,
        )
        constants = _constants(tree) if calls else {}
        for call in calls:
            given = _given(call, required, positional, constants)
            if given is not None:
                yield tuple((r, given[r]) for r in required if r in given), f"{path}:{call.lineno}"


def literal_call(
    owner: str, required: Sequence[str], texts: Iterable[tuple[str, str]], positional: Sequence[str] = ()
) -> tuple[tuple[tuple[str, str], ...], str] | None:
    """(keyword -> value source, `path:line`) of the first call of `owner` giving every required
    argument as a literal, or None."""
    return next(
        (c for c in call_values(owner, required, texts, positional) if len(c[0]) == len(required)), None
    )


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
