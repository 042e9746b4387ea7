"""Environment holder objects used as bools (pure): tested for truth, or handed to a parameter its function
tests for truth.

`if envs.X:` on a holder (`X = EnvBool(...)`, read with `.get()` elsewhere) is always true: an object
without `__bool__`. `raise_error_or_warn(self, envs.X, ...)` where `def raise_error_or_warn(obj, strict,
...): if strict: raise ...` takes its `if strict:` branch whatever the operator sets. Found on the added
lines of the changed Python files, for holders shown to be objects (the code uses one as such,
`envs.X.get()`, or the registry declares it `X = EnvBool(...)` in a module whose holder class has a `get`
method and no `__bool__` / `__len__` / `__get__`). For a handed holder, the callee is a function defined
in a changed file or in the module the caller imports it from, the argument is bound to a parameter by
position or keyword, and that parameter is tested for truth in its body (`if p:`, `not p`, `p and ...`)
and never used as an object (`p.get()`: then the function expects the holder).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviewbot.analysis.pyast import Texts, python_tree
from reviewbot.analysis.sides import Side
from reviewbot.analysis.text import conjuncts
from reviewbot.lang.facts import EnvRead, Lang

__all__ = [
    "HolderArg",
    "HolderTruth",
    "ObjectProof",
    "holder_args",
    "holder_truth_tests",
    "imported_from",
    "registry_holder",
    "truthful",
]

# `f(a, ·, b)` / `f(x=·)`: the read is a whole argument of a call (`·` alone between `(`/`,` and `,`/`)`).
_CALL = re.compile(r"^(?P<callee>[A-Za-z_][\w.]*)\((?P<args>.*)\)$", re.S)


@dataclass(frozen=True)
class ObjectProof:
    """Where the holder shows it is an object: a read using it as one, or its registry declaration."""

    text: str  # as written: `envs.X.get()`, `X = EnvBool(True)`
    path: str
    line: int
    declared: bool = False  # the registry's declaration, not a use


@dataclass(frozen=True)
class HolderTruth:
    """A holder tested for truth itself: `if envs.X:` / `not envs.X` / `bool(envs.X)`."""

    read: EnvRead
    proof: ObjectProof
    text: str  # the test as code: `envs.X`, `not envs.X`, `bool(envs.X)`
    value: str  # what it always gives: "True" / "False"


@dataclass(frozen=True)
class HolderArg:
    read: EnvRead
    proof: ObjectProof
    callee: str  # the function's name as called
    param: str  # the parameter the holder is bound to
    def_path: str
    def_line: int  # the line of the parameter's truth test


def _split_args(args: str) -> list[str]:
    """Top-level arguments of a call's text (commas inside brackets and strings kept)."""
    out, depth, cur, quote = [], 0, "", ""
    for ch in args:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _bound_to(parse: str) -> tuple[str, int | str] | None:
    """(callee, position or keyword) when the read is one whole argument of a call."""
    m = _CALL.match(parse.strip())
    if m is None:
        return None
    for i, a in enumerate(_split_args(m.group("args"))):
        if a == "·":
            return m.group("callee"), i
        key, _, value = a.partition("=")
        if value.strip() == "·" and key.strip().isidentifier():
            return m.group("callee"), key.strip()
    return None


def _functions(trees: Iterable[tuple[str, ast.Module]], name: str) -> list[tuple[str, ast.FunctionDef]]:
    return [
        (path, n)
        for path, tree in trees
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.name == name
    ]


def _param(fn: ast.FunctionDef, at: int | str, method_call: bool) -> str | None:
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if isinstance(at, str):
        return at if at in names or at in [a.arg for a in fn.args.kwonlyargs] else None
    if method_call and names[:1] in (["self"], ["cls"]):
        at += 1  # `obj.f(x)` binds `x` to the parameter after `self`
    return names[at] if at < len(names) else None


def _truth_test_line(fn: ast.FunctionDef, param: str) -> int | None:
    """The first line that tests `param` for truth, when the body never uses it as an object."""
    tests: list[int] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == param:
            return None  # `p.get()`: the function expects the holder
        if isinstance(n, ast.If | ast.While | ast.IfExp | ast.Assert):
            test = n.test
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            test = n.operand
        elif isinstance(n, ast.BoolOp):
            tests += [n.lineno for v in n.values if isinstance(v, ast.Name) and v.id == param]
            continue
        else:
            continue
        if isinstance(test, ast.Name) and test.id == param:
            tests.append(n.lineno)
    return min(tests) if tests else None


# A holder class that defines its truth (`__bool__`, `__len__`) or is a descriptor (`__get__`: `envs.X`
# is then the value) is tested correctly: nothing about such a registry is reported.
_TRUTHFUL = re.compile(r"^[ \t]+def (?:__bool__|__len__|__get__)\(", re.M)


def truthful(registry_text: str) -> bool:
    return _TRUTHFUL.search(registry_text) is not None


# `    SGLANG_X = EnvBool(True)` in the registry class: the attribute is an instance of a holder class.
def _declared(name: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]+{re.escape(name)}\s*(?::[^=]+)?=\s*[A-Z]\w*\(", re.M)


def registry_holder(name: str, registry: str, text: str) -> ObjectProof | None:
    """`name`'s declaration in the registry module `text`, when it is an instance of a class that the
    module gives a `get` method (sglang's `EnvBool(...)`), not a value (vLLM's `envs.py` lambdas)."""
    if not re.search(r"^[ \t]+def get\(self\b", text, re.M) or truthful(text):
        return None
    m = _declared(name).search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    return ObjectProof(text.split("\n")[line - 1].strip(), registry, line, declared=True)


# `from pkg.utils import a, raise_or_warn`: where a called name comes from.
def imported_from(head: str, name: str) -> str | None:
    """The dotted module `name` is imported from in `head` (`from m import ..., name`), or None."""
    # One import statement: its names on one line, or inside its parentheses (`[^)]`), not the next lines.
    names = rf"(?:\([^)]*?|[\w \t,]*?)\b{re.escape(name)}\b(?!\s+as\b)"
    m = re.search(rf"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+{names}", head, re.M)
    return m.group(1) if m else None


def holder_args(
    changed: Iterable[Side],
    texts: Texts,
    object_proof: Callable[[EnvRead], ObjectProof | None],
    module: Callable[[str], tuple[str, str] | None],
) -> list[HolderArg]:
    """Holders passed on an added line to a parameter that a function tests for truth, the function
    defined in a changed file or in the module the caller imports it from (`module(dotted)` gives that
    module's path and text); `object_proof` shows the holder is an object (None: nothing shows it)."""
    sides = [s for s in changed if s.path.endswith(".py") and s.head_facts is not None]
    trees = [(p, t) for p, (_, head) in texts.items() if p.endswith(".py") and (t := python_tree(head))]
    out: list[HolderArg] = []
    for s in sides:
        assert s.head_facts is not None
        for e in s.head_facts.env_reads:
            bound = _bound_to(e.parse) if e.lang is Lang.PYTHON and e.line in s.added else None
            proof = object_proof(e) if bound is not None else None
            if bound is None or proof is None:
                continue
            callee, at = bound
            name = callee.rsplit(".", 1)[-1]
            dotted = (
                imported_from(texts.get(s.path, (None, ""))[1] or "", name) if "." not in callee else None
            )
            found = module(dotted) if dotted else None
            imported = [(found[0], t)] if found and (t := python_tree(found[1])) else []
            for path, fn in _functions([*trees, *imported], name):
                param = _param(fn, at, "." in callee)
                line = _truth_test_line(fn, param) if param else None
                if param and line is not None:
                    out.append(HolderArg(e, proof, callee, param, path, line))
                    break
    return out


def _truth_test(e: EnvRead, side: Side) -> tuple[str, str] | None:
    """(test as code, what it always gives) when the read tests the holder for truth. A bare read
    counts only as a whole conjunct of a guard on its line (`w = envs.X if c else 3` picks a value)."""
    spelled = e.accessor[:-1] + e.name
    parse = e.parse.replace(" ", "")
    if parse == "not·":
        return f"not {spelled}", "False"
    if parse == "bool(·)":
        return f"bool({spelled})", "True"
    if parse or side.head is None:
        return None
    tests = {g.text for c in side.head.clauses for g in c.guards if g.line == e.line}
    return (spelled, "True") if any(spelled in conjuncts(t) for t in tests) else None


def holder_truth_tests(
    changed: Iterable[Side], object_proof: Callable[[EnvRead], ObjectProof | None]
) -> list[HolderTruth]:
    """Holders tested for truth on an added line (an object without `__bool__`: always truthy)."""
    out: list[HolderTruth] = []
    for s in changed:
        for e in s.head_facts.env_reads if s.head_facts is not None else ():
            if e.lang is not Lang.PYTHON or e.line not in s.added or not e.accessor.endswith(".X"):
                continue
            test = _truth_test(e, s)
            proof = object_proof(e) if test is not None else None
            if test is not None and proof is not None:
                out.append(HolderTruth(e, proof, *test))
    return out
