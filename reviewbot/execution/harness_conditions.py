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


# `isinstance(x, T)` of a builtin type: the value that makes it true
_INSTANCES = {
    "dict": "{}",
    "list": "[]",
    "tuple": "()",
    "str": "''",
    "int": "0",
    "float": "0.0",
    "bool": "False",
    "set": "set()",
}


class Comparison:
    """One comparison column: the operand compared, the values it names (Python source), and the column
    respelled over another operand."""

    def __init__(self, column: str, where: str, operand: ast.expr, values: tuple[str, ...]) -> None:
        self._column = column
        self._where = where  # "left" (`x == 1`), "right" (`1 == x`) or "arg" (`isinstance(x, T)`)
        self.operand = ast.unparse(operand)
        self.values = values

    def over(self, key: str) -> str:
        """The comparison with `key` in place of the operand (`None != key`)."""
        node = ast.parse(self._column, mode="eval").body
        name = ast.Name(id=key, ctx=ast.Load())
        if isinstance(node, ast.Call):
            node.args[0] = name
        elif isinstance(node, ast.Compare) and self._where == "left":
            node.left = name
        elif isinstance(node, ast.Compare):
            node.comparators[0] = name
        return ast.unparse(node)


def _values(node: ast.expr, membership: bool) -> tuple[str, ...]:
    """The values a literal side names, as Python source (`in (1, 2)`: 1 and 2)."""
    if membership and isinstance(node, ast.Tuple | ast.List | ast.Set):
        return tuple(ast.unparse(e) for e in node.elts)
    return (ast.unparse(node),)


def comparison(column: str) -> Comparison | None:
    """The comparison a column spells, or None: one operator with a literal on one side and a name or
    attribute chain on the other (`in` and `not in` take the literal on the right), or
    `isinstance(x, T)` of a builtin type `T`."""
    try:
        node = ast.parse(column, mode="eval").body
    except SyntaxError:
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and not node.keywords
        and _path(node.args[0])
        and isinstance(node.args[1], ast.Name)
        and node.args[1].id in _INSTANCES
    ):
        return Comparison(column, "arg", node.args[0], (_INSTANCES[node.args[1].id],))
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
        return None
    left, right = node.left, node.comparators[0]
    membership = isinstance(node.ops[0], ast.In | ast.NotIn)
    if _path(left) and _literal(right):
        return Comparison(column, "left", left, _values(right, membership))
    if not membership and _path(right) and _literal(left):
        return Comparison(column, "right", right, _values(left, False))
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
    "class": """    import dataclasses
    import inspect

    if dataclasses.is_dataclass({callee}):  # a default_factory's value is the default too
        out = {{}}
        for f in dataclasses.fields({callee}):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out
    return {{
        name: p.default
        for name, p in inspect.signature({callee}).parameters.items()
        if p.default is not inspect.Parameter.empty
    }}""",
}


def _conditions_source(h: Harness, keyed: Callable[[str], str]) -> str:
    entries = []
    for _, key in h.keywords:
        found = comparison(key)
        if found is None:
            continue
        keyword = keyed(found.operand)
        test = found.over("v")
        values = "".join(f"{v}, " for v in found.values)
        entries.append(f"    {key!r}: ({keyword!r}, lambda v: {test}, ({values})),")
    return "{\n" + "\n".join(entries) + "\n}"


_NESTED = """

# The target is an attribute of an object the built one holds (`self.{path}.{target}`).
READ_FROM = {parts!r}


def _build(record_property, **kwargs):
    built = _build_object(record_property, **kwargs)
    for name in READ_FROM:
        built = getattr(built, name)
    return built
"""


_GIVEN_OPTIONS = """

# The options the repository sets before it validates: {given_from}
GIVEN = {given}


def _build(record_property, **options):
    return _build_options(record_property, **{{**GIVEN, **options}})
"""


def conditioned(h: Harness, code: str) -> str:
    """The generated `_build` code of `h` wrapped to read a nested target (a built object's
    `read_from`), to set the options the repository sets before it validates (argparse's `given`), and
    to turn comparison keys into values (unchanged when it needs none of these)."""
    if h.kind != "function" and h.read_from:
        code = code.replace("def _build(", "def _build_object(", 1) + _NESTED.format(
            path=h.read_from, target=h.target, parts=tuple(h.read_from.split("."))
        )
    if h.kind == "argparse" and h.given:
        code = code.replace("def _build(", "def _build_options(", 1) + _GIVEN_OPTIONS.format(
            given_from=h.given_from, given="{" + ", ".join(f"{k!r}: {v}" for k, v in h.given) + "}"
        )
    if not any(comparison(key) is not None for _, key in h.keywords):
        return code
    kind = h.kind if h.kind in ("argparse", "function") else "class"
    callee = h.callable if h.kind == "function" else h.owner
    return code.replace("def _build(", "def _build_row(", 1) + _SOLVE.format(
        conditions=_conditions_source(h, lambda operand: operand),
        defaults=_DEFAULTS[kind].format(callee=callee),
    )
