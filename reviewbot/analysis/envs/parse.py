"""What an environment read's parsing does with the strings operators actually set (pure).

`EnvRead.parse` spells how the text becomes a value, `·` standing for the read: `bool(int(·))`,
`·=="1"`, `str_to_bool(·)`, `std.stoi(std.string(·))`. `evaluate(parse, value)` runs that shape on one
string with a small interpreter that knows only total, side-effect-free operations (conversions,
comparisons, `in`, `not`, `.lower()`/`.strip()`, the usual `str_to_bool` helpers); anything else is
`UNKNOWN`, and a rule then says nothing. Two parses are compared on `SAMPLES`, the spellings deployments
use for switches (`1`, `0`, `true`, `False`, `yes`, ``).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "Outcome",
    "Result",
    "evaluate",
    "SAMPLES",
    "UNKNOWN",
    "RAISES",
    "value_of_default",
    "same_literal",
]

SAMPLES: tuple[str, ...] = ("1", "0", "true", "false", "True", "False", "yes", "no", "2", "")


class Outcome(str, Enum):
    VALUE = "value"
    RAISES = "raises"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Result:
    outcome: Outcome
    value: object = None

    def shown(self) -> str:
        if self.outcome is Outcome.RAISES:
            return "raises"
        if self.outcome is Outcome.UNKNOWN:
            return "?"
        return repr(self.value)


UNKNOWN = Result(Outcome.UNKNOWN)
RAISES = Result(Outcome.RAISES)
_HOLE = "__env_value__"
_TRUE = frozenset({"1", "true", "yes", "y", "t", "on"})
_FALSE = frozenset({"0", "false", "no", "n", "f", "off"})
_CONSTANT_EXPR = re.compile(r"[\d\s+\-*/%()_.]+|(?:str|int)\([\d\s+\-*/%()_]+\)")
_STR_TO_BOOL = re.compile(
    r"(?i)_?(?:str_?to_?bool|strtobool|to_bool|parse_bool|as_bool|str2bool|env_to_bool)"
)


def _add(a: int, b: int) -> int:
    return a + b


def _sub(a: int, b: int) -> int:
    return a - b


def _mul(a: int, b: int) -> int:
    return a * b


def _floordiv(a: int, b: int) -> int:
    return a // b


def _mod(a: int, b: int) -> int:
    return a % b


_ARITH: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: _add,
    ast.Sub: _sub,
    ast.Mult: _mul,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
}


class _Unknown(Exception):
    pass


class _Raise(Exception):
    pass


def evaluate(parse: str, value: object) -> Result:
    """The value `parse` gives for the environment string `value` (or for a read's non-string default;
    None: unset without a default)."""
    shape = parse.strip() or "·"
    source = shape.replace("·", f" {_HOLE} ").strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return UNKNOWN
    try:
        return Result(Outcome.VALUE, _eval(tree.body, value))
    except _Raise:
        return RAISES
    except (_Unknown, RecursionError):
        return UNKNOWN


# Empty constructor calls spell a literal: `list()` is `[]`.
_EMPTY_CALLS = {"list()": [], "dict()": {}, "tuple()": (), "set()": set(), "str()": "", "int()": 0,
                "float()": 0.0, "bool()": False, "frozenset()": frozenset()}  # fmt: skip


def value_of_default(default: str | None) -> Result:
    """The literal a read falls back to when unset (`"0"`, `0`, `False`, `None`); UNKNOWN when computed."""
    if default is None:
        return Result(Outcome.VALUE, None)
    text = default.strip()
    if text in _EMPTY_CALLS:
        return Result(Outcome.VALUE, _EMPTY_CALLS[text])
    try:
        return Result(Outcome.VALUE, ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    # A constant expression: `256 * 1024 * 1024`, `str(394 * 1024 * 1024)`.
    if len(text) > 200 or not _CONSTANT_EXPR.fullmatch(text):
        return UNKNOWN
    found = evaluate(text, None)
    return found if found.outcome is Outcome.VALUE else UNKNOWN


def same_literal(a: str, b: str) -> bool:
    """Two canonical defaults that spell the same value (`1.0` and `1.`, `'x'` and `"x"`, `0x10` and `16`)."""
    if a == b:
        return True
    va, vb = value_of_default(a), value_of_default(b)
    if va.outcome is Outcome.VALUE and vb.outcome is Outcome.VALUE:
        return type(va.value) is type(vb.value) and va.value == vb.value
    return False


def _eval(node: ast.AST, value: object) -> object:  # noqa: C901 - one branch per node kind
    if isinstance(node, ast.Name):
        return _eval_name(node, value)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return tuple(_eval(e, value) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, value)
    if isinstance(node, ast.BoolOp):
        results = [_eval(v, value) for v in node.values]
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.BinOp) and isinstance(
        node.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv | ast.Mod
    ):
        return _arith(node, value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _negate(_eval(node.operand, value))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _compare(node.ops[0], _eval(node.left, value), _eval(node.comparators[0], value))
    if isinstance(node, ast.Call) and not node.keywords:
        return _call(node, value)
    raise _Unknown(type(node).__name__)


def _eval_name(node: ast.Name, value: object) -> object:
    """The hole is the value under test; `None`/`True`/`False` are themselves; other names are unknown."""
    if node.id == _HOLE:
        return value
    if node.id in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[node.id]
    raise _Unknown(node.id)


def _arith(node: ast.BinOp, value: object) -> object:
    """Integer `+ - * // %` (not on bools); division by zero raises as the program would."""
    left, right = _eval(node.left, value), _eval(node.right, value)
    if (
        not (isinstance(left, int) and isinstance(right, int))
        or isinstance(left, bool)
        or isinstance(right, bool)
    ):
        raise _Unknown("arithmetic on non-integers")
    if isinstance(node.op, ast.FloorDiv | ast.Mod) and right == 0:
        raise _Raise()
    return _ARITH[type(node.op)](left, right)


def _negate(operand: object) -> object:
    """`-x` of a number (not of a bool)."""
    if isinstance(operand, int | float) and not isinstance(operand, bool):
        return -operand
    raise _Unknown("negation")


def _compare(op: ast.cmpop, left: object, right: object) -> bool:
    if isinstance(op, ast.Eq):
        return left == right
    if isinstance(op, ast.NotEq):
        return left != right
    if isinstance(op, ast.Is):
        return left is right
    if isinstance(op, ast.IsNot):
        return left is not right
    if isinstance(op, ast.In | ast.NotIn):
        if not isinstance(right, tuple | str) or (isinstance(right, str) and not isinstance(left, str)):
            raise _Raise()
        found = left in right
        return found if isinstance(op, ast.In) else not found
    raise _Unknown(type(op).__name__)


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    raise _Unknown("callee")


def _call(node: ast.Call, value: object) -> object:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("lower", "upper", "strip") and not node.args:
        obj = _eval(func.value, value)
        if not isinstance(obj, str):
            raise _Raise()
        return getattr(obj, func.attr)()
    name = _name(func)
    args = [_eval(a, value) for a in node.args]
    short = name.rsplit(".", 1)[-1]
    if len(args) != 1:
        raise _Unknown(name)
    arg = args[0]
    if name in ("int", "std.stoi", "std.stol", "std.stoll", "stoi", "stol", "stoll"):
        return _int(arg, strict=True)
    if name in ("atoi", "std.atoi", "atol", "std.atol"):
        return _int(arg, strict=False)
    if name in ("float", "std.stof", "std.stod", "stof", "stod"):
        return _float(arg)
    if name in ("bool",):
        return bool(arg)
    if name in ("str", "std.string", "string"):
        if arg is None and name != "str":
            raise _Raise()  # std::string(nullptr)
        return str(arg) if name == "str" else arg
    if _STR_TO_BOOL.fullmatch(short):
        if isinstance(arg, bool):
            return arg
        text = str(arg).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise _Raise()
    raise _Unknown(name)


def _int(arg: object, strict: bool) -> int:
    if isinstance(arg, bool | int):
        return int(arg)
    if isinstance(arg, float):
        return int(arg)
    if not isinstance(arg, str):
        raise _Raise()
    text = arg.strip()
    m = re.fullmatch(r"[+-]?\d+", text) if strict else re.match(r"[+-]?\d+", text)
    if m is None:
        if strict:
            raise _Raise()
        return 0  # atoi("true") is 0
    return int(m.group(0))


def _float(arg: object) -> float:
    if isinstance(arg, bool | int | float):
        return float(arg)
    if not isinstance(arg, str):
        raise _Raise()
    try:
        out = float(arg.strip())
    except ValueError:
        raise _Raise() from None
    if math.isnan(out):
        raise _Unknown("nan")
    return out
