"""Defaults written differently that give deployments the same behaviour (pure), for
`analysis.defaults.changes`: what looks like a flipped default but is a type change, a class rename,
a `None` made its type's empty value, or a runtime record's initial value.
"""

from __future__ import annotations

import re

from reviewbot.analysis.envs.parse import same_literal
from reviewbot.analysis.sides import Side

__all__ = ["runtime_record", "scalar", "silent_reason"]

_SCALAR = re.compile(
    r"""-?[\d.]+(?:[eE][-+]?\d+)?[fFlLuU]*|True|False|None|"[^"]*"|'[^']*'|[A-Z]\w*(?:\.\w+)+"""
)


def scalar(value: str) -> bool:
    """A literal a deployment would set: a number, a bool, a string, None, an enum member."""
    return _SCALAR.fullmatch(value.strip()) is not None


def _plain(value: str) -> bool:
    """`scalar` without `None`: `None` -> `QuantConfig()` is a feature switched on, not a type change."""
    return scalar(value) and value.strip() != "None"


_STRING = re.compile(r"""^(?:"([^"]*)"|'([^']*)')$""")
_MEMBER = re.compile(r"^[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*$")


def same_retyped(a: str, b: str) -> bool:
    """A string default and the enum member that replaced it, naming the same value (`"f16"` and
    `GGML_TYPE_F16`, `"auto"` and `Mode.AUTO`): the field's type changed, not its value."""
    for text, member in ((a, b), (b, a)):
        m = _STRING.match(text.strip())
        if m is None or _MEMBER.match(member.strip()) is None:
            continue
        word = (m.group(1) if m.group(1) is not None else m.group(2)).strip().lower()
        last = re.split(r"\.|::", member.strip())[-1].lower()
        if word and re.fullmatch(r"\w+", word) and (last == word or last.endswith("_" + word)):
            return True
    return False


# An object built by its class's constructor (`Metric(/*warmed_up=*/true)`, `TimeCost{}`).
_CONSTRUCTED = re.compile(r"^[A-Z]\w*(?:(?:::|\.)\w+)*\s*[({]")


def _retyped(was: str, now: str) -> bool:
    """An object default replaced by a plain number or string (or back): the field changed type
    (`Metric sum_time = Metric(true);` -> `double sum_time = 0;`), not the value deployments get."""
    return any(_CONSTRUCTED.match(a.strip()) is not None and _plain(b) for a, b in ((was, now), (now, was)))


_CALL = re.compile(r"^([A-Z]\w*)\s*(\(.*\)|\{.*\})$", re.S)


def _class_renamed(was: str, now: str, sides: list[Side]) -> bool:
    """`Float8Dense()` -> `Float8Linear()` where the change renamed the class (the old name declared at
    base, gone from the head; the new one declared only in the head): the same object, renamed."""
    old, new = _CALL.match(was.strip()), _CALL.match(now.strip())
    if old is None or new is None or old.group(2) != new.group(2):
        return False

    def declared(name: str, head: bool) -> bool:
        return any(
            o.name == name
            for s in sides
            for f in [s.head_facts if head else s.base_facts]
            if f
            for o in f.owners
        )

    return declared(old.group(1), False) and not declared(old.group(1), True) and declared(new.group(1), True)


# Records a running engine fills per step or per batch (`FlashAttentionMetadata.max_seq_len_q`,
# `EngineMetrics`, `ForwardBatch`): their field defaults are initial values, not settings.
_RUNTIME_RECORD = re.compile(
    r"(?:Metadata|State|Stats|Metrics|Outputs?|Batch|Result|Context|Buffers?|Tensors?)$"
)


_EMPTY = frozenset({'""', "''", "[]", "{}", "()", "list()", "dict()"})


def runtime_record(owner: str) -> bool:
    return _RUNTIME_RECORD.search(owner) is not None


def _kept_behaviour(was: str, now: str, sides: list[Side]) -> str:
    """Why `was` -> `now` changes nothing deployments get ("" when it may)."""
    if _retyped(was, now):
        return "the field's type changed"
    if _class_renamed(was, now, sides):
        return "the same object under its class's new name"
    if was == "None" and now.replace(" ", "") in _EMPTY:
        # `base_dir: str = None` -> `= ""`: the declared type's empty value, false as None was; a type
        # fix (what `os.path.join` needed), not a new behaviour for every deployment.
        return "None made the empty value"
    return ""


def _folded(field: str, new: str, sides: list[Side]) -> bool:
    """A `None` ("filled in later") default that became the value the change stops filling in: the removed
    lines set the field to it (`"eliminate_noops": True` dropped from the per-level tables, the default
    now `True`). Deployments that got the value through the derivation keep it."""
    rx = re.compile(rf"""(?:^|[\s{{(,.])["']?{re.escape(field)}["']?\s*(?::|=(?!=))\s*(.+?)\s*,?\s*$""")
    for s in sides:
        for h in s.hunks:
            for _, text in h.removed:
                m = rx.search(text.split("#", 1)[0].rstrip())
                if m is not None and same_literal(m.group(1).rstrip(",;"), new):
                    return True
    return False


def silent_reason(field: str, new: str, resolved: tuple[str | None, str | None], sides: list[Side]) -> str:
    """Why a field's default change is not reported ("" when it is): made unset, a reference not
    known, the same value, a derivation folded into the default, or what `respelled` knows."""
    if new == "None":
        return "unset"
    was, now = resolved
    if was is None or now is None:
        return "unknown reference"
    if same_literal(was, now) or same_retyped(was, now) or {was, now} <= _NO_VALUE:
        return "same value"
    if was == "None" and _folded(field, now, sides):
        return "derivation folded into the default"
    named = _named_value(was, now, sides)
    if named is not None:
        return named
    return _kept_behaviour(was, now, sides)


# Spellings of "no value" across libraries (`NullOpt` in TVM, `std::nullopt`, `nullptr`, `None`).
_NO_VALUE = frozenset(
    {"None", "nullptr", "NULL", "NullOpt", "std::nullopt", "std.nullopt", "nullopt", "std::nullopt_t{}"}
)


# A named constant as a default (`LLAMA_TOKEN_NULL`, `DEFAULT_LORA_EVICTION_POLICY`): upper case, bare.
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _named_value(was: str, now: str, sides: list[Side]) -> str | None:
    """A plain literal replaced by a named constant, or back (`-1` -> `LLAMA_TOKEN_NULL`): the same value
    when the change defines the constant as it (`#define LLAMA_TOKEN_NULL -1`), not known here when it
    does not say; None when neither side is such a constant, or the change defines it otherwise."""
    # C++'s `false` / `true` too (`bool numa = false;` -> `ggml_numa_strategy numa = GGML_NUMA_STRATEGY_DISABLED;`)
    pairs = [
        (a, b)
        for a, b in ((was, now), (now, was))
        if _CONSTANT.fullmatch(a) and (_plain(b) or b in ("true", "false"))
    ]
    if not pairs:
        return None
    name, literal = pairs[0]
    defined = re.compile(rf"(?:#\s*define\s+{name}\s+|\b{name}\s*(?::[^=]+)?=\s*)\(?([^;,)\s]+)")
    values = {
        m.group(1)
        for s in sides
        for h in s.hunks
        for _, t in (*h.added, *h.removed)
        for m in [defined.search(t)]
        if m
    }
    if not values:
        return "a named constant whose value is not known here"
    # a bool (C++'s `false`, canonical `False`) is the integer an enum member gives; both sides, so that
    # `X_DEFAULT = False` -> `False` is the same value too
    ints = {"false": "0", "False": "0", "true": "1", "True": "1"}
    literal = ints.get(literal, literal)
    return "same value" if any(same_literal(ints.get(v, v), literal) for v in values) else None
