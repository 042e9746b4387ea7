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
from reviewbot.analysis.removed_flags import defined_flags, dest
from reviewbot.analysis.sides import Side
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
        for recv, key, value in found:
            r = self._receiver(recv, st.lineno)
            if r is None or not key.isidentifier():
                continue
            derived = self._derived(key, st.lineno)
            if _mentions(value, key, derived) or any(_mentions(c, key, derived) for c in conds):
                continue
            if any(e.lineno < st.lineno and _mentions(e.test, key, derived) for e in self.exits):
                continue
            self.out.append(_Candidate(st.lineno, key, r[0], r[1], r[2]))

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


# --------------------------------------------------------------------------------------------- C++

_CPP_PARSE = re.compile(r"\b(\w*parse\w*)\s*\(\s*argc\s*,\s*argv\s*,\s*(\w+)\s*[,)]")
_CPP_ASSIGN = r"^\s*{var}\s*\.\s*(\w+)\s*=(?!=)"
_CPP_CALL = r"^\s*(?:\w+\s*::\s*)*(\w+)\s*\(\s*{var}\s*\)\s*;"
_CPP_HANDLER = r"\.\s*{field}\s*=\s*[^;=]*(?:argv|std::sto[ifdlu]+|\bato[if]\b|\bvalue\b|\bstrto\w+)"


def _enclosing_conditions(lines: list[str], index: int, start: int) -> list[str]:
    """Header texts (if/while/for/else-if) of the blocks around line `index` (0-based), not above `start`."""
    out: list[str] = []
    depth = 0
    prev = lines[index - 1] if index > 0 else ""
    if re.match(r"^\s*(?:else\s+)?if\s*\(", prev) and "{" not in prev and ";" not in prev:
        out.append(prev)
    head = lines[index]
    m = re.match(r"^\s*(?:else\s+)?if\s*\((.*)\)\s*[^;]*;", head)
    if m:
        out.append(head)
    for i in range(index - 1, max(start - 1, -1), -1):
        t = re.sub(r"//.*$", "", lines[i])
        t = re.sub(r'"(?:\\.|[^"\\])*"', '""', t)
        for ch in reversed(t):
            if ch == "}":
                depth += 1
            elif ch == "{":
                if depth == 0:
                    header = t
                    j = i
                    while j > start and not re.search(
                        r"\b(?:if|while|for|switch)\b|\belse\b|\)\s*\{?\s*$", header
                    ):
                        j -= 1
                        header = lines[j] + header
                    if "(" not in header and j > start:
                        header = lines[j - 1] + header
                    out.append(header)
                else:
                    depth -= 1
    return out


def _cpp_field_written(body: list[str], var: str, start: int) -> list[tuple[int, str, str]]:
    """(0-based index, field, text) of unguarded writes of `var.field` in `body` lines (from `start`)."""
    out: list[tuple[int, str, str]] = []
    assign = re.compile(_CPP_ASSIGN.format(var=re.escape(var)))
    by_ref = re.compile(r"\(\s*[^;()]*,\s*" + re.escape(var) + r"\s*\.\s*(\w+)\s*\)\s*;")
    for i in range(start, len(body)):
        text = body[i]
        m = assign.match(text) or by_ref.search(text)
        if not m:
            continue
        field = m.group(1)
        conds = _enclosing_conditions(body, i, start)
        if any(re.search(r"\b" + re.escape(field) + r"\b", c) for c in conds):
            continue
        out.append((i, field, text.strip()))
    return out


def _cpp_definition(text: str, name: str) -> tuple[list[str], int, str] | None:
    """(lines, body start index, parameter name) of a function `name(T & p) {` defined in `text`."""
    m = re.search(
        r"^[\w:<>\s\*&]*\b" + re.escape(name) + r"\s*\(\s*[\w:<>\s]*&\s*(\w+)\s*\)\s*\{", text, re.M
    )
    if m is None:
        return None
    lines = text.split("\n")
    first = text.count("\n", 0, m.start())
    depth = 0
    for i in range(first, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth <= 0 and i > first:
            return lines[first : i + 1], 1, m.group(1)
    return None


@dataclass(frozen=True)
class _CppCandidate:
    line: int
    var: str
    fields: tuple[str, ...]
    writes: tuple[tuple[str, int, str], ...]


def _definition_texts(name: str, texts: dict[str, str], tree: RepoTree | None) -> dict[str, str]:
    """The changed C++ files, else the head tree's C++ files naming `name` (at most 20)."""
    if any(re.search(r"\b" + re.escape(name) + r"\s*\([^;]*\)\s*\{", t) for t in texts.values()):
        return texts
    grep = getattr(tree, "grep", None)
    if tree is None or not callable(grep):
        return texts
    found = grep([name]) or set()
    paths = [p for p in sorted(found) if re.search(r"\.(?:cc|cpp|cxx|h|hpp|cu)$", p) and p not in texts][:20]
    return {**texts, **_read(tree, paths)}


def _cpp_candidates(
    s: Side, text: str, fn_texts: dict[str, str], tree: RepoTree | None = None
) -> list[_CppCandidate]:
    lines = text.split("\n")
    out: list[_CppCandidate] = []
    facts = s.head_facts
    for m in _CPP_PARSE.finditer(text):
        parse_line = text.count("\n", 0, m.start()) + 1
        var = m.group(2)
        fn = facts.function_at(parse_line) if facts is not None else None
        end = fn.end_line if fn is not None else len(lines)
        start = fn.start_line if fn is not None else parse_line
        body = lines[start - 1 : end]
        offset = start - 1
        first = parse_line - start + 1
        for i, field, _txt in _cpp_field_written(body, var, first):
            if i + offset + 1 in s.added:
                out.append(_CppCandidate(i + offset + 1, var, (field,), ()))
        call = re.compile(_CPP_CALL.format(var=re.escape(var)))
        for i in range(first, len(body)):
            ln = i + offset + 1
            c = call.match(body[i])
            if ln not in s.added or not c or c.group(1) in (m.group(1), "assert"):
                continue
            conds = _enclosing_conditions(body, i, first)
            if conds:
                continue
            for path, ftext in _definition_texts(c.group(1), fn_texts, tree).items():
                d = _cpp_definition(ftext, c.group(1))
                if d is None:
                    continue
                flines, bstart, param = d
                writes = _cpp_field_written(flines, param, bstart)
                if writes:
                    base = ftext.count("\n", 0, ftext.find("\n".join(flines))) + 1
                    out.append(
                        _CppCandidate(
                            ln,
                            var,
                            tuple(dict.fromkeys(f for _, f, _ in writes)),
                            tuple((path, base + j, t) for j, _, t in writes),
                        )
                    )
                break
    return out


# ----------------------------------------------------------------------------------------- sources


def _read(tree: RepoTree, paths: Iterable[str]) -> dict[str, str]:
    read_many = getattr(tree, "read_many", None)
    ps = sorted(set(paths))
    got = dict(read_many(ps)) if callable(read_many) else {p: tree.read(p) for p in ps}
    return {p: t for p, t in got.items() if t}


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


def _cpp_handler_sources(fields: set[str], texts: dict[str, str]) -> dict[str, tuple[str, int, str]]:
    out: dict[str, tuple[str, int, str]] = {}
    for path, text in sorted(texts.items()):
        if path.endswith(".py"):
            continue
        for f in fields - set(out):
            m = re.search(_CPP_HANDLER.format(field=re.escape(f)), text)
            if m:
                n = text.count("\n", 0, m.start()) + 1
                out[f] = (path, n, text.split("\n")[n - 1].strip())
    return out


def explicit_writes(
    changed: Iterable[Side], heads: dict[str, str | None], tree: RepoTree | None
) -> list[ExplicitWrite]:
    """The change's unguarded writes over explicitly given values (see the module doc)."""
    py: list[tuple[Side, list[str], _Candidate]] = []
    cpp: list[tuple[Side, list[str], _CppCandidate]] = []
    cpp_texts = {p: t for p, t in heads.items() if t and not p.endswith(".py")}
    for s in changed:
        text = heads.get(s.path)
        if not text or not s.added:
            continue
        lines = text.split("\n")
        if s.path.endswith(".py"):
            py.extend((s, lines, c) for c in _py_candidates(s, text))
        elif re.search(r"\.(?:cc|cpp|cxx|h|hpp|cu)$", s.path):
            cpp.extend((s, lines, c) for c in _cpp_candidates(s, text, cpp_texts, tree))
    if not py and not cpp:
        return []
    grep = getattr(tree, "grep", None)
    keys = {c.key for _, _, c in py if c.kind == "flag"}
    fields = {f for _, _, c in cpp for f in c.fields}
    texts: dict[str, str] = {p: t for p, t in heads.items() if t}
    if tree is not None and callable(grep) and (keys or fields):
        words = {k for k in keys} | {k.replace("_", "-") for k in keys} | fields
        found = grep(sorted(words))
        if found:
            texts.update(_read(tree, [p for p in found if p not in texts][:200]))
    flag_src = _py_flag_sources(keys, texts)
    handler_src = _cpp_handler_sources(fields, texts)
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
