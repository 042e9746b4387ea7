"""The Python half of `explicit_writes`: a function's unguarded writes over values the user gave (pure).

See `writes.explicit` for what counts as given explicitly, as a write, and as set-only-if-unset.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side

__all__ = ["PyCandidate", "py_candidates", "unguarded_writes"]


_NAMESPACE_PARAM = re.compile(
    r"(?i)^(?:args|namespace|opts|options|cli_args|server_args|cmd_args|parsed_args|config_dict|cfg_dict|"
    r"conf_dict|user_config|config_kwargs|user_kwargs|extra_kwargs)$"
)
_LOADERS = {"load", "loads", "safe_load", "full_load", "load_config", "from_yaml", "from_json"}
_LOADER_MODULES = {"json", "yaml", "toml", "tomllib", "tomli", "OmegaConf", "omegaconf", "ujson", "orjson"}
_PARSE = {"parse_args", "parse_known_args", "parse_intermixed_args"}
# A condition that asks whether an optional package is there (`find_spec("mooncake.engine") is None`,
# `not is_flashinfer_available()`, `HAS_TRITON`, an `ImportError` caught).
_AVAILABILITY = re.compile(
    r"\bfind_spec\b|_available\b|\bis_available\b|\bHAS_[A-Z0-9_]+|_AVAILABLE\b|ImportError"
)


def _turned_off(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value in (False, None)


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute):
            return f.attr
        if isinstance(f, ast.Name):
            return f.id
    return ""


def _is_loader(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = node.func.value
    return node.func.attr in _LOADERS and isinstance(owner, ast.Name) and owner.id in _LOADER_MODULES


def mentions_key(node: ast.AST | None, key: str, derived: set[str]) -> bool:
    """`node` names `key`: as a string (`"x" in kwargs`), an attribute (`args.x`) or a name, or one of
    the `derived` locals computed from it."""
    if node is None:
        return False
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and n.value == key:
            return True
        if isinstance(n, ast.Attribute) and n.attr == key:
            return True
        if isinstance(n, ast.Name) and (n.id == key or n.id in derived):
            return True
    return False


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


@dataclass
class PyCandidate:
    line: int
    key: str
    receiver: str
    kind: str  # flag | kwargs | options | config
    source_line: int  # kwargs/options/config: the def / parameter / load line
    function: str = ""  # the enclosing function's name
    value: str = ""  # the value written, as written


_POST_INIT = frozenset({"__post_init__", "model_post_init", "__attrs_post_init__"})
# A parameter holding the caller's keyword options, passed on as a dict (`mm_kwargs`, `model_kwargs`).
_KWARGS_PARAM = re.compile(r"^\w*_kwargs$")


def _copy_of(value: ast.expr, name: str) -> bool:
    """`name = dict(name)`, `{**name}`, `name.copy()`, `copy.copy(name)`, `deepcopy(name)`: the same keys."""
    if isinstance(value, ast.Dict):
        return len(value.keys) == 1 and value.keys[0] is None and _is_name(value.values[0], name)
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Attribute) and f.attr == "copy" and not value.args and _is_name(f.value, name):
        return True
    called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    given = [*value.args, *(k.value for k in value.keywords if k.arg is None)]
    return called in ("dict", "copy", "deepcopy") and len(given) == 1 and _is_name(given[0], name)


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _own_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement of `body`, nested blocks included, not inside nested functions or classes."""
    stack = list(reversed(body))
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield st
        for node in ast.iter_child_nodes(st):
            if isinstance(node, ast.stmt):
                stack.append(node)
            elif isinstance(node, (ast.ExceptHandler, ast.match_case)):
                stack.extend(x for x in node.body)


class _Function:
    """One function's own statements (nested functions and classes are their own)."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, post_init: bool = False) -> None:
        self.fn = fn
        a = fn.args
        self.params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
        self.kwarg = a.kwarg.arg if a.kwarg is not None else None
        self.namespaces: dict[str, int] = {}  # name -> parse line
        self.configs: dict[str, int] = {}  # name -> load line
        self.var_dicts: dict[str, int] = {}  # name = vars(ns)
        self.fresh: set[str] = set()
        # a dataclass's post-init runs on the values its caller gave, the command line's included
        # (`ServerArgs(**vars(args))`): `self` is the namespace there, for writes under a condition that
        # does not ask whether the value was given (with no condition at all, the write is an
        # unconditional override of a config field: that rule's)
        self.post_init = post_init or fn.name in _POST_INIT
        self.exits: list[ast.If] = []  # `if ...: return/raise` statements
        self.out: list[PyCandidate] = []
        self._collect(fn.body)

    def _collect(self, body: list[ast.stmt]) -> None:
        for st in _own_statements(body):
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    name = t.id if isinstance(t, ast.Name) else None
                    if isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name):
                        name = t.elts[0].id
                    if name is None:
                        continue
                    v = st.value
                    if _call_name(v) in _PARSE:
                        self.namespaces.setdefault(name, st.lineno)
                    elif _is_loader(v):
                        self.configs.setdefault(name, st.lineno)
                    elif _call_name(v) == "vars":
                        self.var_dicts.setdefault(name, st.lineno)
                    elif isinstance(t, ast.Name) and not _copy_of(v, name):
                        self.fresh.add(name)
            if isinstance(st, ast.If) and _exits(st.body):
                self.exits.append(st)

    def candidates(self, added: frozenset[int]) -> list[PyCandidate]:
        self._walk(self.fn.body, [], added)
        return self.out

    def _walk(self, body: list[ast.stmt], conds: list[ast.expr], added: frozenset[int]) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if st.lineno in added:
                self._judge(st, conds)
            if isinstance(st, (ast.If, ast.While)):
                self._walk(st.body, [*conds, st.test], added)
                self._walk(st.orelse, [*conds, st.test], added)
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                self._walk(st.body, [*conds, st.iter], added)
                self._walk(st.orelse, conds, added)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                self._walk(st.body, conds, added)
            elif isinstance(st, ast.Try):
                self._walk(st.body, conds, added)
                for h in st.handlers:
                    self._walk(h.body, conds, added)
                self._walk(st.orelse, conds, added)
                self._walk(st.finalbody, conds, added)
            elif isinstance(st, ast.Match):
                for c in st.cases:
                    self._walk(c.body, [*conds, st.subject], added)

    def _receiver(self, node: ast.expr, line: int) -> tuple[str, str, int] | None:
        """(receiver as written, kind, source line) for a dict/namespace the user fills, else None."""
        if isinstance(node, ast.Call) and _call_name(node) == "vars" and node.args:
            return self._vars(node.args[0])
        if not isinstance(node, ast.Name):
            return None
        n = node.id
        if n not in self.fresh and (n == self.kwarg or (n in self.params and _KWARGS_PARAM.match(n))):
            return self._keywords(n)
        if n in self.configs and self.configs[n] < line:
            return n, "config", self.configs[n]
        if n in self.namespaces and self.namespaces[n] < line:
            return n, "flag", self.namespaces[n]
        if n in self.var_dicts and self.var_dicts[n] < line:
            return n, "flag", self.var_dicts[n]
        if n in self.params and n not in self.fresh and _NAMESPACE_PARAM.match(n):
            return n, "flag", 0
        if n == "self" and self.post_init:
            return n, "flag", 0
        return None

    def _vars(self, inner: ast.expr) -> tuple[str, str, int] | None:
        """`vars(args)` of a parsed namespace or a parameter named like one."""
        if isinstance(inner, ast.Name) and (inner.id in self.namespaces or _NAMESPACE_PARAM.match(inner.id)):
            return f"vars({inner.id})", "flag", self.namespaces.get(inner.id, 0)
        return None

    def _keywords(self, n: str) -> tuple[str, str, int]:
        """`**kwargs` (the def line), or a `*_kwargs` parameter (its own line)."""
        if n == self.kwarg:
            return n, "kwargs", self.fn.lineno
        at = next((a.lineno for a in self.fn.args.args + self.fn.args.kwonlyargs if a.arg == n), 0)
        return n, "options", at or self.fn.lineno

    def _judge(self, st: ast.stmt, conds: list[ast.expr]) -> None:
        for recv, key, value in self._written(st):
            r = self._receiver(recv, st.lineno)
            if r is None or not key.isidentifier():
                continue
            if r[0] == "self" and not conds:
                continue  # an unconditional write of a config object's field: unconditional-override's
            derived = self._derived(key, st.lineno)
            if mentions_key(value, key, derived) or any(mentions_key(c, key, derived) for c in conds):
                continue
            if any(e.lineno < st.lineno and mentions_key(e.test, key, derived) for e in self.exits):
                continue
            if _turned_off(value) and any(_AVAILABILITY.search(ast.unparse(c)) for c in conds):
                continue  # a feature switched off where its package is missing: it could not be honoured
            written = ast.unparse(value) if value is not None else ""
            self.out.append(PyCandidate(st.lineno, key, r[0], r[1], r[2], self.fn.name, written))

    def _written(self, st: ast.stmt) -> list[tuple[ast.expr, str, ast.expr | None]]:
        """(receiver node, key, value) of what `st` writes: `r["k"] = v`, `ns.k = v` (a parsed
        namespace, after parsing), `setattr(r, "k", v)`."""
        found: list[tuple[ast.expr, str, ast.expr | None]] = []  # (receiver node, key, value)
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    found.append((t.value, t.slice.value, st.value))
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    n = t.value.id
                    if (n in self.namespaces and self.namespaces[n] < st.lineno) or (
                        n == "self" and self.post_init
                    ):
                        found.append((t.value, t.attr, st.value))
        elif (
            isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and _call_name(st.value) == "setattr"
        ):
            args = st.value.args
            if (
                isinstance(st.value.func, ast.Name)
                and len(args) == 3
                and isinstance(args[1], ast.Constant)
                and isinstance(args[1].value, str)
            ):
                found.append((args[0], args[1].value, args[2]))
        return found

    def _derived(self, key: str, line: int) -> set[str]:
        """Local names bound (before `line`) from an expression reading `key`."""
        out: set[str] = set()
        for n in ast.walk(self.fn):
            if isinstance(n, ast.Assign) and n.lineno < line and mentions_key(n.value, key, set()):
                for t in n.targets:
                    for x in ast.walk(t):
                        if isinstance(x, ast.Name):
                            out.add(x.id)
            if isinstance(n, ast.NamedExpr) and n.lineno < line and mentions_key(n.value, key, set()):
                out.add(n.target.id)
        return out


def post_init_helpers(tree: ast.AST) -> set[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Methods that run on the caller's values as a post-init does: those a class's post-init calls on
    `self`, directly or through one another (`ServerArgs.__post_init__` ->
    `self._handle_model_specific_adjustments()`), and every instance method of a dataclass that
    registers its own command-line options (`EngineArgs.add_cli_args` calls `add_argument`: its
    instances are the command line, `_override_v1_engine_args` runs on what the user gave)."""
    out: set[ast.FunctionDef | ast.AsyncFunctionDef] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if _is_dataclass(cls) and _registers_options(cls):
            out.update(m for m in methods.values() if _instance_method(m) and m.name != "__init__")
        todo = [m for name, m in methods.items() if name in _POST_INIT]
        seen = {m.name for m in todo}
        while todo:
            for call in ast.walk(todo.pop()):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and _is_name(call.func.value, "self")
                    and call.func.attr in methods
                    and call.func.attr not in seen
                ):
                    seen.add(call.func.attr)
                    todo.append(methods[call.func.attr])
                    out.add(methods[call.func.attr])
    return out


def _is_dataclass(cls: ast.ClassDef) -> bool:
    """`@dataclass`, `@dataclasses.dataclass(...)`: its fields are the values its caller gives (a class
    that merely owns a parser, `self.parser.add_argument(...)`, is not the options themselves)."""
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name == "dataclass":
            return True
    return False


def _registers_options(cls: ast.ClassDef) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
        for n in ast.walk(cls)
    )


def _instance_method(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    decorators = {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in fn.decorator_list}
    args = fn.args.posonlyargs + fn.args.args
    return (
        not decorators & {"staticmethod", "classmethod", "property"} and bool(args) and args[0].arg == "self"
    )


def py_candidates(s: Side, text: str) -> list[PyCandidate]:
    tree = python_tree(text)
    if tree is None:
        return []
    helpers = post_init_helpers(tree)
    out: list[PyCandidate] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not any(node.lineno <= n <= (node.end_lineno or node.lineno) for n in s.added):
                continue
            out.extend(_Function(node, node in helpers).candidates(s.added))
    return out


def unguarded_writes(text: str | None) -> set[tuple[str, str, str, str]]:
    """(function, receiver, key, value written) of every unguarded write of a file: at the base, the
    writes a change keeps (a line edited for another reason, `_pad(...)` renamed `pad(...)`, introduces
    no overwrite). The value counts: `= True` at the base and `= False` at the head is a new overwrite."""
    tree = python_tree(text)
    if tree is None or text is None:
        return set()
    every = frozenset(range(1, text.count("\n") + 2))
    helpers = post_init_helpers(tree)
    return {
        (c.function, c.receiver, c.key, c.value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for c in _Function(node, node in helpers).candidates(every)
    }
