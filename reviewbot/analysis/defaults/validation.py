"""New or changed validations that reject the all-defaults configuration (pure).

For each `raise` / `assert` of a changed Python file that the change added, or whose condition it
added or changed, in a validating function (`__post_init__`, `__init__`, `model_post_init`, `validate*`,
`check*`, `verify*`, or a function that takes `args`), the condition it runs under is evaluated with every
operand at its default:

- `self.x` in a method of class `C`: the default of field `x` declared by `C` (a dataclass / pydantic /
  class-level default, a constant `__init__` assigns; `lang.facts` records them) or by a base class of
  `C` (the head index), when exactly one value is declared;
- `args.x`: the `add_argument("--x", default=...)` of the changed files (`lang.clauses` options);
- literals (numbers, strings, `True` / `False` / `None`), comparisons, `and` / `or` / `not`, `in` /
  `not in` a literal tuple or list, arithmetic.

A finding needs every operand's default known: a call, a local, a subscript or an unknown field stops
the evaluation, and so does a write of an operand, or a call that may write the object validated
(`self.derive()`, `finalize(args)`), above the check in the same function. A raise whose guards all hold, or an assertion whose test is false, rejects a plain
default launch.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import OptionKind
from reviewbot.lang.facts import FileFacts
from reviewbot.lang.index import RepoIndex

__all__ = ["RejectedDefault", "Operand", "rejected_defaults"]


@dataclass(frozen=True)
class Operand:
    text: str  # as written: `self.num_layers`, `args.tp_size`
    value: str  # the default as declared
    path: str
    line: int


@dataclass(frozen=True)
class RejectedDefault:
    path: str
    line: int  # the condition's line (the `if` of a raise, the `assert`)
    statement_line: int  # the raise / assert
    function: str
    condition: str  # as written: the conditions that must hold, joined with `and`
    operands: tuple[Operand, ...]
    owner: str  # the class validated, or `args`
    kind: str  # `raise` | `assert`


class _Unknown(Exception):
    """An operand whose default is not known: nothing is concluded."""


_VALIDATOR = ("__post_init__", "__init__", "model_post_init", "__attrs_post_init__")
_VALIDATOR_WORDS = ("valid", "check", "verify", "sanity")
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


class _Eval:
    def __init__(self, resolve: Callable[[str], Operand | None]) -> None:
        self.resolve = resolve
        self.used: dict[str, Operand] = {}

    def operand(self, node: ast.expr) -> Any:
        text = ast.unparse(node)
        found = self.resolve(text)
        if found is None:
            raise _Unknown(text)
        try:
            value = ast.literal_eval(found.value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            raise _Unknown(text) from exc
        self.used.setdefault(text, found)
        return value

    def __call__(self, node: ast.expr) -> Any:  # noqa: C901 - one branch per expression kind
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return tuple(self(e) for e in node.elts)
        if isinstance(node, ast.Attribute | ast.Name):
            return self.operand(node)
        if isinstance(node, ast.BoolOp):
            values = [self(v) for v in node.values]  # every operand must be known
            if isinstance(node.op, ast.And):
                return all(values)
            return any(values)
        if isinstance(node, ast.UnaryOp):
            v = self(node.operand)
            if isinstance(node.op, ast.Not):
                return not v
            if isinstance(node.op, ast.USub):
                return -v
            raise _Unknown(ast.unparse(node))
        if isinstance(node, ast.Compare):
            left = self(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self(right_node)
                fn = _CMP.get(type(op))
                if fn is None or not fn(left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](self(node.left), self(node.right))
        raise _Unknown(ast.unparse(node))


def _validating(fn: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> bool:
    name = fn.name.lower()
    if in_class and fn.name in _VALIDATOR:
        return True
    if any(w in name for w in _VALIDATOR_WORDS):
        return True
    return not in_class and any(a.arg == "args" for a in fn.args.args)


_Guard = tuple[ast.expr, bool]  # a condition and whether it must hold (False: the else side)


def _statements(
    body: list[ast.stmt], guards: tuple[_Guard, ...]
) -> Iterable[tuple[ast.Raise | ast.Assert, tuple[_Guard, ...]]]:
    for stmt in body:
        if isinstance(stmt, ast.Raise | ast.Assert):
            yield stmt, guards
        elif isinstance(stmt, ast.If):
            yield from _statements(stmt.body, (*guards, (stmt.test, True)))
            yield from _statements(stmt.orelse, (*guards, (stmt.test, False)))
        elif isinstance(stmt, ast.Return | ast.Continue | ast.Break):
            return  # what follows does not run on this path (a return inside an `if` is not followed)
        elif isinstance(stmt, ast.If | ast.For | ast.While | ast.With | ast.Try):
            continue  # loops, context managers and handlers: defaults do not decide them


def _functions(tree: ast.Module) -> Iterable[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, ""
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item, node.name


def _class_defaults(
    owner: str, facts: FileFacts | None, index: RepoIndex, path: str
) -> Callable[[str], Operand | None]:
    own: dict[str, Operand] = {}
    bases: tuple[str, ...] = ()
    if facts is not None:
        for d in facts.fields:
            if d.owner == owner and d.default is not None:
                own.setdefault(d.field, Operand("", d.default, d.path, d.line))
        for fd in sorted(facts.defaults, key=lambda fd: fd.line):
            if fd.owner == owner:
                own[fd.field] = Operand("", fd.value, fd.path, fd.line)
        bases = next((o.bases for o in facts.owners if o.name == owner), ())

    def resolve(text: str) -> Operand | None:
        if not text.startswith("self.") or text.count(".") != 1:
            return None
        name = text[5:]
        if name in own:
            o = own[name]
            return Operand(text, o.value, o.path, o.line)
        declared = {(d.value, d.path, d.line) for d in index.defaults(name) if d.owner in bases}
        if len({v for v, _, _ in declared}) == 1:
            value, where, line = sorted(declared)[0]
            return Operand(text, value, where, line)
        return None

    return resolve


def _arg_defaults(sides: list[Side]) -> Callable[[str], Operand | None]:
    options: dict[str, set[tuple[str, str, int]]] = {}
    for s in sides:
        if s.head is None:
            continue
        for o in s.head.options:
            if o.kind is OptionKind.ARGUMENT:
                options.setdefault(o.name, set()).add((o.default, s.path, o.line))

    def resolve(text: str) -> Operand | None:
        if not text.startswith("args.") or text.count(".") != 1:
            return None
        declared = options.get(text[5:], set())
        if len({v for v, _, _ in declared}) != 1:
            return None
        value, path, line = sorted(declared)[0]
        return Operand(text, value, path, line)

    return resolve


def _touched(stmt: ast.Raise | ast.Assert, guards: tuple[_Guard, ...], added: frozenset[int]) -> bool:
    if stmt.lineno in added:
        return True
    # the innermost condition added or changed (an older raise under a new `if`)
    return bool(guards) and any(
        n in added for n in range(guards[-1][0].lineno, (guards[-1][0].end_lineno or 0) + 1)
    )


def _condition(stmt: ast.Raise | ast.Assert, guards: tuple[_Guard, ...]) -> str:
    parts = [ast.unparse(t) if hold else f"not ({ast.unparse(t)})" for t, hold in guards]
    if isinstance(stmt, ast.Assert):
        parts.append(f"not ({ast.unparse(stmt.test)})")
    return " and ".join(parts)


def _written_before(fn: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> set[str]:
    """Targets the function writes above `line` (`self.x = ...`, `args.x += ...`): no longer defaults."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if getattr(node, "lineno", line) >= line:
            continue
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets for t in (t.elts if isinstance(t, ast.Tuple) else [t])]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("setattr", "object.__setattr__"):
            out.update(
                f"{ast.unparse(node.args[0])}.{a.value}"
                for a in node.args[1:2]
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
            continue
        elif isinstance(node, ast.Call) and _may_set(node):
            out.add(_ANY)
            continue
        else:
            continue
        out.update(ast.unparse(t) for t in targets)
    return out


_ANY = "*"  # a call above the check may have set any field: nothing is a default any more


def _may_set(call: ast.Call) -> bool:
    """`self.derive()`, `finalize(args)`, `update(self)`: a call that can write the object validated
    (`super().__post_init__()` validates the base class and is not counted)."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return True
    passed = [*call.args, *(k.value for k in call.keywords)]
    return any(isinstance(a, ast.Name) and a.id in ("self", "args") for a in passed)


def _rejects(
    stmt: ast.Raise | ast.Assert,
    guards: tuple[_Guard, ...],
    resolve: Callable[[str], Operand | None],
    written: set[str],
) -> dict[str, Operand] | None:
    if _ANY in written:
        return None
    ev = _Eval(lambda text: None if text in written else resolve(text))
    try:
        for test, hold in guards:
            if bool(ev(test)) is not hold:
                return None
        if isinstance(stmt, ast.Assert) and ev(stmt.test):
            return None
    except (_Unknown, TypeError, ZeroDivisionError, ValueError, OverflowError):
        return None
    return ev.used if ev.used else None


def rejected_defaults(
    changed: Iterable[Side], heads: dict[str, str | None], index: RepoIndex
) -> list[RejectedDefault]:
    """Validations the change adds or changes that reject the all-defaults configuration."""
    sides = [s for s in changed if s.path.endswith(".py") and s.head is not None]
    args = _arg_defaults(sides)
    out: list[RejectedDefault] = []
    for s in sides:
        tree = python_tree(heads.get(s.path))
        if tree is None or not s.added:
            continue
        for fn, owner in _functions(tree):
            if not _validating(fn, bool(owner)):
                continue
            resolve = _class_defaults(owner, s.head_facts, index, s.path) if owner else args
            qual = f"{owner}.{fn.name}" if owner else fn.name
            for stmt, guards in _statements(fn.body, ()):
                if isinstance(stmt, ast.Raise) and not guards:
                    continue  # an unconditional raise is not a validation of the configuration
                if not _touched(stmt, guards, s.added):
                    continue
                used = _rejects(stmt, guards, resolve, _written_before(fn, stmt.lineno))
                if used is None:
                    continue
                line = stmt.lineno if isinstance(stmt, ast.Assert) else guards[-1][0].lineno
                out.append(
                    RejectedDefault(
                        s.path,
                        line,
                        stmt.lineno,
                        qual,
                        _condition(stmt, guards),
                        tuple(used.values()),
                        owner or "args",
                        "assert" if isinstance(stmt, ast.Assert) else "raise",
                    )
                )
    return out
