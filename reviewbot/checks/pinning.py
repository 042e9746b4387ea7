"""The truth-table rows a focused test must pin for one derivation (missing-tests' prose rows).

Pure: a changed derivation and the repository index in, typed rows out. Every value has a spelling in
both languages; a value the index cannot name (the member of an enum it has not seen, a value other than
`None`) becomes a named placeholder that says what it stands for. The test code reviewbot offers is the
executed truth table's own generated test (execution.table_tests, execution.cpp_harness), never a sketch
from these rows: a sketch nobody ran may call a helper the project does not have.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.checks.util import identifier
from reviewbot.lang.facts import Lang
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import Atom, literals

__all__ = [
    "Value",
    "Column",
    "PinRow",
    "PinTable",
    "pin_table",
    "column_name",
    "in_source_order",
    "split_comparison",
    "constant",
]


@dataclass(frozen=True)
class Value:
    py: str  # Python spelling
    cpp: str  # C++ spelling
    text: str  # for sentences
    kind: str  # bool | none | int | float | str | enum | const | placeholder | expr
    note: str = ""  # placeholders: what to fill in


@dataclass(frozen=True)
class Column:
    name: str  # a unique identifier
    label: str  # as shown in sentences: `style`, `need_rope_kv_cache (input)`
    cpp_type: str


@dataclass(frozen=True)
class PinRow:
    inputs: tuple[Value, ...]
    expected: Value
    kept: bool  # the derivation leaves the input as it is


@dataclass(frozen=True)
class PinTable:
    function: str  # qualified name of the derivation's function ("" at module level)
    field: str
    lang: Lang
    columns: tuple[Column, ...]
    rows: tuple[PinRow, ...]


_NUMBER = re.compile(r"^-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[fFlLuU]*$")
_ENUM = re.compile(r"^[A-Z]\w*(?:\.\w+)+$")
_NAMED_CONST = re.compile(r"^[A-Z][A-Z0-9_]*$")
_OPS = (" not in ", " is not ", " == ", " != ", " <= ", " >= ", " < ", " > ", " in ", " is ")
# Last components that say little on their own: `rope_config.style` is named `rope_style`.
_GENERIC = frozenset({"style", "type", "mode", "kind", "method", "backend", "policy", "strategy", "level"})


def split_comparison(text: str) -> tuple[str, str, str] | None:
    """`left op right` of a canonical comparison atom (operands hold no spaces outside string literals)."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote and text[i - 1] != "\\" else quote
            continue
        if ch in "\"'":
            quote = ch
            continue
        if ch == " ":
            for op in _OPS:
                if text.startswith(op, i):
                    return text[:i], op.strip(), text[i + len(op) :]
    return None


def _number(text: str) -> float | int | None:
    t = text.rstrip("fFlLuU")
    try:
        return int(t)
    except ValueError:
        try:
            return float(t)
        except ValueError:
            return None


def constant(text: str) -> Value | None:
    """A literal or named constant as a Value; None for an input (a field, a call, an expression)."""
    if text in ("True", "False"):
        return Value(text, text.lower(), text, "bool")
    if text == "None":
        return Value("None", "nullptr", "None", "none")
    if _NUMBER.match(text):
        n = _number(text)
        kind = "int" if isinstance(n, int) else "float"
        return Value(repr(n), repr(n), repr(n), kind)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        s = text[1:-1]
        return Value(repr(s), json.dumps(s), repr(s), "str")
    if _ENUM.match(text):
        return Value(text, text.replace(".", "::"), text, "enum")
    if _NAMED_CONST.match(text):
        return Value(text, text, text, "const")
    return None


def _placeholder(name: str, note: str) -> Value:
    return Value(name, name, note, "placeholder", note)


def _other(v: Value, index: RepoIndex, col: str, default: Value | None) -> Value:
    """A value different from `v`, concrete where the index knows one."""
    if v.kind == "bool":
        return constant("False" if v.py == "True" else "True") or v
    if v.kind in ("int", "float"):
        n = _number(v.py)
        return constant(repr((n or 0) + 1)) or v
    if v.kind == "str":
        s = json.loads(v.cpp)
        return constant(repr(s + "_other" if s else "other")) or v
    if v.kind == "enum":
        enum, member = v.py.rsplit(".", 1)
        alt = next((m for m in index.enum_members(enum.rsplit(".", 1)[-1]) if m != member), None)
        if alt is not None:
            return constant(f"{enum}.{alt}") or v
        return _placeholder(f"OTHER_{col.upper()}", f"any {enum.rsplit('.', 1)[-1]} other than {member}")
    if v.kind == "none":
        if default is not None and default.kind not in ("none", "placeholder", "expr"):
            return default
        return _placeholder(f"SOME_{col.upper()}", f"any {col} that is not None")
    return _placeholder(f"NOT_{col.upper()}", f"any {col} other than {v.text}")


def column_name(path: str) -> str:
    call = path.endswith(")")
    parts = [p for p in re.sub(r"\(.*\)$", "", path).split(".") if p]
    if not parts:
        return identifier(path)
    name = parts[-1]
    if call and len(parts) >= 2:  # `cfg.items.empty()` -> `items_empty`
        name = f"{parts[-2]}_{name}"
    elif name in _GENERIC and len(parts) >= 2:
        # `rope_config.style` -> `rope_style`; `cfg.style` stays `style` (the receiver says nothing).
        parent = re.sub(r"_?(configs?|cfg|conf|params?|args)$", "", parts[-2])
        if parent:
            name = f"{parent}_{name}"
    return identifier(name)


def _default_of(index: RepoIndex, field: str) -> tuple[Value | None, str]:
    """The field's constant default (if one owner declares it) and that owner."""
    found = sorted({(d.owner, d.value) for d in index.defaults(field)})
    if len(found) != 1:
        return None, ""
    owner, value = found[0]
    return constant(value), owner


def _cpp_type(values: tuple[Value, ...], field: str, index: RepoIndex) -> str:
    """The column's C++ type: the declared member's type when one owner declares it, else the type
    of its concrete values (`nullptr` makes it a pointer)."""
    _, owner = _default_of(index, field)
    concrete = [v for v in values if v.kind not in ("placeholder", "expr", "const")]
    v = next((x for x in concrete if x.kind == "none"), concrete[0] if concrete else values[0])
    if owner:
        return f"decltype({owner}::{field})"
    return {
        "bool": "bool",
        "int": "int64_t",
        "float": "double",
        "str": "std::string",
        "none": "const void*",
    }.get(v.kind, v.cpp.rsplit("::", 1)[0] if v.kind == "enum" else "int64_t")


def _bump(v: Value, by: int) -> Value:
    """`v + by` for a number or a named constant (`LIMIT + 1`)."""
    if v.kind in ("int", "float"):
        return constant(repr((_number(v.py) or 0) + by)) or v
    sign = "+" if by > 0 else "-"
    text = f"{v.py} {sign} {abs(by)}"
    return Value(text, text, text, "expr")


def _atom_column(atom: Atom, index: RepoIndex) -> tuple[str, str, Value, Value]:
    """(column name, field, value that satisfies the atom, value that does not)."""
    parts = split_comparison(atom.text)
    if parts is not None:
        left, op, right = parts
        lc, rc = constant(left), constant(right)
        one_constant = lc if rc is None else rc if lc is None else None
        if one_constant is not None and op not in ("in", "not in"):
            const = one_constant
            field_side = right if lc is not None else left
            if lc is not None:  # `8 < n` reads as `n > 8`
                op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            col = column_name(field_side)
            field = field_side.rsplit(".", 1)[-1]
            default, _ = _default_of(index, field)
            if op in ("==", "is"):
                return col, field, const, _other(const, index, col, default)
            if op in ("!=", "is not"):
                return col, field, _other(const, index, col, default), const
            if const.kind in ("int", "float", "const"):
                yes, no = {
                    ">": (_bump(const, 1), const),
                    ">=": (const, _bump(const, -1)),
                    "<": (_bump(const, -1), const),
                    "<=": (const, _bump(const, 1)),
                }[op]
                return col, field, yes, no
        if op in ("in", "not in") and rc is None and right[:1] in "([{":
            col = column_name(left)
            first = right[1:-1].split(",", 1)[0]
            member = constant(first) or _placeholder(f"IN_{col.upper()}", f"a {col} listed in {right}")
            outside = _placeholder(f"NOT_IN_{col.upper()}", f"a {col} not listed in {right}")
            return (col, left, member, outside) if op == "in" else (col, left, outside, member)
    col = column_name(atom.text)
    return (
        col,
        atom.text.rsplit(".", 1)[-1],
        Value("True", "true", "True", "bool"),
        Value("False", "false", "False", "bool"),
    )


def in_source_order(lits: list[tuple[Atom, bool]], written: str) -> list[tuple[Atom, bool]]:
    """The guard's literals in the order the condition is written (the canonical order is sorted)."""

    def position(item: tuple[Atom, bool]) -> tuple[int, str]:
        leaves = [m.group(0).rsplit(".", 1)[-1] for m in re.finditer(r"[A-Za-z_][\w.]*", item[0].text)]
        found = [m.start() for leaf in leaves for m in re.finditer(rf"\b{re.escape(leaf)}\b", written)]
        return (min(found) if found else len(written), item[0].text)

    return sorted(lits, key=position)


def _unique(name: str, taken: set[str]) -> str:
    out, n = name, 2
    while out in taken:
        out, n = f"{name}_{n}", n + 1
    taken.add(out)
    return out


def pin_table(d: ChangedDerivation, index: RepoIndex) -> PinTable:
    """The rows a focused test must pin: the row where the rule fires, each row where exactly one guard
    atom is flipped (the input is kept), and the row where the input already has the forced value."""
    a = d.head
    taken = {"expected", "config", "pytest", "row", "rows"}
    cols: list[Column] = []
    sat: list[Value] = []
    unsat: list[Value] = []
    for atom, want in in_source_order(literals(a.guard), a.guard_text or a.text):
        col, field, yes, no = _atom_column(atom, index)
        if not want:
            yes, no = no, yes
        cols.append(Column(_unique(col, taken), col, _cpp_type((yes, no), field, index)))
        sat.append(yes)
        unsat.append(no)
    forced = constant(a.value) or _placeholder(
        f"DERIVED_{a.field.upper()}", f"the value of `{a.value}` for this row"
    )
    default, _ = _default_of(index, a.field)
    if forced.kind == "placeholder":
        keep = default or _placeholder(f"INPUT_{a.field.upper()}", f"an input {a.field}")
    else:
        keep = _other(forced, index, a.field, default)
    cols.append(
        Column(
            _unique(f"{a.field}_in", taken), f"{a.field} (input)", _cpp_type((keep, forced), a.field, index)
        )
    )
    rows = [PinRow((*sat, keep), forced, False)]
    for i in range(len(sat)):
        flipped = list(sat)
        flipped[i] = unsat[i]
        rows.append(PinRow((*flipped, keep), keep, True))
    if forced.kind != "placeholder":
        rows.append(PinRow((*sat, forced), forced, False))
    return PinTable(a.function or "", a.field, a.lang, tuple(cols), tuple(rows))
