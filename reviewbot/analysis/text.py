"""Plain text helpers every layer above the language facts uses: a function's short name, a one-line
clip, snake_case, a condition's conjuncts, whether a path is vendored code, and where two spellings
differ by one edit (pure)."""

from __future__ import annotations

import re

__all__ = ["clip", "conjuncts", "is_vendored", "renamed_operands", "short_function", "single_edit", "snake"]


def short_function(name: str | None) -> str:
    """`ModelConfig::getAttentionConfigs` -> `getAttentionConfigs`; `Bert._create_config` -> `_create_config`."""
    if not name:
        return ""
    return name.replace("::", ".").rsplit(".", 1)[-1]


def clip(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (cut at the end, marked with an ellipsis)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: max(limit - 1, 0)].rstrip() + "…"


# Vendored and third-party trees: code the project does not write, so it neither sets its config nor
# consumes its flags. The index is meant to leave them out; the checks do not rely on it.
_VENDORED = frozenset(
    {"3rdparty", "3rd_party", "third_party", "thirdparty", "third-party", "vendor", "external"}
)


def is_vendored(path: str) -> bool:
    return any(part.lower() in _VENDORED for part in path.split("/")[:-1])


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """`AttentionConfigs` -> `attention_configs`; `model_config` stays."""
    return _CAMEL.sub("_", name).lower().strip("_")


def conjuncts(condition: str) -> list[str]:
    """The parts of a condition joined by `and` / `or` / `&&` / `||` (C++ and Python), stripped."""
    return [a.strip() for a in re.split(r"\s+(?:and|or)\s+|&&|\|\|", condition) if a.strip()]


def single_edit(a: str, b: str) -> tuple[int, str] | None:
    """Where and how `a` and `b` differ by exactly one edit: (index in the longer of the two, kind), the
    kind `replace` (one character), `swap` (two neighbours, at index and index + 1) or `indel` (the
    longer has one character more, at index); None when they are equal or further apart."""
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    if a == b or len(longer) - len(shorter) > 1:
        return None
    i = 0
    while i < len(shorter) and longer[i] == shorter[i]:
        i += 1
    if len(longer) != len(shorter):
        return (i, "indel") if longer[i + 1 :] == shorter[i:] else None
    if longer[i + 1 :] == shorter[i + 1 :]:
        return i, "replace"
    swapped = i + 1 < len(longer) and longer[i] == shorter[i + 1] and longer[i + 1] == shorter[i]
    return (i, "swap") if swapped and longer[i + 2 :] == shorter[i + 2 :] else None


_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")


def renamed_operands(old: str, new: str) -> bool:
    """`new` is `old` with operands renamed: the same tokens but names that are not called
    (`max(self.sliding_window, 8192)` -> `max(self.sliding_window_size, 8192)`; not `max` -> `min`)."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(a) != len(b):
        return False
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        called = i + 1 < len(a) and a[i + 1] == "("
        if called or not (x[0].isalpha() or x[0] == "_") or not (y[0].isalpha() or y[0] == "_"):
            return False
    return True
