"""Names a change starts using without binding or importing them (pure, apart from reading the head tree).

Two sources, both compared before and after the change so that only what the change introduces counts:

- **pyflakes** (used as a library, never a home-made scope analysis) on both revisions of each changed
  Python file: its `UndefinedName` messages. A head message counts when the base has no message for the
  same name in the same enclosing function (lines move, so the pair name + function is what is compared)
  nor on a line the change removed (a use moved into another function with the bug it had: not new),
  and it sits on a line the change added, or on a line it kept while it removed the line that bound the
  name (an import deleted, or moved into one function while other functions still use it).
- **an env registry's attribute** (`envs.SGLANG_FOO` where `envs` is sglang's `environ.py` object or
  vllm's `envs.py` module): the attribute read on an added line whose name the registry module's text
  does not contain at all (no declaration, no dict key, no annotation). Only when the import that binds
  `envs` resolves to exactly one file of the head tree.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import cast

from reviewbot.analysis.main_block import self_test
from reviewbot.analysis.pyast import Texts, changed_python, python_tree
from reviewbot.analysis.sides import Side
from reviewbot.lang.common import is_log_callee
from reviewbot.lang.env import is_env_name
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree

__all__ = [
    "UndefinedName",
    "module_files",
    "undefined_names",
    "registry_attributes",
    "registry_path",
    "scopes",
    "function_at",
]


@dataclass(frozen=True)
class UndefinedName:
    path: str  # head path
    line: int
    name: str
    function: str  # qualified enclosing function; "" at module level (runs at import)
    text: str  # the source line, stripped
    registry: str = ""  # for an env registry attribute: the registry module's path
    also: tuple[int, ...] = ()  # other added lines of the same file that use the same undefined name
    # For a use the change kept (an unchanged line): the removed base line that bound the name (an import
    # or assignment the change deleted or moved into a narrower scope), as (base line, text).
    unbound_by: tuple[int, str] | None = None
    # Where the use runs (`use_reach`): "" on every pass through its function, "conditional" only on some
    # (in the body of an `if` / `while`, an `except` clause, a branch of a conditional expression), "message" only when building the
    # message of a failing `assert` or of a `raise` (the error is raised either way, as a `NameError`),
    # "self-test" in a source module's `test*` function only its `__main__` block calls.
    reach: str = ""
    # the use is an argument of a logging call (`logger.error(f"... {get_exception_traceback()}")`, on
    # any line of a call spread over several)
    in_log: bool = False


_CONDITIONAL = (ast.If, ast.While, ast.IfExp, ast.ExceptHandler, ast.Match)


@lru_cache(maxsize=8)
def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def use_reach(tree: ast.AST, name: str, lines: Iterable[int]) -> str:
    """Where the uses of `name` on `lines` run (see `UndefinedName.reach`): the most reachable of them."""
    lines = list(lines)  # read twice: here and by `self_test`
    parents, wanted = _parents(tree), set(lines)
    reaches = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name and node.lineno in wanted):
            continue
        reach, child, up = "", cast(ast.AST, node), parents.get(node)
        while up is not None and not isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            if (isinstance(up, ast.Assert) and child is up.msg) or isinstance(up, ast.Raise):
                reach = "message"
                break
            if isinstance(up, _CONDITIONAL) and child is not getattr(up, "test", None):
                reach = "conditional"  # a test itself runs every time
            child, up = up, parents.get(up)
        reaches.append(reach)
    for r in ("", "conditional", "message"):
        if r in reaches:
            return "self-test" if r != "message" and self_test(tree, lines) else r
    return ""


def _in_log_call(tree: ast.AST, name: str, line: int) -> bool:
    """The use of `name` on `line` sits in the arguments of a logging call (`is_log_callee`)."""
    parents = _parents(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name and node.lineno == line):
            continue
        up = parents.get(node)
        while up is not None and not isinstance(up, ast.stmt):
            if isinstance(up, ast.Call) and is_log_callee(ast.unparse(up.func)):
                return True
            up = parents.get(up)
    return False


def scopes(tree: ast.AST) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function of the module, outer ones first."""
    out: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((child.lineno, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def function_at(spans: list[tuple[int, int, str]], line: int) -> str:
    best = ""
    for start, end, name in spans:
        if start <= line <= end:
            best = name  # later spans are nested deeper
    return best


# A module that binds names at run time through its own namespace: `__G = locals(); for m in Kind:
# __G[m.name] = ...`, `globals()[name] = ...`, `globals().update(...)`.
_DYNAMIC_NAMESPACE = re.compile(
    r"\b(?:globals|locals)\(\)\s*(?:\[|\.update\(|$)|=\s*(?:globals|locals)\(\)", re.M
)


_STRINGS = re.compile(
    r"\b([A-Za-z]{0,2})(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')|(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')"
)


def _outside_strings(name: str, line: str) -> bool:
    """The name is written on the line outside string literals (a string annotation is never evaluated
    at run time; pyflakes still reads it). An f-string's fields are code: they count."""

    def blank(m: re.Match[str]) -> str:
        return m.group(0) if "f" in (m.group(1) or "").lower() else '""'

    return re.search(rf"(?<![\w.]){re.escape(name)}\b", _STRINGS.sub(blank, line)) is not None


def _pyflakes_undefined(tree: ast.Module, path: str) -> list[tuple[str, int]]:
    from pyflakes import checker, messages  # imported here: only Python changes need it

    found = checker.Checker(tree, filename=path)
    unevaluated = _unevaluated_annotations(tree)
    return [
        (str(m.message_args[0]), int(m.lineno))
        for m in found.messages
        if isinstance(m, messages.UndefinedName) and (int(m.lineno), int(m.col)) not in unevaluated
    ]


def _unevaluated_annotations(tree: ast.Module) -> set[tuple[int, int]]:
    """(line, column) of the names inside annotations Python never evaluates: every annotation of a
    module with `from __future__ import annotations` (PEP 563), and in any module the annotation of a
    local variable (`x: Foo = ...` in a function body). A name used only there raises nothing at run
    time (dev-scan sample 13: `Module` and `MoeRunnerConfig` in signatures under the future import)."""
    future = any(
        isinstance(n, ast.ImportFrom)
        and n.module == "__future__"
        and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    roots: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if future:
                args = node.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                roots += [a.annotation for a in every if a is not None and a.annotation is not None]
                roots += [node.returns] if node.returns is not None else []
            roots += [st.annotation for st in ast.walk(node) if isinstance(st, ast.AnnAssign)]
        elif future and isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    # A class with a base may read its fields' annotations when it is created (pydantic's `BaseModel`
    # resolves them, the future import or not), and so may a class defined in a function body.
    evaluated = {
        id(st.annotation)
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef) and c.bases
        for st in c.body
        if isinstance(st, ast.AnnAssign)
    }
    return {
        (n.lineno, n.col_offset)
        for r in roots
        if id(r) not in evaluated
        for n in ast.walk(r)
        if isinstance(n, ast.Name)
    }


def undefined_names(changed: Iterable[Side], texts: Texts) -> list[UndefinedName]:
    """Undefined names the change introduces on added lines; `texts` maps a head path to its
    (base text, head text)."""
    out: list[UndefinedName] = []
    changed = list(changed)
    seen: dict[str, list[tuple[str, int]]] = {}  # head path -> its base's undefined names, read once
    for s, base_text, head_text, head in changed_python(changed, texts):
        base = python_tree(base_text) if base_text is not None else ast.Module(body=[], type_ignores=[])
        if base is None:
            continue  # the base does not parse: nothing to compare with
        if _DYNAMIC_NAMESPACE.search(head_text):
            continue  # names bound through `globals()` / `locals()` (`__G[data.name] = ...`): unseen by pyflakes
        head_spans, base_spans = scopes(head), scopes(base)
        base_undefined = seen[s.path] = _pyflakes_undefined(base, s.old_path)
        before = {(n, function_at(base_spans, ln)) for n, ln in base_undefined}
        # A use the change removed at base, unbound there too: code moved with its bug, not a new one.
        moved = {n for n, ln in base_undefined if ln in s.removed}
        lines = head_text.split("\n")
        base_lines = (base_text or "").split("\n")
        first: dict[str, UndefinedName] = {}
        also: dict[str, list[int]] = {}
        for name, line in sorted(_pyflakes_undefined(head, s.path), key=lambda t: t[1]):
            fn = function_at(head_spans, line)
            if (name, fn) in before or name in moved:
                continue
            if line <= len(lines) and not _outside_strings(name, lines[line - 1]):
                continue  # only in a string (`-> "CausalLMBatch"`, `T.Buffer((n,), "float32")`): never run
            unbound_by = None if line in s.added else _removed_binding(name, s.removed, base_lines)
            if line not in s.added and unbound_by is None:
                continue  # a kept use counts only when the change took its binding away
            if name in first:  # one finding per name and file: the other uses are its evidence
                also.setdefault(name, []).append(line)
                continue
            text = lines[line - 1].strip() if line <= len(lines) else ""
            first[name] = UndefinedName(s.path, line, name, fn, text, unbound_by=unbound_by)
        for n, u in first.items():
            more = tuple(sorted(set(also.get(n, [])) - {u.line}))
            reach = use_reach(head, n, (u.line, *more))
            if reach == "self-test" and is_test_path(s.path):
                reach = ""  # in a test file the test runner collects `test*` functions itself
            out.append(replace(u, also=more, reach=reach, in_log=_in_log_call(head, n, u.line)))
    if out:
        elsewhere = _moved_with_bug(changed, texts, seen)
        out = [u for u in out if (u.name, _last(u.function)) not in elsewhere]
    return out


def _last(function: str) -> str:
    return function.rsplit(".", 1)[-1]


def _moved_with_bug(
    changed: list[Side], texts: Texts, seen: dict[str, list[tuple[str, int]]]
) -> set[tuple[str, str]]:
    """(name, function) of the uses that were already unbound at base on a line the change removed, in
    any changed Python file, a deleted one included: a function moved to another file with the bug it
    had (`torchtitan/utils.py` split into `tools/utils.py`, `pull_request_link` unbound in both)."""
    sides = {s.path: s for s in changed}  # `texts` is keyed by head path too
    found: set[tuple[str, str]] = set()
    for path, (base_text, head_text) in texts.items():
        side = sides.get(path)
        if not path.endswith(".py") or (head_text is not None and (side is None or not side.removed)):
            continue
        base = python_tree(base_text)
        if base is None:
            continue
        spans = scopes(base)
        undefined = seen[path] if path in seen else _pyflakes_undefined(base, path)
        for name, line in undefined:
            if head_text is None or (side is not None and line in side.removed):
                found.add((name, _last(function_at(spans, line))))
    return found


def _removed_binding(name: str, removed: frozenset[int], base_lines: list[str]) -> tuple[int, str] | None:
    """The first removed base line that binds `name` (an import naming it, or an assignment to it): pyflakes
    judges one file, so a use the change did not touch becomes undefined only through such a line."""
    n = re.escape(name)
    # `import a, name`, `from m import name`, a continuation line of a parenthesised import (`    name,`),
    # or an assignment `name = ...` / `name: T = ...`
    word = re.compile(
        rf"^\s*(?:(?:from\s+[\w.]+\s+)?import\b.*\b{n}\b|{n}\s*(?:as\s+\w+\s*)?,?\s*\)?\s*$|{n}\s*(?::[^=]*)?=(?!=))"
    )
    for line in sorted(removed):
        if 0 < line <= len(base_lines) and word.search(base_lines[line - 1]):
            return line, base_lines[line - 1].strip()
    return None


# `from sglang.srt.environ import envs`, `from vllm import envs`, `import vllm.envs as envs`.
_FROM_IMPORT = re.compile(
    r"^\s*from\s+([\w.]+)\s+import\s+(?:\(?\s*)?(?:[\w\s,]*,\s*)?envs\b(?!\s+as\b)", re.M
)
_IMPORT_AS = re.compile(r"^\s*import\s+([\w.]+\.envs)\s+as\s+envs\b", re.M)
_ENVS_ATTR = re.compile(r"(?<![\w.])envs\.([A-Z][A-Z0-9_]+)\b")


def module_files(dotted: str, paths: list[str]) -> list[str]:
    rel = dotted.replace(".", "/")
    wanted = (f"{rel}.py", f"{rel}/__init__.py")
    return [
        p for p in paths if p.endswith(wanted) and (p in wanted or p.endswith(tuple("/" + w for w in wanted)))
    ]


def registry_path(head_text: str, paths: list[str]) -> str | None:
    """The one file of the head tree that `envs` is bound to in this module, or None."""
    candidates: list[str] = []
    for m in _FROM_IMPORT.finditer(head_text):
        # `from pkg import envs`: the module `pkg/envs.py` if there is one, else the object in `pkg`.
        files = module_files(f"{m.group(1)}.envs", paths) or module_files(m.group(1), paths)
        candidates.extend(files)
    for m in _IMPORT_AS.finditer(head_text):
        candidates.extend(module_files(m.group(1), paths))
    unique = sorted(set(candidates))
    return unique[0] if len(unique) == 1 else None


def registry_attributes(changed: Iterable[Side], texts: Texts, tree: RepoTree | None) -> list[UndefinedName]:
    """`envs.X` reads on added lines whose registry module never names X."""
    if tree is None:
        return []
    out: list[UndefinedName] = []
    paths: list[str] | None = None
    registries: dict[str, str | None] = {}
    for s in changed:
        if not s.path.endswith(".py") or not s.added:
            continue
        base_text, head_text = texts.get(s.path, (None, None))
        if head_text is None or "envs." not in head_text:
            continue
        lines = head_text.split("\n")
        uses = [
            (n, m.group(1))
            for n in sorted(s.added)
            if n <= len(lines)
            for m in _ENVS_ATTR.finditer(lines[n - 1].split("#", 1)[0])
            if is_env_name(m.group(1))
        ]
        if not uses:
            continue
        if paths is None:
            paths = tree.paths()
        registry = registry_path(head_text, paths)
        if registry is None or registry == s.path:
            continue
        if registry not in registries:
            registries[registry] = tree.read(registry)
        body = registries[registry]
        if not body:
            continue
        spans = scopes(python_tree(head_text) or ast.Module(body=[], type_ignores=[]))
        old = set(_ENVS_ATTR.findall(base_text or ""))
        done: set[str] = set()
        for line, name in uses:
            if name in done or name in old or re.search(rf"\b{re.escape(name)}\b", body):
                continue
            done.add(name)
            out.append(
                UndefinedName(
                    s.path, line, f"envs.{name}", function_at(spans, line), lines[line - 1].strip(), registry
                )
            )
    return out
