"""Plain text helpers every layer above the language facts uses: a function's short name, a one-line
clip, snake_case, a condition's conjuncts, and whether a path is vendored code (pure)."""

from __future__ import annotations

import re

__all__ = ["clip", "conjuncts", "is_vendored", "short_function", "snake"]


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
