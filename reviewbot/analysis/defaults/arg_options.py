"""The default argparse gives each option of a parser, with where it is set (pure).

argparse's own rule, for `parser.add_argument(...)` / `group.add_argument(...)` calls:

- `default=` given: that value; a string default with `type=int` / `type=float` is converted by argparse
  (`parse_args` calls `type` on a string default), and so it is here;
- no `default=`: `action="store_true"` gives False, `action="store_false"` True, anything else
  (`store_const`, `append`, `count`, `BooleanOptionalAction`, a plain option, `nargs="*"`) None;
- `parser.set_defaults(x=...)` replaces the default of `x`.

Options generated from a config class's fields (`ArgumentGroupFactory(TransformerConfig)`,
`HfArgumentParser(ModelArguments)`) start from the fields' defaults: `class_defaults` reads them.

The destination is `dest=` when given, else the first long flag (`--max-len` -> `max_len`), else the
first flag. A default that is no literal (`default=os.cpu_count()`) is not known and not recorded.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviewbot.analysis.defaults.modules import imports_of, module_paths
from reviewbot.analysis.pyast import python_tree

__all__ = [
    "ArgDefault",
    "FieldOption",
    "argparse_defaults",
    "class_defaults",
    "option_dest",
    "parser_defaults",
]

Read = Callable[[str], str | None]  # a head path -> its text


@dataclass(frozen=True)
class ArgDefault:
    dest: str
    value: str  # Python source of the default argparse gives (`None`, `False`, `'none'`, `4`)
    how: str  # the source text that sets it, as written: `default=None`, `action="store_true"`
    line: int
    set_default: bool = False  # given by `set_defaults(...)`: replaces the option's own default


@dataclass(frozen=True)
class FieldOption:
    name: str
    value: str  # Python source
    how: str  # `TransformerConfig.cuda_graph_impl = "none"`
    path: str
    line: int


def option_dest(call: ast.Call) -> str | None:
    """The namespace attribute an `add_argument(...)` call sets (argparse's own rule)."""
    for k in call.keywords:
        if k.arg == "dest" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return k.value.value
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names:
        return None
    longs = [n for n in names if n.startswith("--")]
    return (longs[0][2:] if longs else names[0].lstrip("-")).replace("-", "_") or None


def _converted(value: object, kind: ast.expr | None) -> object:
    """argparse applies `type` to a string default: `type=int, default="8"` is 8."""
    if not isinstance(value, str) or not isinstance(kind, ast.Name) or kind.id not in ("int", "float"):
        return value
    try:
        return int(value) if kind.id == "int" else float(value)
    except ValueError:
        return value


Quote = Callable[[ast.AST], str]  # a node's source text as written ("" when it cannot be told)


def quoting(text: str | None) -> Quote:
    """The source text of a node of `text`, exactly as written (`default="none"`, not the `'none'` of
    `ast.unparse`): evidence quotes code, it does not re-print it. Without the text, nothing is quoted."""

    def quote(node: ast.AST) -> str:
        return (ast.get_source_segment(text, node) or "") if text else ""

    return quote


def _default(call: ast.Call, quote: Quote) -> tuple[str, str] | None:
    """(default as Python source, the text that sets it) of one `add_argument` call; None: no literal."""
    given = {k.arg: k.value for k in call.keywords if k.arg is not None}
    keyword = {k.arg: k for k in call.keywords if k.arg is not None}
    if "default" not in given:
        action = given.get("action")
        flag = action.value if isinstance(action, ast.Constant) else None
        value = {"store_true": "False", "store_false": "True"}.get(str(flag), "None")
        how = quote(keyword["action"]) if action is not None else ""
        return value, how
    how = quote(keyword["default"])
    try:
        literal = ast.literal_eval(given["default"])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return repr(_converted(literal, given.get("type"))), how


def _must_be_given(call: ast.Call) -> bool:
    """`required=True`, or a positional argument (no leading `-`) that is not optional (`nargs` other
    than `?` / `*`): every launch gives it, so its absence is no default."""
    given = {k.arg: k.value for k in call.keywords if k.arg is not None}
    required = given.get("required")
    if isinstance(required, ast.Constant) and required.value is True:
        return True
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    nargs = given.get("nargs")
    optional = isinstance(nargs, ast.Constant) and nargs.value in ("?", "*")
    return bool(names) and not names[0].startswith("-") and not optional


def _called(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def argparse_defaults(tree: ast.AST, text: str | None = None) -> Iterable[ArgDefault]:
    """Every option default the `add_argument` / `set_defaults` calls of `tree` give, in source order
    (a `set_defaults` after an option replaces it: a caller keeps the last one it sees per parser).
    `how` quotes `text`, the source of `tree`, as written. A required option or a positional argument
    has no default a launch can take (it must be given): it is not recorded, so a check on it is
    unknown rather than false."""
    quote = quoting(text)
    calls = sorted(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and _called(n) in ("add_argument", "set_defaults")
        ),
        key=lambda c: (c.lineno, c.col_offset),
    )
    for call in calls:
        if _called(call) == "set_defaults":
            for k in call.keywords:
                if k.arg is None:
                    continue
                try:
                    ast.literal_eval(k.value)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                yield ArgDefault(k.arg, ast.unparse(k.value), quote(k), call.lineno, set_default=True)
            continue
        if _must_be_given(call):
            continue
        dest, found = option_dest(call), _default(call, quote)
        if dest is not None and found is not None:
            yield ArgDefault(dest, found[0], found[1], call.lineno)


def parser_defaults(tree: ast.AST) -> dict[str, str]:
    """Dest -> the default argparse gives it (Python source), over every parser of `tree`: an option's
    first `add_argument` default, replaced by a `set_defaults` of it."""
    out: dict[str, str] = {}
    for d in argparse_defaults(tree):
        if d.set_default or d.dest not in out:
            out[d.dest] = d.value
    return out


def _field_default(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """`name: T = value` / `name = value` / `name: T = field(default=value)` of a class body."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        name, value = stmt.target.id, stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        name, value = stmt.targets[0].id, stmt.value
    else:
        return None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field":
        given = {k.arg: k.value for k in value.keywords if k.arg}
        if "default" not in given:
            return None
        value = given["default"]
    return name, value


def class_defaults(
    path: str, tree: ast.Module, names: set[str], read: Read | None, text: str | None = None
) -> Iterable[FieldOption]:
    """The literal field defaults of the classes `names` (defined in `tree`, whose source is `text`, or
    imported by it from a module of the repository): the options a parser generated from those classes
    starts from. `how` quotes the field's statement as written."""
    imports = imports_of(tree)
    for name in sorted(names):
        found = _class(tree, name, path, text)
        if found is None and name in imports and read is not None:
            dotted, level, original = imports[name]
            for where in module_paths(path, dotted, level):
                source = read(where)
                other = python_tree(source)
                found = _class(other, original, where, source) if other is not None else None
                if found is not None:
                    break
        if found is None:
            continue
        cls, where, source = found
        quote = quoting(source)
        for stmt in cls.body:
            got = _field_default(stmt)
            if got is None:
                continue
            try:
                ast.literal_eval(got[1])
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            value = ast.unparse(got[1])
            yield FieldOption(got[0], value, quote(stmt), where, stmt.lineno)


def _class(
    tree: ast.Module, name: str, path: str, source: str | None
) -> tuple[ast.ClassDef, str, str | None] | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node, path, source
    return None
