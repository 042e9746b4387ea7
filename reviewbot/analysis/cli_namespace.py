"""`args.X` reads of a script's own command line that its parser never registers (pure).

`analysis.unset_attributes` reports an `args.X` only when the whole repository never names `X`, which
misses the common slip in a script with its own parser: it reads `args.artifact_path` while its
options are `--model-lib` and `--debug-dir`, and some other script of the repository happens to have
an `artifact_path`. In a file that builds the one parser its namespace comes from, the destinations
are all in the file, so the test is local: every `add_argument` of the file (on the parser, its groups
and sub-parsers: any receiver), with its `dest=` or the destination argparse derives from the first
long option (`--use-foo` -> `use_foo`), else the first short one, else the positional name; every
`set_defaults(x=...)`; an `add_subparsers(dest=...)`; every `args.x = ...` the file writes. A function
whose `args` parameter is annotated with another type (`args: ClientArgs`) is not read as the namespace.

Judged only when the file can be read whole: one `ArgumentParser(...)` construction without
`parents=`, option strings that are literals, no `set_defaults(**...)`, the parser (or a group of it)
never handed to a call or returned (a helper of another module could register more), and `args` never
bound to anything but a `parse_args` / `parse_known_args` result or the call of a function of the file
that returns one (`args = get_args()`; a parameter named `args` is taken to be that namespace). A
file that makes attributes dynamically is left to `unset_attributes`' own guard.
Blind train labels (bench/corpus/mined4-*): Megatron-LM cfd980b4e (`args.path_to_sequences_per_dataset_json`
beside `--per-dataset-sequences-path`); mlc-llm 8f33c30d1 (`args.artifact_path`) has the shape too, but
lies in a `testing/` package, which `unset_attributes` does not judge (test paths).
"""

from __future__ import annotations

import ast

__all__ = ["NAMESPACES", "unregistered_reads"]

_PARSER_METHODS = frozenset(
    {"add_argument_group", "add_mutually_exclusive_group", "add_subparsers", "add_parser"}
)
# A command-line namespace's usual names (`args = parser.parse_args()`); shared with unset_attributes.
NAMESPACES = frozenset({"args", "opts"})


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _destination(call: ast.Call) -> str | None:
    """The namespace attribute an `add_argument` call sets; None when it cannot be read (a computed name)."""
    for k in call.keywords:
        if k.arg == "dest":
            return (
                k.value.value
                if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
                else None
            )
    names: list[str] = []
    for a in call.args:
        if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
            return None
        names.append(a.value)
    if not names:
        return None
    longs = [n for n in names if n.startswith("--")]
    shorts = [n for n in names if n.startswith("-") and not n.startswith("--")]
    first = longs[0] if longs else shorts[0] if shorts else names[0]
    return first.lstrip("-").replace("-", "_")


def _parser_vars(module: ast.Module) -> set[str] | None:
    """The names bound to the parser and its groups / sub-parsers; None when the file has no single,
    self-contained parser."""
    parsers = [
        n for n in ast.walk(module) if isinstance(n, ast.Call) and _call_name(n).endswith("ArgumentParser")
    ]
    if len(parsers) != 1 or any(k.arg in ("parents", None) for k in parsers[0].keywords):
        return None
    out: set[str] = set()
    for n in ast.walk(module):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and len(n.targets) == 1:
            t = n.targets[0]
            name = _call_name(n.value)
            if isinstance(t, ast.Name) and (name.endswith("ArgumentParser") or name in _PARSER_METHODS):
                out.add(t.id)
    return out or None


def _escapes(module: ast.Module, parsers: set[str]) -> bool:
    """A parser variable handed to a call or returned: code elsewhere may register options on it."""
    for n in ast.walk(module):
        if isinstance(n, ast.Call):
            values = [*n.args, *(k.value for k in n.keywords)]
            if any(isinstance(v, ast.Name) and v.id in parsers for v in values):
                return True
        elif isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and n.value.id in parsers:
            return True
    return False


def _parse_call(v: ast.expr | None) -> bool:
    return isinstance(v, ast.Call) and _call_name(v) in ("parse_args", "parse_known_args")


def _parsing_functions(module: ast.Module) -> set[str]:
    """Functions of the file that return the parse result (`def get_args(): ... return parser.parse_args()`)."""
    return {
        f.name
        for f in ast.walk(module)
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(r, ast.Return) and _parse_call(r.value) for r in ast.walk(f))
    }


def _namespace_bound_elsewhere(module: ast.Module) -> bool:
    """`args` bound to something other than a parse result, or a function of this file returning one
    (`args = get_args()` of another module, `args = Config()`)."""
    parsing = _parsing_functions(module)
    for n in ast.walk(module):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            names = (
                [t]
                if isinstance(t, ast.Name)
                else [e for e in getattr(t, "elts", []) if isinstance(e, ast.Name)]
            )
            if any(x.id in NAMESPACES for x in names):
                v = n.value
                local = isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in parsing
                if not (_parse_call(v) or local):
                    return True
    return False


def _registered(module: ast.Module) -> set[str] | None:
    """Every destination the file registers or writes; None when one cannot be read."""
    out: set[str] = set()
    for n in ast.walk(module):
        if isinstance(n, ast.Call) and _call_name(n) == "add_subparsers":
            out.update(
                k.value.value
                for k in n.keywords
                if k.arg == "dest" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
            )
        elif isinstance(n, ast.Call) and _call_name(n) == "add_argument":
            dest = _destination(n)
            if dest is None:
                return None
            out.add(dest)
        elif isinstance(n, ast.Call) and _call_name(n) == "set_defaults":
            if any(k.arg is None for k in n.keywords):
                return None
            out.update(k.arg for k in n.keywords if k.arg)
        elif (
            isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Store | ast.Del)
            and isinstance(n.value, ast.Name)
            and n.value.id in NAMESPACES
        ):
            out.add(n.attr)
    return out


def _typed_elsewhere(module: ast.Module) -> list[tuple[int, int]]:
    """The spans of functions whose `args` / `opts` parameter is annotated with another type
    (`args: ClientArgs`): there the name is not the parsed namespace."""
    out: list[tuple[int, int]] = []
    for f in ast.walk(module):
        if not isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for a in (*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs):
            if (
                a.arg in NAMESPACES
                and a.annotation is not None
                and "Namespace" not in ast.unparse(a.annotation)
            ):
                out.append((f.lineno, f.end_lineno or f.lineno))
    return out


def unregistered_reads(module: ast.Module, lines: frozenset[int]) -> list[tuple[int, str, str]]:
    """(line, attribute, receiver) of the `args.X` / `opts.X` loads on `lines` whose `X` the file's own
    parser never registers (see the module doc); [] when the file cannot be judged."""
    parsers = _parser_vars(module)
    if parsers is None or _escapes(module, parsers) or _namespace_bound_elsewhere(module):
        return []
    registered = _registered(module)
    if registered is None:
        return []
    other = _typed_elsewhere(module)
    out: set[tuple[int, str, str]] = set()
    for n in ast.walk(module):
        if any(lo <= getattr(n, "lineno", 0) <= hi for lo, hi in other):
            continue
        if (
            isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id in NAMESPACES
            and n.lineno in lines
            and n.attr not in registered
            and not n.attr.startswith("_")
        ):
            out.add((n.lineno, n.attr, n.value.id))
    return sorted(out)
