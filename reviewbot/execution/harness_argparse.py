"""The construction path of a derivation in an argument parser's validation function (`validate_args(args)`).

Megatron-style launchers parse the command line with argparse, then mutate the namespace in a
validation function: `args = parse_args(); validate_args(args)`. A table of such a derivation has the
function's namespace parameter as the prefix of every column (`args.sequence_parallel`), and each
column is an option of the module's parser. The harness parses the defaults the way the module does
(a function that returns the parser: `get_parser().parse_args([])`; else a function that parses the
command line itself, run with no arguments), sets the row's options on the namespace and calls the
validation function; the target is read from the namespace (or from the namespace it returns).

A module-level function (all of its parameters defaulted) gives the defaults only when the options of
every column are added in it or in the module's functions it calls: a second parser of the same module
(a sub-tool's) is not taken for the launcher's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from reviewbot.analysis.defaults.arg_options import option_dest, parser_defaults
from reviewbot.execution.call_sites import Sites
from reviewbot.execution.harness_argparse_sites import validated_setup
from reviewbot.execution.harness_conditions import comparison
from reviewbot.model.executed import DefaultsCall, Harness
from reviewbot.model.truthtable import TruthTable

__all__ = ["argparse_harness", "option_defaults", "option_dests"]

_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    yield from (n for n in ast.walk(node) if isinstance(n, ast.Call))


def _called_name(call: ast.Call) -> str:
    """`f` of `f(...)` and `x.f(...)`; "" for anything else."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def option_dests(node: ast.AST) -> set[str]:
    """The dests of every `add_argument(...)` call in `node`."""
    out = set()
    for call in _calls(node):
        if _called_name(call) == "add_argument":
            dest = option_dest(call)
            if dest is not None:
                out.add(dest)
    return out


def option_defaults(node: ast.AST) -> dict[str, str]:
    """Dest -> default (Python source) of every option of `node` whose default is a literal, by
    argparse's own rule (`analysis.defaults.arg_options`, which the validation rules read too)."""
    return parser_defaults(node)


def _reach(name: str, functions: dict[str, ast.FunctionDef]) -> set[str]:
    """Option dests added by `name` and the module functions it calls, transitively."""
    seen: set[str] = set()
    todo = [name]
    dests: set[str] = set()
    while todo:
        fn = functions.get(todo.pop())
        if fn is None or fn.name in seen:
            continue
        seen.add(fn.name)
        dests |= option_dests(fn)
        todo.extend(_called_name(c) for c in _calls(fn))
    return dests


def _all_defaulted(fn: _Function, skip: int = 0) -> bool:
    """Every parameter after the first `skip` has a default (the function can be called that way)."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args][skip:]
    kw_defaults_missing = any(d is None for d in a.kw_defaults)
    return len(a.defaults) >= len(positional) and not kw_defaults_missing


def _defaults_kind(fn: ast.FunctionDef) -> DefaultsCall:
    """ "parser": the function builds and returns a parser; "args": it parses the command line."""
    called = {_called_name(c) for c in _calls(fn)}
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
    if not returns:
        return ""
    if called & {"parse_args", "parse_known_args"}:
        return "args"
    if "ArgumentParser" in called and any(isinstance(r.value, ast.Name) for r in returns):
        return "parser"
    return ""


def _defaults_from(tree: ast.Module, validator: str, dests: set[str]) -> tuple[str, DefaultsCall] | None:
    """The module function that gives the parsed defaults with every option in `dests` (a parser
    builder first, in source order), or None."""
    functions = _functions(tree)
    found: dict[DefaultsCall, str] = {}
    for name, fn in functions.items():
        if name == validator or not _all_defaulted(fn):
            continue
        kind = _defaults_kind(fn)
        if kind and kind not in found and dests <= _reach(name, functions):
            found[kind] = name
    for kind in ("parser", "args"):
        if kind in found:
            return found[kind], kind
    return None


def _keyed(column: str, param: str) -> tuple[str, str | None]:
    """(key, option dest) of a column of the namespace `param` (dest None: it is no attribute of it)."""
    dest = _attribute(column, param)
    found = comparison(column) if dest is None else None
    if found is None:
        return column if dest is None else dest, dest
    dest = _attribute(found.operand, param)
    return (found.over(dest) if dest is not None else column), dest


def _attribute(name: str, param: str) -> str | None:
    head, dot, rest = name.partition(".")
    return rest if dot and head == param and _IDENT.match(rest) else None


def argparse_harness(
    table: TruthTable, tree: ast.Module, located: tuple[str, str], why_not: str, sites: Sites | None = None
) -> Harness | str:
    """The harness of a derivation in a module-level function that validates a parsed namespace, or
    the reason there is none (`why_not` when the function takes no namespace the table reads; `sites`:
    files that may call the function, for the options the repository sets before it does)."""
    fn = _functions(tree).get(table.function or "")
    params = [] if fn is None else [*fn.args.posonlyargs, *fn.args.args]
    if fn is None or not params:
        return why_not
    param = params[0].arg
    target = _attribute(table.target, param)
    # column -> (key, option dest); a comparison column (`1 == args.tp`) keys its option's value
    # as the comparison over the dest (`1 == tp`): the generated test gives the option a value that
    # makes the row
    columns = [(v.name, *_keyed(v.name, param)) for v in table.variables]
    if target is None or any(dest is None for _, _, dest in columns):
        return why_not  # not a namespace derivation: the table reads something else
    if not _all_defaulted(fn, skip=1):
        return f"`{fn.name}` takes more than the namespace `{param}` without defaults"
    options = option_dests(tree)
    if not options:
        return why_not  # no argument parser here: `param` is not a parsed namespace of this module
    for name, _, dest in columns:
        if dest not in options:
            return f"the column `{name}` is no command-line option of `{located[1]}`"
    if any(v.kind == "enum" for v in table.variables):
        return "an enum column of a parsed namespace is not set from a row yet"
    dests = {d for _, _, d in columns if d is not None}
    defaults = _defaults_from(tree, fn.name, dests)
    if defaults is None:
        return (
            f"no function of `{located[1]}` (called with no arguments) returns the parser or the parsed "
            f"namespace with the options {', '.join(sorted(f'`{d}`' for d in dests))}"
        )
    setup = validated_setup(fn.name, sites(fn.name)) if sites is not None else None
    return Harness(
        path=table.path,
        module=located[1],
        import_root=located[0],
        owner=fn.name,
        kind="argparse",
        function=fn.name,
        target=target,
        keywords=tuple((name, key) for name, key, _ in columns),
        defaults_from=defaults[0],
        defaults_call=defaults[1],
        given=setup[0] if setup is not None else (),
        given_from=setup[1] if setup is not None else "",
    )
