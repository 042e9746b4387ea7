"""A condition evaluated with every operand at its default (pure): what `validation` concludes from.

Operands are resolved by the caller (`self.x` to a field's default, `args.x` to an option's); the
evaluator knows literals (numbers, strings, `True` / `False` / `None`), tuples, lists and sets of them,
comparisons, `and` / `or` / `not`, arithmetic, and the builtins that only read their arguments
(`bool`, `any`, `all`, `len`, `int`, `float`, `str`, `min`, `max`, `abs`). Anything else (another call, a
subscript, an operand with no known default) is `Unknown`: nothing is concluded from it.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Operand", "Unknown", "Evaluator"]


@dataclass(frozen=True)
class Operand:
    text: str  # as written: `self.num_layers`, `args.tp_size`
    value: str  # the default, as Python source
    path: str
    line: int
    how: str = ""  # the source text that sets it, as written (`default=None`, `action='store_true'`)


class Unknown(Exception):
    """An operand or expression whose default value is not known: nothing is concluded."""


_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: lambda a, b: a is b if b is None or a is None else a == b,
    ast.IsNot: lambda a, b: a is not b if b is None or a is None else a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
}
# Builtins that read their arguments and nothing else (a shadowing def of the same name is not checked:
# validating code does not redefine `any`).
_CALLS: dict[str, Callable[..., Any]] = {
    "bool": bool,
    "any": any,
    "all": all,
    "len": len,
    "int": int,
    "float": float,
    "str": str,
    "min": min,
    "max": max,
    "abs": abs,
}


class Evaluator:
    """Evaluates one expression; `used` keeps the operands it read, in order."""

    def __init__(self, resolve: Callable[[str], Operand | None]) -> None:
        self.resolve = resolve
        self.used: dict[str, Operand] = {}

    def operand(self, node: ast.expr) -> Any:
        text = ast.unparse(node)
        found = self.resolve(text)
        if found is None:
            raise Unknown(text)
        try:
            value = ast.literal_eval(found.value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            raise Unknown(text) from exc
        self.used.setdefault(text, found)
        return value

    def _call(self, node: ast.Call) -> Any:
        fn = _CALLS.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if fn is None or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise Unknown(ast.unparse(node))
        return fn(*(self(a) for a in node.args))

    def _bool_op(self, node: ast.BoolOp) -> Any:
        """Python's `and` / `or`: the deciding operand itself (`args.workers or 4` is 4 when workers is
        None), not a bool. Every operand must still be known, so the conclusion never rests on an operand
        short-circuiting hid."""
        values = [self(v) for v in node.values]
        decide = (lambda v: not v) if isinstance(node.op, ast.And) else bool
        return next((v for v in values if decide(v)), values[-1])

    def _compare(self, node: ast.Compare) -> bool:
        left = self(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self(right_node)
            fn = _CMP.get(type(op))
            if fn is None or not fn(left, right):
                return False
            left = right
        return True

    def __call__(self, node: ast.expr) -> Any:  # noqa: C901 - one branch per expression kind
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return tuple(self(e) for e in node.elts)
        if isinstance(node, ast.Attribute | ast.Name):
            return self.operand(node)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node)
        if isinstance(node, ast.UnaryOp):
            v = self(node.operand)
            if isinstance(node.op, ast.Not):
                return not v
            if isinstance(node.op, ast.USub):
                return -v
            raise Unknown(ast.unparse(node))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](self(node.left), self(node.right))
        if isinstance(node, ast.Call):
            return self._call(node)
        raise Unknown(ast.unparse(node))
