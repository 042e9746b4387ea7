"""Writes a change adds that replace a value the user gave explicitly (pure, apart from searching the head tree).

A value is *given explicitly* when it comes from the command line or from a config the user wrote:

- Python: a key of a function's `**kwargs` (its caller's keyword), or of a parameter named `*_kwargs`
  that passes the caller's keyword options on as a dict (`mm_kwargs`), also after a copy
  (`mm_kwargs = dict(mm_kwargs)`, `{**mm_kwargs}`, `.copy()`); a key of a dict loaded from a config
  file in the function (`json.load`, `yaml.safe_load`, ...); an attribute of an argparse namespace
  (`args = parser.parse_args()`), of `vars(args)`, of a parameter named like a namespace or a config
  (`args`, `config_dict`, ...), or of `self` in a dataclass's `__post_init__` (`ServerArgs`, built from
  the parsed command line), when the key is a command-line option the repository registers
  (`add_argument("--x")`, `dest="x"`).
- C++: a field of the params struct a CLI parser filled (`gpt_params_parse(argc, argv, params)`) that a
  command-line handler of the repository sets (`params.n_ctx = std::stoi(argv[i])`).

A *write* is an added line after the value is given: `kwargs["x"] = ...`, `setattr(args, "x", ...)`,
`vars(args)["x"] = ...`, `args.x = ...` (namespace after parsing), `params.x = ...;`, or a call added after
the C++ parser that passes the params struct to a function writing its fields.

A write its function already made at the base, unguarded (same function, receiver and key), is not
the change's: an edit of the line for another reason keeps it as it was.

A write of the one value an option's command line can give (`True` over a `store_true` flag, `False`
over `store_false`) loses nothing the user gave and is not reported.

A write is *set-only-if-unset* (not reported) when a condition around it or an early exit before it
reads the key (`if args.x is None`, `if "x" not in kwargs`, `if not args.x`, `== parser default`, a
sentinel), or when the written value reads the key itself (a normalisation: `kwargs["x"] = int(kwargs["x"])`).

A `**kwargs` key no caller passes is the function's own, not the user's: when the head tree calls the
function by name and no call passes the key or forwards `**` (`keyword_callers`).
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
from reviewbot.analysis.writes.explicit_py import PyCandidate, py_candidates, unguarded_writes
from reviewbot.analysis.writes.keyword_callers import unpassed_keyword
from reviewbot.model.change import RepoTree

__all__ = ["ExplicitWrite", "explicit_writes"]


@dataclass(frozen=True)
class ExplicitWrite:
    path: str
    line: int
    text: str  # the overwriting line, as written (stripped)
    key: str  # the key / attribute / field (C++ call: the first field)
    receiver: str  # as written: kwargs, args, vars(args), params
    kind: str  # flag | kwargs | options | config | cli
    source_path: str
    source_line: int
    source_text: str  # where the user sets it, as written (stripped)
    fields: tuple[str, ...] = ()  # C++ call form: the fields the callee writes
    writes: tuple[tuple[str, int, str], ...] = ()  # C++ call form: the callee's writes


# ----------------------------------------------------------------------------------------- sources


# The candidates of the changed files, each with its side and head lines.
_PyFound = list[tuple[Side, list[str], PyCandidate]]
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


def _one_value(keys: set[str], texts: dict[str, str]) -> dict[str, str]:
    """Options whose command line can give one value only: `store_true` True, `store_false` False.
    Writing that value over the option loses nothing the user gave (`if self.expert_parallel:
    self.sequence_parallel = True` forces a switch on; it is no explicit value overwritten)."""
    found: dict[str, set[str]] = {}
    for path, text in sorted(texts.items()):
        tree = python_tree(text) if path.endswith(".py") and "store_" in text else None
        for n in ast.walk(tree) if tree is not None else ():
            if not (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "add_argument"
            ):
                continue
            action = next((k.value for k in n.keywords if k.arg == "action"), None)
            flags = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            named = next(
                (k.value.value for k in n.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)),
                None,
            )
            key = (
                named if isinstance(named, str) else next((dest(f) for f in flags if f.startswith("--")), "")
            )
            if (
                key in keys
                and isinstance(action, ast.Constant)
                and action.value in ("store_true", "store_false")
            ):
                found.setdefault(key, set()).add(str(action.value == "store_true"))
    return {k: v.pop() for k, v in found.items() if len(v) == 1}


def explicit_writes(
    changed: Iterable[Side],
    heads: dict[str, str | None],
    tree: RepoTree | None,
    bases: dict[str, str | None] | None = None,
) -> list[ExplicitWrite]:
    """The change's unguarded writes over explicitly given values (see the module doc); `bases` maps a
    head path to its base text: a Python write its function already made there, unguarded, is not the
    change's."""
    py, cpp = _candidates(changed, heads, tree)
    kept: dict[str, dict[tuple[str, str, str], set[str]]] = {}
    for p, t in (bases or {}).items():
        if p.endswith(".py") and t:
            for fn, recv, key, value in unguarded_writes(t):
                kept.setdefault(p, {}).setdefault((fn, recv, key), set()).add(value)
    py = [(s, lines, c) for s, lines, c in py if not _kept(c, kept.get(s.path, {}))]
    if any(c.kind == "kwargs" for _, _, c in py):
        own = {p: t for p, t in heads.items() if t}
        py = [
            (s, lines, c)
            for s, lines, c in py
            if c.kind != "kwargs" or not unpassed_keyword(c.function, c.key, tree, own)
        ]
    if not py and not cpp:
        return []
    keys = {c.key for _, _, c in py if c.kind == "flag"}
    fields = {f for _, _, c in cpp for f in c.fields}
    texts = _source_texts(heads, tree, keys, fields)
    flag_src = _py_flag_sources(keys, texts)
    handler_src = cpp_handler_sources(fields, texts)
    only = _one_value(keys, texts)
    py = [(s, lines, c) for s, lines, c in py if c.kind != "flag" or only.get(c.key) != c.value]
    return [*_py_writes(py, flag_src), *_cpp_writes(cpp, handler_src)]


def _kept(c: PyCandidate, kept: dict[tuple[str, str, str], set[str]]) -> bool:
    """The base's function already wrote this key unguarded: the line was edited for another reason
    (`pad_size(n)` renamed `padded(n)`), unless it now writes another constant (`True` -> `False`
    over a switch is a new overwrite of what the user gave)."""
    before = kept.get((c.function, c.receiver, c.key))
    if before is None:
        return False
    return c.value in before or not _constant(c.value)


def _constant(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


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
            py.extend((s, lines, c) for c in py_candidates(s, text))
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
