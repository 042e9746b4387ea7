"""Small helpers shared by check modules (formatting of places and names)."""

from __future__ import annotations

from reviewbot.analysis.derive import assignment_anchor

__all__ = ["place", "short_function", "backtick", "assignment_anchor"]


def place(path: str, line: int) -> str:
    return f"{path}:{line}"


def short_function(name: str | None) -> str:
    """`ModelConfig::getAttentionConfigs` -> `getAttentionConfigs`; `Bert._create_config` -> `_create_config`."""
    if not name:
        return ""
    return name.replace("::", ".").rsplit(".", 1)[-1]


def backtick(text: str) -> str:
    return f"`{text}`"
