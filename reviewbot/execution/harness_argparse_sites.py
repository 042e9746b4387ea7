"""The options a repository's own code sets before it validates a parsed namespace.

Megatron's `validate_args` asserts what every launch passes (`assert args.micro_batch_size is not
None`): the parser's defaults alone are no configuration it accepts, so every row raises as the
defaults do and none runs. The repository's tests build the configuration they validate: `args =
parse_args()`, then `args.micro_batch_size = 1`, ..., then `validate_args(args)`. The first such site
(test files first, as execution/call_sites.py orders them) that sets attributes of the namespace it
validates to literals gives those values; the rows set their columns on top. Only literal values are
taken (an attribute set from a test's parameter is left at the parser's default).

The generated test runs in one process: a site that asks for more ranks than that (megatron's
`args.tensor_model_parallel_size = 2`, run by its tests under torchrun) is validated against a world of
one and raises before any derivation (`world size (1) is not divisible by ...`). So a site that sets
no parallel size or world size above 1 is taken before one that does; when every site does, the first.
Among those, a test file's site first (a tool's may take its configuration from a command line it
builds), then the site that sets the fewest attributes from something other than a literal (a test's
parameter: `args.micro_batch_size = micro_batch_size`), the earliest of equals: those attributes stay
at the parser's default, which the validation may reject (`assert args.micro_batch_size is not None`),
so the site the generated test reproduces most closely goes first.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from reviewbot.lang.index import is_test_path

__all__ = ["validated_setup"]

# Options that size the process group a configuration runs in (`tensor_model_parallel_size`, `tp_size`,
# `world_size`): above 1, more than the one process the generated test runs in.
_RANKS = re.compile(r"^(?:world_size|(?:tp|pp|dp|ep|cp|etp)_size|\w*parallel_size)$")
_MAX_SITES = 32  # sites looked at for one that fits one process


def _bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def _validates(stmt: ast.stmt, function: str) -> str | None:
    """The name of the namespace `stmt` passes to `function(...)` as its first argument, or None."""
    for n in ast.walk(stmt):
        if (
            isinstance(n, ast.Call)
            and (
                (isinstance(n.func, ast.Name) and n.func.id == function)
                or (isinstance(n.func, ast.Attribute) and n.func.attr == function)
            )
            and n.args
            and isinstance(n.args[0], ast.Name)
        ):
            return n.args[0].id
    return None


def _literal_set(stmt: ast.stmt) -> tuple[str, str, str] | None:
    """(namespace, attribute, value source) of `ns.attr = literal`, or None."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name):
        return None
    try:
        value = ast.literal_eval(stmt.value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return target.value.id, target.attr, repr(value)


def _sets_other(stmt: ast.stmt, name: str) -> bool:
    """`stmt` sets an attribute of the namespace `name` to something other than a literal
    (`name.attr = param`, or `setattr(name, ...)` in it, as a loop over a test's keyword arguments does)."""
    if (
        isinstance(stmt, ast.Assign)
        and _literal_set(stmt) is None
        and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name
            for t in stmt.targets
        )
    ):
        return True
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "setattr"
        and n.args
        and isinstance(n.args[0], ast.Name)
        and n.args[0].id == name
        for n in ast.walk(stmt)
    )


def _in_body(body: list[ast.stmt], function: str) -> tuple[tuple[tuple[str, str], ...], int, int] | None:
    """(the literal sets, the validation's line, how many sets before it are not literals)."""
    for i, stmt in enumerate(body):
        name = _validates(stmt, function)
        if name is None:
            continue
        found: dict[str, str] = {}
        others = 0
        for before in body[:i]:
            if isinstance(before, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in before.targets
            ):
                found, others = {}, 0  # the namespace is made anew: only what is set after counts
            got = _literal_set(before)
            if got is not None and got[0] == name:
                found[got[1]] = got[2]
            elif _sets_other(before, name):
                others += 1
        if found:
            return tuple(found.items()), stmt.lineno, others
    return None


def _one_process(given: tuple[tuple[str, str], ...]) -> bool:
    """No option of `given` asks for more than one rank (`tensor_model_parallel_size = 2`)."""
    for name, value in given:
        if _RANKS.match(name):
            try:
                ranks = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                continue
            if isinstance(ranks, int) and not isinstance(ranks, bool) and ranks > 1:
                return False
    return True


def _sites(
    function: str, texts: Iterable[tuple[str, str]]
) -> Iterator[tuple[tuple[tuple[str, str], ...], str, int]]:
    for path, text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for body in _bodies(tree):
            got = _in_body(body, function)
            if got is not None:
                yield got[0], f"{path}:{got[1]}", got[2]


def validated_setup(
    function: str, texts: Iterable[tuple[str, str]]
) -> tuple[tuple[tuple[str, str], ...], str] | None:
    """(attribute -> value source, `path:line`) of the site that sets literal attributes on a namespace
    and then calls `function(namespace)`: in one process first, then in a test file, then the fewest
    attributes set from anything but a literal, then the earliest; or None."""
    found = []
    for n, (given, where, others) in enumerate(_sites(function, texts)):
        test = is_test_path(where.rpartition(":")[0])
        found.append((not _one_process(given), not test, others, n, given, where))
        if n + 1 >= _MAX_SITES:
            break
    if not found:
        return None
    best = min(found, key=lambda site: site[:4])
    return best[4], best[5]
