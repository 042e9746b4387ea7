"""Defaults a change alters, with the names a user reads them under (pure, apart from reading the tree).

Each record is one value the change replaces (the base had another literal at the same place) and the
names documentation spells it with:

- a C++ member initialiser (`int32_t n_batch = 2048;`): the long flags of the parse branches that set
  the field to their argument (`arg == "--batch-size"` -> `params.n_batch = std::stoi(argv[i])`), read
  in the changed sources and in the head tree's C++ sources that name the field;
- a Python module constant `X_DEFAULT` next to `X = "key"` (DeepSpeed's config constants): the key;
- an argparse `add_argument("--flag", default=...)`: its long flags;
- a Python class or dataclass field `x_y: T = v`: the generated flag `--x-y`.

A Python flag that more than one Python file of the head tree registers (`"--batch-size"` in every
benchmark script) names no one default: documents of it are about any of those scripts.

Bare C++ field names and bare Python field names are no names here: documents use them for other
things (request parameters, other configs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.defaults.cli_help import Branch, branches
from reviewbot.analysis.defaults.docs import norm_default
from reviewbot.analysis.defaults.stale_help import cpp_field_values, value_kind
from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side
from reviewbot.model.change import RepoTree, read_many

__all__ = ["NamedDefault", "named_defaults"]

_CPP_SOURCES = ("*.cpp", "*.cc", "*.cxx")
_MAX_SOURCES = 40


@dataclass(frozen=True)
class NamedDefault:
    field: str  # the field, key or option destination
    names: tuple[str, ...]  # flags (`--batch-size`) and config keys (`initial_scale_power`)
    old: str  # as written
    new: str
    path: str  # where the new value is set
    line: int
    python_flags: bool = False  # the names are flags of a Python parser (one script's among many?)


def _altered(old: str, new: str) -> bool:
    """Another value of the same kind, one a text can state (a number, a bool, a string): `"f16"` ->
    `GGML_TYPE_F16` respells the default, it does not replace it."""
    kind = value_kind(old)
    return kind != "" and value_kind(new) == kind and norm_default(old) != norm_default(new)


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and not isinstance(node.value, bytes)


def _constants(tree: ast.Module) -> dict[str, tuple[ast.expr, int]]:
    out: dict[str, tuple[ast.expr, int]] = {}
    for st in tree.body:
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None
        if isinstance(st, ast.Assign) and isinstance(target, ast.Name) and _literal(st.value):
            out[target.id] = (st.value, st.lineno)
    return out


def _options(tree: ast.Module) -> dict[str, tuple[tuple[str, ...], ast.expr, range]]:
    """Long flags and literal default of each `add_argument` call, by its longest flag."""
    out: dict[str, tuple[tuple[str, ...], ast.expr, range]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument":
            continue
        flags = tuple(
            a.value
            for a in node.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")
        )
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if flags and default is not None and _literal(default):
            out[max(flags, key=len)] = (
                flags,
                default,
                range(node.lineno, (node.end_lineno or node.lineno) + 1),
            )
    return out


def _keyed_constants(s: Side, bt: ast.Module, ht: ast.Module) -> Iterable[NamedDefault]:
    """`X_DEFAULT = v` changed, with `X = "config_key"` beside it."""
    before, after = _constants(bt), _constants(ht)
    for name, (value, line) in after.items():
        key = after.get(name.removesuffix("_DEFAULT"))
        was = before.get(name)
        if not name.endswith("_DEFAULT") or key is None or was is None or line not in s.added:
            continue
        k = key[0]
        if isinstance(k, ast.Constant) and isinstance(k.value, str) and ("_" in k.value or "-" in k.value):
            old, new = ast.unparse(was[0]), ast.unparse(value)
            if _altered(old, new):
                yield NamedDefault(k.value, (k.value,), old, new, s.path, line)


def _argparse(s: Side, bt: ast.Module, ht: ast.Module) -> Iterable[NamedDefault]:
    base_opts = _options(bt)
    for flag, (flags, value, lines) in _options(ht).items():
        was_opt = base_opts.get(flag)
        if was_opt is None or not s.added.intersection(lines):
            continue
        old, new = ast.unparse(was_opt[1]), ast.unparse(value)
        if _altered(old, new):
            yield NamedDefault(flag.lstrip("-").replace("-", "_"), flags, old, new, s.path, lines[0], True)


def _fields(s: Side) -> Iterable[NamedDefault]:
    """Class and dataclass fields, under the flag a parser generates from them (`--x-y`)."""
    base_fields = {(d.owner, d.field): d.default for d in (s.base_facts.fields if s.base_facts else ())}
    for d in s.head_facts.fields if s.head_facts else ():
        old_field = base_fields.get((d.owner, d.field))
        if d.default is None or old_field is None or d.line not in s.added or "_" not in d.field:
            continue
        if _altered(old_field, d.default):
            flag = "--" + d.field.replace("_", "-")
            yield NamedDefault(d.field, (flag,), old_field, d.default, s.path, d.line, True)


def _python(s: Side, base: str, head: str) -> list[NamedDefault]:
    bt, ht = python_tree(base), python_tree(head)
    if bt is None or ht is None:
        return []
    return [*_keyed_constants(s, bt, ht), *_argparse(s, bt, ht), *_fields(s)]


def _parsers(
    fields: set[str],
    sides: list[Side],
    texts: dict[str, tuple[str | None, str | None]],
    tree: RepoTree | None,
) -> list[Branch]:
    """The parse branches of the changed C++ sources and of the head tree's sources naming `fields`."""
    heads = {s.path: texts.get(s.path, (None, None))[1] for s in sides}
    grep = getattr(tree, "grep", None)
    if tree is not None and callable(grep):
        found = grep(sorted(fields), _CPP_SOURCES)
        more = sorted(p for p in (found or ()) if p not in heads)[:_MAX_SOURCES]
        heads.update(read_many(tree, more))
    out: list[Branch] = []
    for path, text in heads.items():
        if text and path.endswith((".cpp", ".cc", ".cxx")) and any(f in text for f in fields):
            out.extend(b for b in branches(text) if b.field in fields and b.direct)
    return out


def _registers(text: str | None, quoted: list[str]) -> bool:
    """`text` registers one of the quoted flags: an `add_argument(` call on its line or the line above
    (a test's command line that passes it registers nothing)."""
    lines = (text or "").split("\n")
    return any(
        any(q in line for q in quoted) and "add_argument(" in (lines[i - 1] if i else "") + line
        for i, line in enumerate(lines)
    )


def _registered_once(m: NamedDefault, tree: RepoTree | None) -> bool:
    """No other Python file of the head tree than the changed one registers the option's flags."""
    grep = getattr(tree, "grep", None)
    if tree is None or not callable(grep):
        return False
    found = grep(sorted(n.lstrip("-") for n in m.names), ("*.py",))
    if found is None:
        return False
    others = sorted(p for p in found if p != m.path)[:_MAX_SOURCES]
    quoted = [f'"{n}"' for n in m.names] + [f"'{n}'" for n in m.names]
    return not any(_registers(text, quoted) for text in read_many(tree, others).values())


def named_defaults(
    changed: Iterable[Side], texts: dict[str, tuple[str | None, str | None]], tree: RepoTree | None
) -> list[NamedDefault]:
    """The defaults the change alters and the names documents read them under (see the module doc)."""
    sides = list(changed)
    out: list[NamedDefault] = []
    for s in sides:
        base, head = texts.get(s.path, (None, None))
        if s.path.endswith(".py") and base and head:
            out.extend(_python(s, base, head))
    out = [m for m in out if not m.python_flags or _registered_once(m, tree)]
    moved = [
        fv
        for values in cpp_field_values(sides).values()
        for fv in values
        if fv.added and fv.old is not None and _altered(fv.old, fv.value)
    ]
    if not moved:
        return out
    parsers = _parsers({fv.field for fv in moved}, sides, texts, tree)
    for fv in moved:
        flags = tuple(sorted({f for b in parsers if b.field == fv.field for f in b.flags}))
        if flags:
            out.append(NamedDefault(fv.field, flags, fv.old or "", fv.value, fv.path, fv.line))
    return out
