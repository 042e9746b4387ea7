"""C++ help texts that state a default the field they describe does not have (pure).

A usage line of a hand-written parser that hard-codes its default (`"(default: json)"`, `"(default: %s)",
"f32"`; see `analysis.defaults.cli_help`) is tied to the field its option sets (the parse branch of the
same file) and compared with that field's member initialiser (`std::string reduce_type = "f16";`), read
in the changed files first and in the head index otherwise. It is stale when it states another value:

- for an option that sets the field to its argument (`params.reduce_type = argv[i]`), another value than
  the initialiser (numbers as numbers, `0`/`1` as a bool's `false`/`true`);
- for an option that maps words to values (`"json"` -> `log_json = true`, `"text"` -> `false`), another
  word than the one mapped to the initialiser.

Only what the change touches: the help line is added (and not merely moved within its file), or the
initialiser is; when only the initialiser is and it had a default before, the help must state that old
value (it was right until this change). Not judged: a field whose initialisers disagree or are computed,
a negative or NaN initialiser (a sentinel the program replaces: auto, from the model), an empty string
default, words that are no value (`none`, `auto`, `same`, `unused`, ...), a word for a
string field that the file never spells as a literal, and options that set several fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.defaults.cli_help import Branch, HelpDefault, branches, help_defaults
from reviewbot.analysis.defaults.docs import StaleDefault, norm_default
from reviewbot.analysis.sides import Side
from reviewbot.lang.index import RepoIndex

__all__ = [
    "shown_value",
    "FieldValue",
    "cpp_field_values",
    "field_value",
    "stale_help_defaults",
    "same_value",
    "value_kind",
]

_CPP = re.compile(r"\.(?:cc|cpp|cxx|c\+\+|cu)$")
# Words a help text puts where a value would be that describe the default instead of stating it.
_NO_VALUE = frozenset(
    {"none", "null", "empty", "unset", "unused", "auto", "same", "disabled", "enabled", "off", "on"}
    | {"default", "model", "loaded", "read", "from", "template", "value", "n/a", "na", "all", "any"}
)
_BOOLS = {"true": "true", "false": "false", "1.0": "true", "0.0": "false"}


@dataclass(frozen=True)
class FieldValue:
    field: str
    value: str  # canonical default in the head
    old: str | None  # in the base; None: the field (or its default) is new
    path: str
    line: int
    added: bool  # the change wrote the initialiser's line


def cpp_field_values(changed: Iterable[Side]) -> dict[str, list[FieldValue]]:
    """Member initialisers of the changed files' heads, by field name (Python fields left out)."""
    out: dict[str, list[FieldValue]] = {}
    for s in changed:
        if s.head_facts is None or s.path.endswith(".py"):
            continue
        base = {(d.owner, d.field): d.default for d in (s.base_facts.fields if s.base_facts else ())}
        for d in s.head_facts.fields:
            if d.default is None:
                continue
            fv = FieldValue(
                d.field, d.default, base.get((d.owner, d.field)), s.path, d.line, d.line in s.added
            )
            out.setdefault(d.field, []).append(fv)
    return out


def field_value(name: str, changed: dict[str, list[FieldValue]], index: RepoIndex) -> FieldValue | None:
    """The one default of field `name`: the changed files' initialisers, else the head index's; None
    when there is none or they disagree."""
    found = changed.get(name) or [
        FieldValue(d.field, d.value, None, d.path, d.line, False)
        for d in index.defaults(name)
        if not d.path.endswith(".py")
    ]
    if not found or len({norm_default(f.value) for f in found}) != 1:
        return None
    return next((f for f in found if f.added), found[0])


def value_kind(value: str) -> str:
    """`bool`, `number`, `string` (a non-empty literal) or "" (anything else: computed, empty, a name,
    `NAN`: a not-set sentinel)."""
    v = norm_default(value)
    if v in ("true", "false"):
        return "bool"
    if re.fullmatch(r"-?[\d.]+(?:e[-+]?\d+)?", v):
        return "number"
    if re.fullmatch(r"\"[^\"]+\"|'[^']+'", value.strip()):
        return "string"
    return ""


def shown_value(value: str) -> str:
    """A default as a user writes it: no quotes, no C++ literal suffix (`0.75f` -> `0.75`)."""
    v = value.strip().strip("\"'")
    return re.sub(r"(?<=\d)[fFlLuU]+$", "", v) if value_kind(value) == "number" else v


def same_value(stated: str, value: str) -> bool | None:
    """Whether `stated` (a help text's word) is `value` (an initialiser); None when the word cannot be
    compared with it (another kind of value, or a word that is no value)."""
    kind, said = value_kind(value), norm_default(stated)
    if said in _NO_VALUE or not kind:
        return None
    if kind == "bool":
        return _BOOLS.get(said, "") == norm_default(value) if said in _BOOLS else None
    if kind == "number":
        return said == norm_default(value) if value_kind(stated) == "number" else None
    return said == norm_default(value) if re.fullmatch(r"[\w.+-]+", stated) else None


def _meant(b: Branch, value: str) -> str | None:
    """The argument text that gives the field `value`: itself for a direct option, else the one word
    mapped to it."""
    if b.direct:
        return value
    words = {w for w, v in b.words if norm_default(v) == norm_default(value)}
    return words.pop() if len(words) == 1 else None


def _judge(h: HelpDefault, b: Branch, fv: FieldValue, text: str, touched: bool) -> bool:
    """Whether the help text states another default than the field's (see the module doc)."""
    if value_kind(fv.value) == "number" and norm_default(fv.value).startswith("-"):
        return False  # -1 and the like: a sentinel the program replaces (auto, from the model)
    if b.direct:
        if value_kind(fv.value) == "string" and not h.from_arg and f'"{h.stated}"' not in text:
            return False
        same = same_value(h.stated, fv.value)
        before = same_value(h.stated, fv.old) if fv.old is not None else None
    else:
        meant, was = _meant(b, fv.value), _meant(b, fv.old) if fv.old is not None else None
        if h.stated not in {w for w, _ in b.words} or meant is None:
            return False
        same, before = h.stated == meant, (h.stated == was if was is not None else None)
    # An untouched help text next to a changed initialiser is stale only if it was right before.
    return same is False and (touched or fv.old is None or before is True)


def stale_help_defaults(
    changed: Iterable[Side], texts: dict[str, tuple[str | None, str | None]], index: RepoIndex
) -> list[StaleDefault]:
    """The help texts of the changed C++ sources that state another default than their field's."""
    sides = list(changed)
    values = cpp_field_values(sides)
    out: list[StaleDefault] = []
    for s in sides:
        base_text, head_text = texts.get(s.path, (None, None))
        if not head_text or not _CPP.search(s.path):
            continue
        by_flag: dict[str, list[Branch]] = {}
        for b in branches(head_text):
            for f in b.flags:
                by_flag.setdefault(f, []).append(b)
        moved = {ln.strip() for ln in (base_text or "").split("\n")}
        for h in help_defaults(head_text):
            found = {b.field: b for f in h.flags for b in by_flag.get(f, [])}
            if len(found) != 1:
                continue
            (b,) = found.values()
            fv = field_value(b.field, values, index)
            touched = h.line in s.added and h.text not in moved
            if fv is None or not (touched or fv.added) or (not touched and fv.old is None):
                continue
            if not _judge(h, b, fv, head_text, touched):
                continue
            flag = max(h.flags, key=len)
            meant = _meant(b, fv.value) or fv.value
            out.append(
                StaleDefault(
                    s.path,
                    fv.line,
                    flag,
                    "help",
                    h.stated,
                    shown_value(_meant(b, fv.old) or fv.old) if fv.old is not None else "(not set)",
                    shown_value(meant),
                    _line(texts, fv.path, fv.line),
                    h.line,
                    h.text,
                    value_path=fv.path,
                    field=flag,
                )
            )
    return out


def _line(texts: dict[str, tuple[str | None, str | None]], path: str, line: int) -> str:
    head = texts.get(path, (None, None))[1] or ""
    lines = head.split("\n")
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""
