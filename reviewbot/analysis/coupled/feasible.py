"""What a guard says about the code that can run while it holds, and about the fields it makes moot.

Two questions the coupled-flag analysis asks of a guard such as
`rope_config.style == RopeStyle::No && !use_kvcache`:

- which code cannot run at all while it holds: with no KV cache there is no decoding step, so a
  decode implementation (`XQADecodeImpl.forward`, `FusedRopeKVCacheDecodeOp`) is never on the path.
  This is domain knowledge, kept in one table (`MODES`): a guard literal that turns a mode's switch off
  rules out the code named for that mode (by the words of its class and function names);
- which fields it makes irrelevant: a feature the guard switches off (`rope_config.style == No`, `!use_x`)
  takes its parameters with it (`rope_config.dim`, `x_scale`), so losing them is not a loss.

Pure: names and predicates in, answers out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.lang.predicate import Atom, Pred, canonical_operand, literals

__all__ = [
    "Mode",
    "MODES",
    "RuledOut",
    "ruled_out",
    "name_words",
    "blocked_by",
    "moot_reason",
    "switch_words",
]

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_CMP = re.compile(r"^(?P<left>.+?)\s*(?P<op>==|!=)\s*(?P<right>.+)$")
# Enum members that name the absence of a feature (`RopeStyle::No`, `Mode.NONE`, `OFF`, `DISABLED`).
_OFF_MEMBERS = frozenset({"no", "none", "off", "disabled", "disable", "null", "noop", "nothing"})
# Words of a switch's name that say "switch", not which feature (`use_`, `enable_`, `_style`).
_SWITCH_WORDS = frozenset(
    {"use", "enable", "enabled", "is", "has", "do", "with", "need", "style", "type", "mode", "kind", "method"}
)


@dataclass(frozen=True)
class Mode:
    """Code that can only run while a switch is on: `decode` needs the KV cache."""

    switch: str  # the switch's name with separators removed, as a substring: `kvcache`
    code: frozenset[str]  # words of class/function names of the code of that mode
    why: str


# The one table of domain knowledge about modes (see the module doc).
MODES: tuple[Mode, ...] = (
    Mode("kvcache", frozenset({"decode", "decoding"}), "decoding needs a KV cache"),
    Mode("usecache", frozenset({"decode", "decoding"}), "decoding needs a KV cache"),
)


@dataclass(frozen=True)
class RuledOut:
    """Code that cannot run while the guard holds, and why."""

    words: frozenset[str]
    literal: str  # the guard literal that rules it out, as written: `!use_kvcache`
    why: str


def name_words(name: str) -> list[str]:
    """Lower-case words of an identifier or qualified name: `XQADecodeImpl.forward` -> xqa, decode, impl,
    forward; `use_kv_cache` -> use, kv, cache."""
    out: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        out.extend(w.lower() for w in _CAMEL.findall(part))
    return out


def switch_words(name: str) -> list[str]:
    """The words of a switch's name that name its feature: `use_logn_attn` -> logn, attn."""
    return [w for w in name_words(name) if w not in _SWITCH_WORDS]


def _leaf(text: str) -> str:
    return text.rsplit(".", 1)[-1]


def ruled_out(guard: Pred | None) -> tuple[RuledOut, ...]:
    """The code `guard` rules out: for each literal that holds a mode's switch false (`!use_kvcache`)."""
    if guard is None:
        return ()
    out: list[RuledOut] = []
    for atom, want in literals(guard):
        if _CMP.match(atom.text) or want:
            continue
        joined = "".join(name_words(_leaf(canonical_operand(atom.text))))
        for mode in MODES:
            if mode.switch in joined:
                out.append(RuledOut(mode.code, f"!{atom.text}", mode.why))
    return tuple(dict.fromkeys(out))


def blocked_by(names: Iterable[str], rules: tuple[RuledOut, ...]) -> RuledOut | None:
    """The first rule whose words name one of `names` (qualified functions, classes), or None."""
    words = {w for n in names if n for w in name_words(n)}
    for rule in rules:
        if rule.words & words:
            return rule
    return None


def _off_switch(atom: Atom, want: bool) -> tuple[str, str] | None:
    """(the switch, receiver kept, and the literal as read) a guard literal turns off, or None:
    `config.rope_config.style == RopeStyle.No`, `!config.use_x`."""
    m = _CMP.match(atom.text)
    if m is None:
        # `!use_x`: the feature `x` is off.
        switch = canonical_operand(atom.text)
        return (switch, f"!{switch}") if not want else None
    left, op, right = (canonical_operand(m.group(g)) for g in ("left", "op", "right"))
    enum_side, field_side = (left, right) if _is_enum_ref(left) else (right, left)
    if not _is_enum_ref(enum_side) or _is_enum_ref(field_side):
        return None
    member = _leaf(enum_side).lower()
    pins_member = (op == "==") == want
    if not pins_member or member not in _OFF_MEMBERS:
        return None
    return field_side, f"{field_side} {'==' if want else '!='} {enum_side}"


def _named_for(own: list[str], feature: list[str]) -> bool:
    """A field named for a feature: its name starts with the feature's words (`kv_cache_dtype` for
    `kvcache`), or with the feature's first word when that word is distinctive (four letters or
    more: `logn_seq_len` for `logn_attn`, but not `kv_head_num` for `kv_cache`)."""
    if "".join(own).startswith("".join(feature)):
        return True
    return len(feature[0]) >= 4 and own[0] == feature[0]


def _is_enum_ref(text: str) -> bool:
    head = text.split(".", 1)[0]
    return "." in text and head[:1].isupper()


def moot_reason(guard: Pred | None, shown: str) -> str:
    """Why the guard makes field `shown` (`rope_config.dim`) irrelevant, or "" when it does not.

    A literal that turns a feature off (`rope_config.style == RopeStyle::No`, `!use_logn_attn`) makes
    the feature's parameters irrelevant: the fields of the same sub-config (`rope_config.*`) or, for a
    switch on the config itself, the fields named for the feature (`logn_*` of `use_logn_attn`).
    """
    if guard is None:
        return ""
    for atom, want in literals(guard):
        off = _off_switch(atom, want)
        if off is None:
            continue
        switch, written = off
        parts = switch.split(".")
        shown_parent = shown.rsplit(".", 1)[0] if "." in shown else ""
        if shown_parent and len(parts) >= 2 and parts[-2] == shown_parent.rsplit(".", 1)[-1]:
            return f"`{shown}` configures `{shown_parent}`, which `{written}` turns off"
        feature = switch_words(parts[-1])
        own = name_words(_leaf(shown))
        if not shown_parent and feature and own and _leaf(shown) != parts[-1] and _named_for(own, feature):
            return f"`{shown}` configures `{'_'.join(feature)}`, which `{written}` turns off"
    return ""
