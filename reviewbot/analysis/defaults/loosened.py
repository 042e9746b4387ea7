"""A check the change only loosened (pure): it rejects no configuration its base version accepted.

An `assert` whose test gains an alternative (`assert a or b` -> `assert a or b or c`) accepts more than
before; a `raise` whose condition gains a conjunct (`if a: raise` -> `if a and b: raise`) fires in fewer
cases. Whatever such a check rejects with the defaults, its base version rejected too: the change did
not bring that rejection, it narrowed it. The base version is a check of the same kind in a function of
the same name whose terms are a proper subset of the head's.
"""

from __future__ import annotations

import ast

__all__ = ["loosened"]


def _terms(e: ast.expr, op: type[ast.boolop]) -> frozenset[str]:
    """The operands of a chain of `op` (`a or b or c` -> {a, b, c}), each as written."""
    if isinstance(e, ast.BoolOp) and isinstance(e.op, op):
        return frozenset(t for v in e.values for t in _terms(v, op))
    return frozenset({ast.unparse(e)})


def _checks(fn: ast.AST) -> list[frozenset[str]]:
    """Each assertion's alternatives, tagged `assert`, and each raise's innermost `if` conjuncts, tagged `raise`."""
    out: list[frozenset[str]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            out.append(_terms(node.test, ast.Or) | {"\0assert"})
        elif isinstance(node, ast.If) and any(isinstance(st, ast.Raise) for st in node.body):
            out.append(_terms(node.test, ast.And) | {"\0raise"})
    return out


def loosened(
    stmt: ast.Assert | ast.Raise, test: ast.expr | None, function: str, base: ast.Module | None
) -> bool:
    """`stmt` (with `test`: the assertion's test, or the raise's innermost `if` test) in `function` is a
    loosened version of a check of the base's function of the same name."""
    if base is None or test is None:
        return False
    head = (
        _terms(test, ast.Or) | {"\0assert"}
        if isinstance(stmt, ast.Assert)
        else _terms(test, ast.And) | {"\0raise"}
    )
    return any(
        old < head
        for fn in ast.walk(base)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name == function.rsplit(".", 1)[-1]
        for old in _checks(fn)
    )
