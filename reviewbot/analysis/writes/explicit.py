"""Writes a change adds that replace a value the user gave explicitly (pure, apart from searching the head tree).

A value is *given explicitly* when it comes from the command line or from a config the user wrote:

- Python: a key of a function's `**kwargs` (its caller's keyword); a key of a dict loaded from a config
  file in the function (`json.load`, `yaml.safe_load`, ...); an attribute of an argparse namespace
  (`args = parser.parse_args()`), of `vars(args)`, or of a parameter named like a namespace or a config
  (`args`, `config_dict`, ...) when the key is a command-line option the repository registers
  (`add_argument("--x")`, `dest="x"`).
- C++: a field of the params struct a CLI parser filled (`gpt_params_parse(argc, argv, params)`) that a
  command-line handler of the repository sets (`params.n_ctx = std::stoi(argv[i])`).

A *write* is an added line after the value is given: `kwargs["x"] = ...`, `setattr(args, "x", ...)`,
`vars(args)["x"] = ...`, `args.x = ...` (namespace after parsing), `params.x = ...;`, or a call added after
the C++ parser that passes the params struct to a function writing its fields.

A write is *set-only-if-unset* (not reported) when a condition around it or an early exit before it
reads the key (`if args.x is None`, `if "x" not in kwargs`, `if not args.x`, `== parser default`, a
sentinel), or when the written value reads the key itself (a normalisation: `kwargs["x"] = int(kwargs["x"])`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.removals.named_flags import defined_flags, dest
from reviewbot.analysis.sides import Side
from reviewbot.analysis.writes.explicit_cpp import (
    CppCandidate,
    cpp_candidates,
    cpp_handler_sources,
    read_files,
)
from reviewbot.model.change import RepoTree

__all__ = ["ExplicitWrite", "explicit_writes"]


@dataclass(frozen=True)
class ExplicitWrite:
    path: str
    line: int
    text: str  # the overwriting line, as written (stripped)
    key: str  # the key / attribute / field (C++ call: the first field)
    receiver: str  # as written: kwargs, args, vars(args), params
    kind: str  # flag | kwargs | config | cli
    source_path: str
    source_line: int
    source_text: str  # where the user sets it, as written (stripped)
    fields: tuple[str, ...] = ()  # C++ call form: the fields the callee writes
    writes: tuple[tuple[str, int, str], ...] = ()  # C++ call form: the callee's writes


_NAMESPACE_PARAM = re.compile(
    r"(?i)^(?:args|namespace|opts|options|cli_args|server_args|cmd_args|parsed_args|config_dict|cfg_dict|"
    r"conf_dict|user_config|config_kwargs|user_kwargs|extra_kwargs)$"
)
_LOADERS = {"load", "loads", "safe_load", "full_load", "load_config", "from_yaml", "from_json"}
_LOADER_MODULES = {"json", "yaml", "toml", "tomllib", "tomli", "OmegaConf", "omegaconf", "ujson", "orjson"}
_PARSE = {"parse_args", "parse_known_args", "parse_intermixed_args"}


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


def _mentions(node: ast.AST | None, key: str, derived: set[str]) -> bool:
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
class _Candidate:
    line: int
    key: str
    receiver: str
    kind: str  # flag | kwargs | config
    source_line: int  # kwargs/config: the def / load line


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

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.fn = fn
        a = fn.args
        self.params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
        self.kwarg = a.kwarg.arg if a.kwarg is not None else None
        self.namespaces: dict[str, int] = {}  # name -> parse line
        self.configs: dict[str, int] = {}  # name -> load line
        self.var_dicts: dict[str, int] = {}  # name = vars(ns)
        self.fresh: set[str] = set()
        self.exits: list[ast.If] = []  # `if ...: return/raise` statements
        self.out: list[_Candidate] = []
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
                    elif isinstance(t, ast.Name):
                        self.fresh.add(name)
            if isinstance(st, ast.If) and _exits(st.body):
                self.exits.append(st)

    def candidates(self, added: frozenset[int]) -> list[_Candidate]:
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
            inner = node.args[0]
            if isinstance(inner, ast.Name) and (
                inner.id in self.namespaces or _NAMESPACE_PARAM.match(inner.id)
            ):
                return f"vars({inner.id})", "flag", self.namespaces.get(inner.id, 0)
            return None
        if not isinstance(node, ast.Name):
            return None
        n = node.id
        if n == self.kwarg and n not in self.fresh:
            return n, "kwargs", self.fn.lineno
        if n in self.configs and self.configs[n] < line:
            return n, "config", self.configs[n]
        if n in self.namespaces and self.namespaces[n] < line:
            return n, "flag", self.namespaces[n]
        if n in self.var_dicts and self.var_dicts[n] < line:
            return n, "flag", self.var_dicts[n]
        if n in self.params and n not in self.fresh and _NAMESPACE_PARAM.match(n):
            return n, "flag", 0
        return None

    def _judge(self, st: ast.stmt, conds: list[ast.expr]) -> None:
        for recv, key, value in self._written(st):
            r = self._receiver(recv, st.lineno)
            if r is None or not key.isidentifier():
                continue
            derived = self._derived(key, st.lineno)
            if _mentions(value, key, derived) or any(_mentions(c, key, derived) for c in conds):
                continue
            if any(e.lineno < st.lineno and _mentions(e.test, key, derived) for e in self.exits):
                continue
            self.out.append(_Candidate(st.lineno, key, r[0], r[1], r[2]))

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
                    if n in self.namespaces and self.namespaces[n] < st.lineno:
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
            if isinstance(n, ast.Assign) and n.lineno < line and _mentions(n.value, key, set()):
                for t in n.targets:
                    for x in ast.walk(t):
                        if isinstance(x, ast.Name):
                            out.add(x.id)
            if isinstance(n, ast.NamedExpr) and n.lineno < line and _mentions(n.value, key, set()):
                out.add(n.target.id)
        return out


def _py_candidates(s: Side, text: str) -> list[_Candidate]:
    tree = python_tree(text)
    if tree is None:
        return []
    out: list[_Candidate] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not any(node.lineno <= n <= (node.end_lineno or node.lineno) for n in s.added):
                continue
            out.extend(_Function(node).candidates(s.added))
    return out


# ----------------------------------------------------------------------------------------- sources


# The candidates of the changed files, each with its side and head lines.
_PyFound = list[tuple[Side, list[str], _Candidate]]
_CppFound = list[tuple[Side, list[str], CppCandidate]]


def _py_flag_sources(keys: set[str], texts: dict[str, str]) -> dict[str, tuple[str, int, str]]:
    out: dict[str, tuple[str, int, str]] = {}
    for path, text in sorted(texts.items()):
        if not path.endswith(".py"):
            continue
        lines = text.split("\n")
        for flag, at in defined_flags(text, "python").items():
            k = dest(flag)
            if k in keys and k not in out:
                out[k] = (path, at[0], lines[at[0] - 1].strip())
        for m in re.finditer(r"\bdest\s*=\s*['\"](\w+)['\"]", text):
            k = m.group(1)
            if k in keys and k not in out:
                n = text.count("\n", 0, m.start()) + 1
                out[k] = (path, n, lines[n - 1].strip())
    return out


def explicit_writes(
    changed: Iterable[Side], heads: dict[str, str | None], tree: RepoTree | None
) -> list[ExplicitWrite]:
    """The change's unguarded writes over explicitly given values (see the module doc)."""
    py, cpp = _candidates(changed, heads, tree)
    if not py and not cpp:
        return []
    keys = {c.key for _, _, c in py if c.kind == "flag"}
    fields = {f for _, _, c in cpp for f in c.fields}
    texts = _source_texts(heads, tree, keys, fields)
    flag_src = _py_flag_sources(keys, texts)
    handler_src = cpp_handler_sources(fields, texts)
    return [*_py_writes(py, flag_src), *_cpp_writes(cpp, handler_src)]


def _candidates(
    changed: Iterable[Side], heads: dict[str, str | None], tree: RepoTree | None
) -> tuple[_PyFound, _CppFound]:
    """The candidate writes of the changed Python and C++ files, each with its side and head lines."""
    py: _PyFound = []
    cpp: _CppFound = []
    cpp_texts = {p: t for p, t in heads.items() if t and not p.endswith(".py")}
    for s in changed:
        text = heads.get(s.path)
        if not text or not s.added:
            continue
        lines = text.split("\n")
        if s.path.endswith(".py"):
            py.extend((s, lines, c) for c in _py_candidates(s, text))
        elif re.search(r"\.(?:cc|cpp|cxx|h|hpp|cu)$", s.path):
            cpp.extend((s, lines, c) for c in cpp_candidates(s, text, cpp_texts, tree))
    return py, cpp


def _source_texts(
    heads: dict[str, str | None], tree: RepoTree | None, keys: set[str], fields: set[str]
) -> dict[str, str]:
    """The head texts, plus (at most 200) files of the head tree that name a flag key or a field."""
    grep = getattr(tree, "grep", None)
    texts: dict[str, str] = {p: t for p, t in heads.items() if t}
    if tree is not None and callable(grep) and (keys or fields):
        words = {k for k in keys} | {k.replace("_", "-") for k in keys} | fields
        found = grep(sorted(words))
        if found:
            texts.update(read_files(tree, [p for p in found if p not in texts][:200]))
    return texts


def _py_writes(py: _PyFound, flag_src: dict[str, tuple[str, int, str]]) -> list[ExplicitWrite]:
    """Python candidates as writes; a flag's needs the place the repository registers the option."""
    out: list[ExplicitWrite] = []
    for s, lines, c in py:
        text = lines[c.line - 1].strip()
        if c.kind == "flag":
            src = flag_src.get(c.key)
            if src is None:
                continue
        else:
            src = (s.path, c.source_line, lines[c.source_line - 1].strip())
        out.append(ExplicitWrite(s.path, c.line, text, c.key, c.receiver, c.kind, *src))
    return out


def _cpp_writes(cpp: _CppFound, handler_src: dict[str, tuple[str, int, str]]) -> list[ExplicitWrite]:
    """C++ candidates whose fields a command-line handler sets, as writes."""
    out: list[ExplicitWrite] = []
    for s, lines, cc in cpp:
        given = [f for f in cc.fields if f in handler_src]
        if not given:
            continue
        src = handler_src[given[0]]
        writes = tuple(w for w in cc.writes if any(re.search(r"\b" + f + r"\b", w[2]) for f in given))
        out.append(
            ExplicitWrite(
                s.path,
                cc.line,
                lines[cc.line - 1].strip(),
                given[0],
                cc.var,
                "cli",
                *src,
                tuple(given),
                writes,
            )
        )
    return out
