"""Comparison columns: a column that compares something the harness can set with literals.

`None != blend_per_split`, `1 == args.tensor_model_parallel_size`, `"auto" == load_format`,
`args.optimizer in ('sgd', 'adam')`: the table's column is the comparison's truth, not a value the
build can pass. The harness sets the compared operand instead (a constructor keyword, a parameter, an
attribute of a namespace, an option), and each row is given a value of it that makes every comparison
of that row come out as the row says: the operand's own default when it does, else one of the literals
the table compares it to. A row that no such value gives (`None != x` true when the table names no
other value of `x`) is skipped: it is not built and never counted, agreed or wrong.

A comparison column is carried in `Harness.keywords` as the comparison spelled over the keyword it sets
(`None != blend_per_split` -> `None != blend_per_split`, `1 == args.tp` -> `1 == tp` for an option); the
generated test turns such keys into the operand's value before the build (`conditioned`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from reviewbot.model.executed import Harness

__all__ = ["Comparison", "comparison", "conditioned"]

_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _path(node: ast.expr) -> bool:
    """`x`, `self.x`, `args.x`: a name or a chain of attributes on a name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class Comparison:
    """One comparison column: the operand compared, and the column respelled over another operand."""

    def __init__(self, tree: ast.Compare, left: bool) -> None:
        self._tree = tree
        self._left = left  # the operand is the left side (`x == 1`), else the right (`1 == x`)
        operand = tree.left if left else tree.comparators[0]
        self.operand = ast.unparse(operand)

    def over(self, key: str) -> str:
        """The comparison with `key` in place of the operand (`None != key`)."""
        literal = ast.unparse(self._tree.comparators[0] if self._left else self._tree.left)
        op = _OPS[type(self._tree.ops[0])]
        return f"{key} {op} {literal}" if self._left else f"{literal} {op} {key}"


def comparison(column: str) -> Comparison | None:
    """The comparison a column spells (one operator, a literal on one side, a name or attribute chain on
    the other; `in` and `not in` take the literal on the right), or None."""
    try:
        node = ast.parse(column, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
        return None
    left, right = node.left, node.comparators[0]
    membership = isinstance(node.ops[0], ast.In | ast.NotIn)
    if _path(left) and _literal(right):
        return Comparison(node, left=True)
    if not membership and _path(right) and _literal(left):
        return Comparison(node, left=False)
    return None


_SOLVE = '''

# Comparison columns: key -> (the keyword the build sets, the comparison as a function of its value,
# the literals the comparison names)
CONDITIONS = {conditions}


def _defaults_of():
{defaults}


def _solved(row):
    """The row with each comparison column replaced by a value of the keyword it compares: the
    keyword's default when that gives the row, else a literal the table compares it to. A row no such
    value gives is not built (skipped: never counted)."""
    out = {{k: v for k, v in row.items() if k not in CONDITIONS}}
    wanted = {{}}
    for key, value in row.items():
        if key in CONDITIONS:
            wanted.setdefault(CONDITIONS[key][0], []).append((CONDITIONS[key][1], value))
    defaults = _defaults_of() if wanted else {{}}
    for keyword, checks in wanted.items():
        if keyword in out:
            candidates = [out[keyword]]
        else:
            candidates = [defaults[keyword]] if keyword in defaults else []
            candidates += [v for key, _ in row.items() if key in CONDITIONS and CONDITIONS[key][0] == keyword
                           for v in CONDITIONS[key][2]]
        chosen = [c for c in candidates if all(bool(check(c)) == value for check, value in checks)]
        if not chosen:
            pytest.skip(f"no value of `{{keyword}}` the table names gives this row")
        out[keyword] = chosen[0]
    return out


def _build(record_property, **row):
    return _build_row(record_property, **_solved(row))
'''

# How the generated test knows each keyword's default, per harness kind (indented function bodies).
_DEFAULTS: dict[str, str] = {
    "argparse": "    return vars(_defaults())",
    "function": """    defaults = {{
        name: p.default
        for name, p in inspect.signature({callee}).parameters.items()
        if p.default is not inspect.Parameter.empty
    }}
    for param, attrs in NAMESPACES.items():
        defaults.update((f"{{param}}.{{a}}", v) for a, v in attrs.items())
    return defaults""",
    "class": """    import inspect

    return {{
        name: p.default
        for name, p in inspect.signature({callee}).parameters.items()
        if p.default is not inspect.Parameter.empty and repr(p.default) != "<factory>"
    }}""",
}


def _literals(column: str) -> tuple[object, ...]:
    """The values a comparison names (`x in (1, 2)`: 1 and 2)."""
    node = ast.parse(column, mode="eval").body
    assert isinstance(node, ast.Compare)
    side = node.comparators[0] if _path(node.left) else node.left
    value = ast.literal_eval(side)
    if isinstance(node.ops[0], ast.In | ast.NotIn) and isinstance(value, tuple | list | set | frozenset):
        return tuple(value)
    return (value,)


def _conditions_source(h: Harness, keyed: Callable[[str], str]) -> str:
    entries = []
    for _, key in h.keywords:
        found = comparison(key)
        if found is None:
            continue
        keyword = keyed(found.operand)
        test = found.over("v")
        entries.append(f"    {key!r}: ({keyword!r}, lambda v: {test}, {_literals(key)!r}),")
    return "{\n" + "\n".join(entries) + "\n}"


def conditioned(h: Harness, code: str) -> str:
    """The generated `_build` code of `h` wrapped to turn comparison keys into values (unchanged when
    the harness has no comparison column)."""
    if not any(comparison(key) is not None for _, key in h.keywords):
        return code
    kind = h.kind if h.kind in ("argparse", "function") else "class"
    callee = h.callable if h.kind == "function" else h.owner
    return code.replace("def _build(", "def _build_row(", 1) + _SOLVE.format(
        conditions=_conditions_source(h, lambda operand: operand),
        defaults=_DEFAULTS[kind].format(callee=callee),
    )
