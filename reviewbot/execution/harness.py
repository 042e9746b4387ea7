"""Find how to build the config under test for one truth table: a typed `Harness`, or why there is none.

The construction path found here is the simplest real one: the changed derivation runs in `__post_init__`
(or `__init__`), or in a method that one calls on `self` (`self._handle_defaults()`, directly or through
other methods), of a top-level Python class whose constructor takes every column of the table as a
keyword (a dataclass, a pydantic model, or a plain class whose `__init__` names them); the import path
comes from the file path, the target is read as an attribute after construction. Enum values the rows
need must be importable from the same module (declared or imported there). A derivation in a
module-level function that validates a parsed namespace (`validate_args(args)`) is built through the
module's argument parser instead (execution/harness_argparse.py). A derivation in a method no
constructor calls is run by building the object the same way and calling that method on it
(execution/harness_method.py). A derivation in any other module-level function, or in a staticmethod
or classmethod, is run by calling that function with the row's values (execution/harness_function.py).
Anything else gets a reason and no harness: no runnable claim is made for it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Mapping

from reviewbot.execution.call_sites import Sites
from reviewbot.execution.harness_argparse import argparse_harness
from reviewbot.execution.harness_conditions import comparison
from reviewbot.execution.harness_function import function_harness, static_kind
from reviewbot.execution.harness_given import Given, required_given
from reviewbot.execution.harness_method import MethodPlan, assigned, method_plan
from reviewbot.execution.harness_module import lifted, module_of
from reviewbot.lang.facts import FileFacts, OwnerKind
from reviewbot.model.executed import Harness, HarnessKind
from reviewbot.model.truthtable import TruthTable

__all__ = ["CONSTRUCTORS", "find_harness", "module_of"]

CONSTRUCTORS = ("__post_init__", "__init__")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_PYDANTIC_BASES = {"BaseModel", "BaseSettings"}


def _field(name: str) -> str | None:
    """The attribute a column or target names (`self.x` or `x`); None for anything else."""
    name = name.removeprefix("self.")
    return name if _IDENT.match(name) else None


def _class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


def _is_classvar(annotation: ast.expr) -> bool:
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return isinstance(node, ast.Name | ast.Attribute) and ast.unparse(node).endswith("ClassVar")


def _init_false(value: ast.expr | None) -> bool:
    """`field(init=False)`: a dataclass field the constructor does not take."""
    return isinstance(value, ast.Call) and any(
        k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in value.keywords
    )


def _annotated_fields(cls: ast.ClassDef) -> list[str]:
    out = []
    for stmt in cls.body:
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and not _is_classvar(stmt.annotation)
            and not _init_false(stmt.value)
        ):
            out.append(stmt.target.id)
    return out


def _no_default(value: ast.expr | None) -> bool:
    """A field declared without a default: `x: int`, `field()`, `Field(...)` (a required keyword)."""
    if value is None:
        return True
    if not isinstance(value, ast.Call) or ast.unparse(value.func).rsplit(".", 1)[-1] not in (
        "field",
        "Field",
    ):
        return False
    if any(k.arg in ("default", "default_factory") for k in value.keywords):
        return False
    return not value.args or (isinstance(value.args[0], ast.Constant) and value.args[0].value is Ellipsis)


def _required(cls: ast.ClassDef, kind: HarnessKind) -> list[str]:
    """The constructor's keywords without a default: nothing builds the all-defaults configuration."""
    if kind != "class":
        fields = set(_annotated_fields(cls))
        return [
            s.target.id
            for s in cls.body
            if isinstance(s, ast.AnnAssign)
            and isinstance(s.target, ast.Name)
            and s.target.id in fields
            and _no_default(s.value)
        ]
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        return []
    a = init.args
    positional = [*a.posonlyargs, *a.args][1:]
    out = [p.arg for p in positional[: len(positional) - len(a.defaults)]]
    return out + [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None]


def _init_keywords(cls: ast.ClassDef) -> list[str] | None:
    """The keywords a plain class's `__init__` takes (None: it has none of its own, or takes **kwargs only)."""
    init = next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"),
        None,
    )
    if init is None:
        return None
    args = init.args
    names = [a.arg for a in (*args.posonlyargs[1:], *args.args[1:], *args.kwonlyargs)]
    return [n for n in names if n not in {a.arg for a in args.posonlyargs}]


def _module_names(tree: ast.Module) -> set[str]:
    """Names a module defines or imports at top level (what `from module import X` can reach)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _kind(facts: FileFacts, owner: str, cls: ast.ClassDef) -> HarnessKind | None:
    decl = next((o for o in facts.owners if o.qualname == owner), None)
    bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in cls.bases}
    if bases & _PYDANTIC_BASES:
        return "pydantic"
    decorated = {ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list}
    if any(d.rsplit(".", 1)[-1] == "dataclass" for d in decorated):
        return "dataclass"
    if decl is not None and decl.kind is OwnerKind.DATACLASS:
        return None  # attrs, NamedTuple, ...: not this slice's constructor
    return "class"


def _parsed(table: TruthTable, facts: FileFacts | None, text: str | None) -> ast.Module | str:
    if facts is None or text is None:
        return f"`{table.path}` was not parsed at the head"
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        return f"`{table.path}` does not parse as Python: {exc.msg} (line {exc.lineno})"


def _columns(
    table: TruthTable,
    owner: str,
    taken: list[str],
    in_module: set[str],
    module: str,
    plan: MethodPlan | None = None,
) -> tuple[list[tuple[str, str]], list[str]] | str:
    """Column -> constructor keyword (the method harness: the name its plan sets), and the enums the
    rows name; or why a column cannot be set."""
    keywords: list[tuple[str, str]] = []
    enums: list[str] = []
    placed = dict(plan.keywords) if plan is not None else {}
    for v in table.variables:
        name = placed.get(v.name) if plan is not None else _field(v.name)
        compared = comparison(v.name) if name is None and plan is None else None
        operand = _field(compared.operand) if compared is not None else None
        if compared is not None and operand in taken:
            name = compared.over(operand)  # the keyword is set to a value that gives the row
        elif name is None or (plan is None and name not in taken):
            return f"the column `{v.name}` cannot be set through `{owner}(...)`"
        keywords.append((v.name, name))
        if v.kind == "enum":
            enum = v.enum or ""
            if enum not in in_module:
                return f"the enum `{enum}` of column `{v.name}` cannot be imported from `{module}`"
            if enum not in enums:
                enums.append(enum)
    return keywords, enums


def _self_calls(fn: ast.FunctionDef) -> set[str]:
    """Methods `fn` calls on `self` (`self.m(...)`)."""
    return {
        n.func.attr
        for n in ast.walk(fn)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
    }


def _called_on_construction(cls: ast.ClassDef, method: str, kind: HarnessKind) -> str | None:
    """The constructor of `cls` that runs `method` (directly or through other methods on `self`)."""
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    ctors = {"dataclass": ("__post_init__",), "pydantic": ("model_post_init", "__init__")}.get(
        kind, ("__init__",)
    )
    for ctor in ctors:
        seen: set[str] = set()
        todo = [ctor]
        while todo:
            name = todo.pop()
            if name in seen or name not in methods:
                continue
            seen.add(name)
            calls = _self_calls(methods[name])
            if method in calls:
                return ctor
            todo.extend(calls)
    return None


_Given = Given  # (keyword -> value source, where they come from)


def _how_built(
    cls: ast.ClassDef, kind: HarnessKind, method: str, via: bool, sites: Sites | None, columns: set[str]
) -> tuple[list[str], _Given | None] | str:
    """The constructor's keywords, and the literals a call gives its required arguments; or why the
    object cannot be built."""
    owner = cls.name
    if kind == "class":
        if method == "__post_init__":
            return f"`{owner}` has `__post_init__` but is not a dataclass: nothing calls it on construction"
        taken = _init_keywords(cls)
        if taken is None and (via or method in CONSTRUCTORS):
            return f"`{owner}.__init__` names no keyword arguments"
    else:
        taken = _annotated_fields(cls)
    required = _required(cls, kind)
    if not required:
        return taken or [], None
    given = required_given(cls, kind, method, required, sites, columns, _positional(cls, kind))
    return given if isinstance(given, str) else (taken or [], given)


def _positional(cls: ast.ClassDef, kind: HarnessKind) -> list[str]:
    """The constructor's positional parameters in order: a plain class's `__init__`'s, a dataclass's
    fields when it has no base (a base's fields would come first); none for a pydantic model."""
    if kind == "class":
        init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        return [p.arg for p in (*init.args.posonlyargs, *init.args.args)][1:] if init is not None else []
    return _annotated_fields(cls) if kind == "dataclass" and not cls.bases else []


def _constructor_harness(
    table: TruthTable, facts: FileFacts, tree: ast.Module, located: tuple[str, str], sites: Sites | None
) -> Harness | str:
    fn = table.function or ""
    owner, _, method = fn.rpartition(".")
    cls = _class(tree, owner)
    if cls is None:
        if "." in owner:
            return f"`{fn}` is not a method of a top-level class: only top-level classes are constructed"
        return f"`{owner}` is not a top-level class of `{table.path}`"
    kind = _kind(facts, owner, cls)
    static = static_kind(cls, method)
    if static and (kind is None or not _called_on_construction(cls, method, kind)):
        return function_harness(table, tree, located, cls, _module_names(tree))
    if kind is None:
        return f"`{owner}` is neither a dataclass, a pydantic model nor a plain class"
    via = ""
    if method not in CONSTRUCTORS:
        via = _called_on_construction(cls, method, kind) or ""
    named = {_field(v.name) or v.name for v in table.variables}
    built = _how_built(cls, kind, method, bool(via), sites, named)
    if isinstance(built, str):
        return built
    taken, given = built
    plan: MethodPlan | None = None
    if method not in CONSTRUCTORS and not via:
        found = method_plan(cls, method, [v.name for v in table.variables], table.target, taken)
        if isinstance(found, str):
            return f"the derivation runs in `{fn}`, which no constructor of `{owner}` calls, and {found}"
        plan = found
    target, read_from = _target(table.target, set(taken) | assigned(cls))
    if target is None:
        return f"the target `{table.target}` is not an attribute of `{owner}`"
    columns = _columns(table, owner, taken, _module_names(tree), located[1], plan)
    if isinstance(columns, str):
        return columns
    return Harness(
        path=table.path,
        module=located[1],
        import_root=located[0],
        owner=owner,
        kind=kind,
        function=method,
        target=target,
        keywords=tuple(columns[0]),
        enums=tuple(columns[1]),
        via=via,
        given=given[0] if given is not None else (),
        given_from=given[1] if given is not None else "",
        call=plan is not None,
        sets=plan.sets if plan is not None else (),
        args=plan.args if plan is not None else (),
        read_from=read_from,
    )


def _target(target: str, attributes: set[str]) -> tuple[str | None, str]:
    """The attribute read after the build, and the path of the object it is read on ("": the built
    object): `self.x` -> (x, ""); `eplb_config.window_size`, where `eplb_config` is an attribute of the
    built object -> (window_size, eplb_config)."""
    field = _field(target)
    if field is not None:
        return field, ""
    path, _, last = target.removeprefix("self.").rpartition(".")
    parts = path.split(".")
    if path and _IDENT.match(last) and all(_IDENT.match(p) for p in parts) and parts[0] in attributes:
        return last, path
    return None, ""


def find_harness(
    table: TruthTable,
    head_facts: Mapping[str, FileFacts],
    head_text: str | None,
    packages: Collection[str] | None = None,
    sites: Sites | None = None,
) -> Harness | str:
    """The harness of `table`, or one sentence saying why there is none (`packages`: see `module_of`;
    `sites`: files that may call a constructor with required arguments, execution/call_sites.py)."""
    lang = str(getattr(table.lang, "value", table.lang))
    if lang == "cpp":
        # The round sends C++ tables to execution.cpp_harness; only a caller that asks this Python
        # harness about one (bench/executed_tables.py) sees this.
        return "a C++ derivation: the C++ harness (execution.cpp_harness) builds it, not the Python one"
    if lang != "python":
        return f"{lang} derivations are not executed (no harness for the language)"
    fn = table.function or ""
    owner = fn.rpartition(".")[0]
    where = f"`{fn}`" if fn else "module level"
    why_not = f"the derivation runs in {where}, not in a class's `__post_init__` or `__init__`"
    if not fn:
        return why_not
    located = module_of(table.path, packages)
    if located is None:
        return f"`{table.path}` is not an importable module path"
    facts = head_facts.get(table.path)
    tree = _parsed(table, facts, head_text)
    if isinstance(tree, str):
        return tree
    located = lifted(located, tree)
    if not owner:
        parsed = argparse_harness(table, tree, located, "", sites)
        if isinstance(parsed, Harness):
            return parsed
        called = function_harness(table, tree, located, None, _module_names(tree))
        if isinstance(called, Harness) or not parsed:
            return called
        return f"{parsed}; called as a function: {called}"
    assert facts is not None  # parsed: the facts exist
    return _constructor_harness(table, facts, tree, located, sites)
