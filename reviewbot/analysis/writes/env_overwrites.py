"""Writes a change adds over an environment setting the user may have exported (pure, given the index).

An environment variable is one of the project's settings when the repository reads it (`os.getenv`,
`os.environ.get`, an env registry such as `envs.X.get()`: `RepoIndex.env_reads`) and its name carries
the project's own prefix (the prefix most of the repository's env reads share: `SGLANG_`, `VLLM_`), so
an operator sets it by exporting it. A change that writes it on an added line (`os.environ["X"] = v`,
`os.putenv("X", v)`, `envs.X.set(v)`) replaces what the operator exported, unless:

- a condition around the write or an early exit before it in the same function reads `X` (`if "X" not in
  os.environ`, `if not envs.X.is_set()`), the written value reads `X` (a normalisation), or the
  function reads `X` before the write (`saved = os.environ.get("X")`: a save and restore);
- it uses `os.environ.setdefault` (set-only-if-unset by construction);
- it runs only when the value it writes was given (`if num_gpu_experts is not None:
  envs.X.set(num_gpu_experts)`): another explicit setting, typically a command-line option that is
  `None` unless passed, handed on to the environment; the command line winning is the usual order;
- the block that writes it also logs (`logger.warning("Enable deterministic inference ...")`): the
  operator is told, as for any override that logs that it applied;
- it runs in a command-line option's `type=` / `action=` callable: the user passed that option;
- it is in a test, or the name has no project prefix (a third-party library's variable set on purpose:
  `TOKENIZERS_PARALLELISM`, `NCCL_*`);
- the base file made the same write (the same variable, the same value as written): a block moved or
  split into a helper replaces nothing the operator's launches did not already lose;
- every read of `X` is on a line the change adds, no changed file read it at base and none goes through
  the env registry (`envs.X.get()` declares a public setting): the change opens a channel to its own
  subprocesses
  (`os.environ["SGLANG_ENABLE_TORCH_COMPILE"] = "1" if self.enable_torch_compile else "0"`, read
  by the worker it starts); nobody could export a setting the base never read.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side
from reviewbot.analysis.writes.explicit import ExplicitWrite
from reviewbot.analysis.writes.explicit_py import mentions_key
from reviewbot.lang.facts import EnvRead
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.model.change import RepoTree

__all__ = ["env_overwrites", "project_prefix"]

_MIN_READS = 5  # env reads sharing a prefix before it is the project's
_SHARE = 0.2  # and their share of all the repository's env reads


def project_prefix(index: RepoIndex) -> str | None:
    """The prefix (up to the first `_`) most of the repository's env reads share, when it is common."""
    names = {e.name for e in index.env_reads() if not is_test_path(e.path)}
    counts = Counter(n.split("_", 1)[0] for n in names if "_" in n)
    if not counts:
        return None
    prefix, n = counts.most_common(1)[0]
    return prefix if n >= _MIN_READS and n >= _SHARE * len(names) else None


def _written_name(node: ast.AST) -> tuple[str, ast.expr | None] | None:
    """(env name, written value) of `os.environ["X"] = v`, `os.putenv("X", v)`, `envs.X.set(v)`."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        t = node.targets[0]
        if (
            isinstance(t, ast.Subscript)
            and ast.unparse(t.value) == "os.environ"
            and isinstance(t.slice, ast.Constant)
            and isinstance(t.slice.value, str)
        ):
            return t.slice.value, node.value
        return None
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    call = node.value
    f = call.func
    if ast.unparse(f) == "os.putenv" and call.args and isinstance(call.args[0], ast.Constant):
        value = call.args[1] if len(call.args) > 1 else None
        return (str(call.args[0].value), value) if isinstance(call.args[0].value, str) else None
    if (
        isinstance(f, ast.Attribute)
        and f.attr == "set"
        and isinstance(f.value, ast.Attribute)
        and f.value.attr.isupper()
        and ast.unparse(f.value.value).split(".")[-1] in ("envs", "environ", "env")
    ):
        return f.value.attr, call.args[0] if call.args else None
    return None


def _reads(node: ast.AST | None, name: str) -> bool:
    """`node` mentions the variable: as a string (`"X" in os.environ`) or an attribute (`envs.X`)."""
    return mentions_key(node, name, set())


def _tests(fn: ast.AST, write: ast.stmt) -> tuple[list[ast.expr], list[ast.expr]]:
    """The conditions around `write` in `fn`, and the tests of the `if` / `while` statements before it
    (an early exit or a set-if-unset block)."""
    before: list[ast.expr] = []

    def walk(body: list[ast.stmt], conds: list[ast.expr]) -> list[ast.expr] | None:
        for st in body:
            if st is write:
                return conds
            if isinstance(st, ast.If | ast.While):
                found = walk(st.body, [*conds, st.test])
                if found is None:
                    found = walk(st.orelse, [*conds, st.test])
                if found is not None:
                    return found
                before.append(st.test)
            elif isinstance(st, ast.With | ast.For | ast.AsyncFor | ast.AsyncWith | ast.Try):
                parts = [getattr(st, p, []) or [] for p in ("body", "orelse", "finalbody")]
                parts += [h.body for h in getattr(st, "handlers", []) or []]
                for part in parts:
                    found = walk(part, conds)
                    if found is not None:
                        return found
        return None

    return walk(getattr(fn, "body", []), []) or [], before


def _guarded(fn: ast.AST, write: ast.stmt, name: str) -> bool:
    """A condition around `write`, or an exit before it, in `fn` reads the variable."""
    conds, before = _tests(fn, write)
    return any(_reads(c, name) for c in (*conds, *before))


def _given(test: ast.expr, value: str) -> bool:
    """`test` holds only when `value` was given: `value is not None`, `value`, or one of the `and`ed terms."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_given(v, value) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot):
        right = test.comparators[0]
        return isinstance(right, ast.Constant) and right.value is None and ast.unparse(test.left) == value
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test) == value


def _set_when_given(fn: ast.AST, write: ast.stmt, value: ast.expr | None) -> bool:
    """The write hands on a value only when it was given (`if num_experts is not None:
    envs.X.set(num_experts)`): an explicit setting of another source, such as a command-line option left
    at `None` unless passed, and the command line winning over the environment is the usual order."""
    if value is None:
        return False
    while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        value = value.args[0]  # `str(n)`, `int(n)`: the same value, converted
    if not isinstance(value, ast.Name | ast.Attribute):
        return False
    conds, _ = _tests(fn, write)
    return any(_given(c, ast.unparse(value)) for c in conds)


_LOGS = re.compile(r"^(?:\w*log\w*|warnings)\.(?:warn\w*|info|error|critical|debug\w*)$|^print$", re.I)


def _block(fn: ast.AST, write: ast.stmt) -> list[ast.stmt]:
    """The statements of the innermost block that holds `write` (its `if` branch, its function)."""
    for node in ast.walk(fn):
        for part in ("body", "orelse", "finalbody"):
            stmts = getattr(node, part, None)
            if isinstance(stmts, list) and any(st is write for st in stmts):
                return stmts
    return []


def _announced(fn: ast.AST, write: ast.stmt) -> bool:
    """The block that writes also logs (`logger.warning("Enable deterministic inference because ...")`):
    the operator is told the setting was changed, as for any override that logs that it applied."""
    return any(
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and _LOGS.match(ast.unparse(st.value.func))
        for st in _block(fn, write)
    )


def _option_parser(module: ast.Module, fn: ast.AST) -> bool:
    """`fn` is a command-line option's `type=` (or `action=`) callable: it runs when the user passed the
    option, with the user's value (`--mlc-llm-home` parsed by `_parse_mlc_llm_home`)."""
    name = getattr(fn, "name", None)
    return name is not None and any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
        and any(k.arg in ("type", "action") and ast.unparse(k.value) == name for k in node.keywords)
        for node in ast.walk(module)
    )


def _read_before(scope: ast.AST, write: ast.stmt, name: str) -> bool:
    """The function reads the variable before this write (`saved = os.environ.get("X")`): it knows the
    operator's value and sets its own on purpose, a save and restore, not an overwrite."""
    for st in _own_statements(scope):
        if st.lineno >= write.lineno or isinstance(st, ast.If | ast.While | ast.With | ast.For | ast.Try):
            continue  # compound statements: their own statements are visited one by one
        got = _written_name(st)
        if (got is None or got[0] != name) and _reads(st, name):
            return True
    return False


def _own_statements(scope: ast.AST) -> Iterable[ast.stmt]:
    """The statements of a module or function, not those of the functions and classes nested in it."""
    stack = list(getattr(scope, "body", []))
    while stack:
        st = stack.pop()
        yield st
        if isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for part in ("body", "orelse", "finalbody"):
            stack.extend(getattr(st, part, []) or [])
        for h in getattr(st, "handlers", []) or []:
            stack.extend(h.body)


def _receiver(st: ast.stmt) -> str:
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        f = st.value.func
        if isinstance(f, ast.Attribute) and f.attr == "set" and isinstance(f.value, ast.Attribute):
            return ast.unparse(f.value.value)
    return "os.environ"


def _exported(
    name: str,
    index: RepoIndex,
    write: tuple[str, int],
    added: dict[str, frozenset[int]],
    base_reads: set[str],
) -> EnvRead | None:
    """The read that makes `name` a setting the operator exports (cited as the evidence), or None: nothing
    but the write itself reads it, or every read is new in the change, no changed file read it at base
    and none reads it through the project's env registry (`envs.X.get()`: a declared, public setting),
    so it is a channel the change opens to its own workers: nobody exported it before."""
    reads = [e for e in index.env_reads(name) if not is_test_path(e.path) and (e.path, e.line) != write]
    if not reads:
        return None
    every = index.env_reads(name)
    declared = any(e.accessor.startswith("envs") for e in every)  # a registry entry is public
    if not declared and name not in base_reads and all(e.line in added.get(e.path, ()) for e in every):
        return None
    return reads[0]


def _left_alone(module: ast.Module, scope: ast.AST, st: ast.stmt, name: str, value: ast.expr | None) -> bool:
    """The write knows the operator's value or does not silently replace it (see the module doc)."""
    return (
        _reads(value, name)
        or _guarded(scope, st, name)
        or _set_when_given(scope, st, value)
        or _announced(scope, st)
        or _option_parser(module, scope)
        or _read_before(scope, st, name)
    )


def _base_writes(text: str | None) -> set[tuple[str, str]]:
    """(variable, value as unparsed) of every environment write of a base file."""
    module = python_tree(text) if text else None
    out: set[tuple[str, str]] = set()
    for node in ast.walk(module) if module is not None else ():
        got = _written_name(node) if isinstance(node, ast.stmt) else None
        if got is not None:
            out.add((got[0], ast.unparse(got[1]) if got[1] is not None else ""))
    return out


def env_overwrites(
    changed: Iterable[Side],
    heads: dict[str, str | None],
    index: RepoIndex,
    tree: RepoTree | None,
    bases: dict[str, str | None] | None = None,
) -> list[ExplicitWrite]:
    """The change's writes over an exported project setting (see the module doc)."""
    prefix = project_prefix(index)
    if prefix is None:
        return []
    out: list[ExplicitWrite] = []
    changed = list(changed)
    added = {s.path: s.added for s in changed}
    # What the changed files read at base (a read edited, moved or renamed by the change is no new read).
    base_reads = {e.name for s in changed if s.base_facts is not None for e in s.base_facts.env_reads}
    for s in changed:
        text = heads.get(s.path)
        if not s.path.endswith(".py") or is_test_path(s.path) or not s.added or not text:
            continue
        module = python_tree(text)
        if module is None:
            continue
        lines = text.split("\n")
        made_before = _base_writes((bases or {}).get(s.old_path))
        scopes: list[ast.AST] = [module]
        scopes += [n for n in ast.walk(module) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for scope in scopes:
            for st in _own_statements(scope):
                got = _written_name(st) if st.lineno in s.added else None
                if got is None:
                    continue
                name, value = got
                if not name.startswith(prefix + "_") or _left_alone(module, scope, st, name, value):
                    continue
                if (name, ast.unparse(value) if value is not None else "") in made_before:
                    continue
                source = _exported(name, index, (s.path, st.lineno), added, base_reads)
                if source is None:
                    continue
                said = _line(heads, tree, source.path, source.line)
                written = lines[st.lineno - 1].strip()
                out.append(
                    ExplicitWrite(
                        s.path, st.lineno, written, name, _receiver(st), "env", source.path, source.line, said
                    )
                )
    return sorted(out, key=lambda w: (w.path, w.line))


def _line(heads: dict[str, str | None], tree: RepoTree | None, path: str, line: int) -> str:
    """The source line as written (stripped), from the changed files or the head tree."""
    text = heads.get(path)
    if text is None and tree is not None:
        text = tree.read(path)
    lines = (text or "").split("\n")
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""
