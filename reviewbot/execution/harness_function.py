"""The function harness: a derivation in a module-level function, a staticmethod or a classmethod, run by
calling that function with the row's values.

`validate(args)`, `Model._create_config(config)`, `derive(cache=False)`: nothing has to be built first;
the function is called. Each column reaches the call the way the function reads it: a parameter of the
function (passed as a keyword), or an attribute of a parameter (`args.x`, `config.x`: that parameter is
passed as a `types.SimpleNamespace` holding the row's attributes and every other attribute the function
reads before writing it, each at the default the module declares: an option of its argument parser, or a
field of the class the parameter is annotated with; an attribute without one found means no namespace
can be built, and the reason says which). A column that is an attribute of an object the function
builds itself (`config = Config()`) is not set: only the rows at its known default run. Every other
parameter keeps its default; a required one no column gives means there is no call to make.

The target is read, in this order: the return value when every `return` returns the target; the object
every `return` returns, when the target is written on it (or is a keyword of its constructor:
`Config.x` of `return Config(x=...)`); the namespace passed, when the target is
written on a parameter; else the function's own local as the function returns. A derivation's target is
often a local that feeds the return (`config.x` of a `config` returned inside a tuple, turned into a
dict, or handed to a constructor): the generated test reads it off the function's frame at its `return`
event through `sys.setprofile` (call and return events only, no line tracing, for that one code object),
which leaves the function's behaviour as it is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reviewbot.execution.harness_argparse import option_defaults
from reviewbot.execution.harness_conditions import comparison
from reviewbot.execution.harness_function_read import nested_keywords
from reviewbot.execution.harness_placeholder import PLACEHOLDERS, function_placeholders
from reviewbot.model.executed import Harness, ReadFrom
from reviewbot.model.truthtable import TruthTable, Variable

__all__ = ["function_harness", "static_kind"]

_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_STATIC = ("staticmethod", "classmethod")
_Def = ast.FunctionDef | ast.AsyncFunctionDef
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _decorators(fn: _Def) -> set[str]:
    return {
        ast.unparse(d.func if isinstance(d, ast.Call) else d).rsplit(".", 1)[-1] for d in fn.decorator_list
    }


def static_kind(cls: ast.ClassDef, method: str) -> str:
    """`staticmethod` or `classmethod` when `cls.method` is declared so, else an empty string."""
    fn = next((n for n in cls.body if isinstance(n, _Def) and n.name == method), None)
    if fn is None:
        return ""
    return next((d for d in _STATIC if d in _decorators(fn)), "")


def _own(fn: _Def) -> Iterator[ast.AST]:
    """The nodes of `fn`'s body, not those of functions, lambdas or classes nested in it."""
    todo: list[ast.AST] = list(reversed(fn.body))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _NESTED):
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


@dataclass(frozen=True)
class _Param:
    name: str
    default: bool  # it has a default
    positional_only: bool
    annotation: ast.expr | None


def _params(fn: _Def, skip: int) -> list[_Param]:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    first_default = len(positional) - len(a.defaults)
    out = [
        _Param(p.arg, i >= first_default, i < len(a.posonlyargs), p.annotation)
        for i, p in enumerate(positional)
    ][skip:]
    out += [
        _Param(k.arg, d is not None, False, k.annotation)
        for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
    ]
    return out


def _stored_names(fn: _Def) -> set[str]:
    """Names the function binds itself (assignments, loops, `with ... as`, walrus)."""
    return {n.id for n in _own(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _ends_in_return(fn: _Def) -> bool:
    return bool(fn.body) and isinstance(fn.body[-1], ast.Return | ast.Raise)


def _constructs(value: ast.expr | None, owner: str) -> bool:
    """`value` is a call of `owner(...)` (or `module.owner(...)`)."""
    return isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] == owner


def _how_read(
    fn: _Def, parts: list[str], params: dict[str, _Param], namespaces: set[str]
) -> tuple[ReadFrom, tuple[str, ...]]:
    """Where the target is read after the call ("" when it cannot be), and the keywords that lead to it
    in the object returned (a construction nested in the one returned)."""
    returns = [n.value for n in _own(fn) if isinstance(n, ast.Return)]
    every = bool(returns) and all(r is not None for r in returns) and _ends_in_return(fn)
    spelled = {ast.unparse(r) for r in returns if r is not None}
    if every and spelled == {".".join(parts)}:
        return "return", ()
    if every and len(parts) > 1 and spelled == {parts[0]}:
        return "returned", ()
    if every and len(parts) == 2 and all(_constructs(r, parts[0]) for r in returns):
        return (
            "returned",
            (),
        )  # `Config.x` of `return Config(x=...)`: the keyword, read off the object returned
    nested = nested_keywords(returns, parts) if every and len(parts) > 1 else None
    if nested:
        return (
            "returned",
            nested,
        )  # `Optimizer.Config.lr` of `return Trainer(optimizer=Optimizer.Config(lr=...))`
    if len(parts) > 1 and parts[0] in namespaces:
        return "param", ()
    if parts[0] in params or parts[0] in _stored_names(fn):
        return "local", ()
    return "", ()


def _default_source(v: Variable) -> str | None:
    """The table's default of a column as Python source (None: no plain value)."""
    if isinstance(v.default, bool):
        return repr(v.default)
    if v.default is None or v.enum is None or not _IDENT.match(v.default):
        return None
    return f"{v.enum}.{v.default}"


def _trusted(v: Variable) -> bool:
    """A column's default the analysis read off the code (`path:line`), not one it assumed."""
    return v.default is not None and bool(re.search(r":\d+$", v.default_from))


def _reads_before_writes(fn: _Def, param: str) -> list[str]:
    """Attributes of `param` the function reads before (in source order) it writes them."""
    first: dict[str, bool] = {}  # attribute -> its first use is a read
    augmented = {id(n.target) for n in _own(fn) if isinstance(n, ast.AugAssign)}
    uses: list[tuple[int, int, str, bool]] = []
    for n in _own(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == param:
            read = not isinstance(n.ctx, ast.Store) or id(n) in augmented
            uses.append((n.lineno, n.col_offset, n.attr, read))
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == "getattr"
            and len(n.args) == 2
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == param
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
        ):
            uses.append((n.lineno, n.col_offset, n.args[1].value, True))
    for _, _, attr, read in sorted(uses):
        first.setdefault(attr, read)
    return [a for a, read in first.items() if read]


def _class_defaults(tree: ast.Module, annotation: ast.expr | None) -> dict[str, str]:
    """Field -> literal default (Python source) of the module's class a parameter is annotated with."""
    name = ast.unparse(annotation).strip("'\"") if annotation is not None else ""
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    out: dict[str, str] = {}
    for stmt in cls.body if cls is not None else []:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            pairs = [(stmt.target.id, stmt.value)]
        elif isinstance(stmt, ast.Assign):
            pairs = [(t.id, stmt.value) for t in stmt.targets if isinstance(t, ast.Name)]
        else:
            continue
        for field, value in pairs:
            if isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] == "field":
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            try:
                ast.literal_eval(value) if value is not None else None
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if value is not None:
                out[field] = ast.unparse(value)
    return out


def _namespace(
    fn: _Def, tree: ast.Module, param: _Param, columns: dict[str, str | None], options: dict[str, str]
) -> tuple[tuple[str, str], ...] | str:
    """The attributes `param` holds with every default: the columns' (what the module declares, else the
    table's default of the column) and the others the function reads before writing them; or why some
    have none."""
    fields = _class_defaults(tree, param.annotation)
    needed = list(columns) + [a for a in _reads_before_writes(fn, param.name) if a not in columns]
    found = [(a, fields.get(a) or options.get(a) or columns.get(a)) for a in needed]
    missing = [a for a, v in found if v is None]
    if missing:
        shown = ", ".join(f"`{param.name}.{a}`" for a in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        return (
            f"`{fn.name}` reads {shown}{more}, which no column sets and for which no default is found (no "
            f"option of the module's parser, no field of the class annotating `{param.name}`): the "
            "namespace it takes cannot be built"
        )
    return tuple((a, v) for a, v in found if v is not None)


def _lookup(tree: ast.Module, cls: ast.ClassDef | None, name: str) -> _Def | None:
    body = cls.body if cls is not None else tree.body
    return next((n for n in body if isinstance(n, _Def) and n.name == name), None)


@dataclass(frozen=True)
class _Placed:
    args: tuple[str, ...]  # parameters the columns give directly
    prefixes: tuple[str, ...]  # parameters whose attributes the columns are (passed as namespaces)
    fixed: tuple[str, ...]  # attributes of a local, run at their known default
    keywords: tuple[tuple[str, str], ...]


def _place(table: TruthTable, fn: _Def, params: dict[str, _Param]) -> _Placed | str:
    """How each column reaches the call, or why one cannot."""
    stored = _stored_names(fn)
    args: list[str] = []
    prefixes: list[str] = []
    fixed: list[str] = []
    keywords: list[tuple[str, str]] = []
    for v in table.variables:
        compared = comparison(v.name)
        head, dot, attr = (compared.operand if compared is not None else v.name).partition(".")
        if compared is not None and (
            dot and head in params and _IDENT.match(attr) or not dot and head in params
        ):
            # a comparison column: its operand is set to a value that gives the row
            if dot:
                prefixes.append(head)
            else:
                args.append(head)
            keywords.append((v.name, compared.over(compared.operand)))
        elif not dot and v.name in params:
            args.append(v.name)
            keywords.append((v.name, v.name))
        elif dot and head in params and _IDENT.match(attr):
            prefixes.append(head)
            keywords.append((v.name, v.name))
        elif dot and head in stored and head not in params and _IDENT.match(head) and _trusted(v):
            fixed.append(v.name)
        else:
            return (
                f"the column `{v.name}` is neither a parameter of `{fn.name}`, an attribute of one, nor an "
                "attribute of a local with a known default"
            )
    return _Placed(tuple(args), tuple(dict.fromkeys(prefixes)), tuple(fixed), tuple(keywords))


def _enums(table: TruthTable, placed: _Placed, in_module: set[str], module: str) -> tuple[str, ...] | str:
    out: list[str] = []
    for v in table.variables:
        if v.kind != "enum" or v.name in placed.fixed:
            continue
        enum = v.enum or ""
        if enum not in in_module:
            return f"the enum `{enum}` of column `{v.name}` cannot be imported from `{module}`"
        out.append(enum)
    return tuple(dict.fromkeys(out))


def _checked(fn: _Def | None, where: str) -> _Def | str:
    if fn is None:
        return f"`{where}` is not defined at the top of its module or class"
    if isinstance(fn, ast.AsyncFunctionDef):
        return f"`{where}` is async: only plain functions are called"
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _own(fn)):
        return f"`{where}` is a generator: only plain functions are called"
    return fn


def _namespaces(
    fn: _Def, tree: ast.Module, params: dict[str, _Param], names: Sequence[str], table: TruthTable
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | str:
    options = option_defaults(tree)
    out = []
    for name in names:
        columns: dict[str, str | None] = {}
        for v in table.variables:
            compared = comparison(v.name)
            if compared is not None and compared.operand.startswith(name + "."):
                # the compared attribute's default must be the module's: the column's is a truth value
                columns.setdefault(compared.operand.partition(".")[2], None)
            elif compared is None and v.name.startswith(name + "."):
                columns[v.name.partition(".")[2]] = _default_source(v)
        got = _namespace(fn, tree, params[name], columns, options)
        if isinstance(got, str):
            return got
        out.append((name, got))
    return tuple(out)


def _read(
    table: TruthTable, fn: _Def, params: dict[str, _Param], placed: _Placed, where: str
) -> tuple[ReadFrom, list[str], tuple[tuple[str, str], ...], tuple[str, ...]] | str:
    """How the target is read, and the parameters passed as namespaces; or why there is no call to read
    it from."""
    parts = table.target.split(".")
    if not all(_IDENT.match(p) for p in parts):
        return f"the target `{table.target}` is no name or attribute path: it cannot be read after the call"
    root = params.get(parts[0])
    prefixes = list(placed.prefixes)
    if len(parts) > 1 and root is not None and not root.default and root.name not in prefixes:
        prefixes.append(root.name)  # the target is written on a parameter the call must give
    reads, nested = _how_read(fn, parts, params, set(prefixes))
    if not reads:
        return (
            f"the target `{table.target}` is neither returned by `{where}`, nor written on a parameter or "
            "on a local of it: it cannot be read after the call"
        )
    given = set(placed.args) | set(prefixes)
    required = [p.name for p in params.values() if not p.default and p.name not in given]
    filled = function_placeholders(fn, required, {p.name: p.annotation for p in params.values()})
    if isinstance(filled, str):
        shown = ", ".join(f"`{r}`" for r in required[:3])
        return (
            f"`{where}` requires {shown} (no default) and no column of the table gives it; {filled}: "
            "there is no call to make"
        )
    if any(params[p].positional_only for p in given | {p for p, _ in filled}):
        return f"`{where}` takes the row's values as positional-only parameters"
    return reads, prefixes, filled, nested


def function_harness(
    table: TruthTable,
    tree: ast.Module,
    located: tuple[str, str],
    cls: ast.ClassDef | None,
    in_module: set[str],
) -> Harness | str:
    """The harness that calls the table's function (`cls`: the class of a static or class method, None
    for a module function), or why there is none (`in_module`: the names the module defines or imports)."""
    name = (table.function or "").rpartition(".")[2]
    where = table.function or name
    fn = _checked(_lookup(tree, cls, name), where)
    if isinstance(fn, str):
        return fn
    static = static_kind(cls, name) if cls is not None else ""
    params = {p.name: p for p in _params(fn, 1 if static == "classmethod" else 0)}
    placed = _place(table, fn, params)
    if isinstance(placed, str):
        return placed
    read = _read(table, fn, params, placed, where)
    if isinstance(read, str):
        return read
    reads, prefixes, filled, nested = read
    parts = table.target.split(".")
    enums = _enums(table, placed, in_module, located[1])
    if isinstance(enums, str):
        return enums
    namespaces = _namespaces(fn, tree, params, prefixes, table)
    if isinstance(namespaces, str):
        return namespaces
    return Harness(
        path=table.path,
        module=located[1],
        import_root=located[0],
        owner=cls.name if cls is not None else name,
        kind="function",
        function=name,
        target=parts[-1],
        keywords=placed.keywords,
        enums=enums,
        args=placed.args,
        static=static,
        namespaces=namespaces,
        fixed=placed.fixed,
        reads=reads,
        # the holder walks read_from past its first name: the keywords to a nested construction
        read_from=".".join(["returned", *nested]) if nested else ".".join(parts[:-1]),
        given=filled,
        given_from=PLACEHOLDERS if filled else "",
    )
