"""Whether a config field a skipped statement consumes is a switch, and which types hold it.

Split from `analysis.coupled.switches`: the declared type, default and owner family of one field, read
from the index.
"""

from __future__ import annotations

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.lang.common import last_component
from reviewbot.lang.index import RepoIndex

__all__ = ["owner_family", "switch_kind"]

_BOOLS = ("True", "False")
_BOOL_TYPES = frozenset({"bool", "_Bool"})


def owner_family(d: ChangedDerivation, index: RepoIndex, shown: str) -> tuple[str, frozenset[str]]:
    """The owner type of field `shown` of the derived object (`rope_config.dim` -> `RopeConfig`) and
    the types whose instances hold it; ("", empty) when the index cannot tell."""
    owner, _ = index.owner_of(d.head)
    if not owner:
        return "", frozenset()
    parent = shown.rsplit(".", 1)[0] if "." in shown else ""
    resolved = index.resolve_type(f"{owner}.{parent}") if parent else owner
    return resolved, index.family(resolved) if resolved else frozenset()


def switch_kind(index: RepoIndex, owner: str, shown: str, in_condition: bool) -> tuple[str, str, str]:
    """(kind, where declared, default) of field `shown`: "bool" when declared `bool` or defaulting to
    a boolean, "enum" when of an enum type (or defaulting to an enum member) and tested in a condition
    by one of its consumers (`in_condition`), "" otherwise."""
    leaf = last_component(shown)
    decl = index.field_decl(owner, leaf) if owner else None
    if decl is not None:
        where = f"{decl.path}:{decl.line}"
        default = decl.default or ""
        if decl.type in _BOOL_TYPES or default in _BOOLS:
            return "bool", where, default
        if index.enum_members(decl.type) and in_condition:
            return "enum", where, default
        if decl.type:
            return "", where, default
    for fd in sorted(index.defaults(leaf), key=lambda fd: (fd.path, fd.line, fd.owner)):
        where = f"{fd.path}:{fd.line}"
        if fd.value in _BOOLS:
            return "bool", where, fd.value
        enum = fd.value.rsplit(".", 1)[0].rsplit(".", 1)[-1] if "." in fd.value else ""
        if enum and index.enum_members(enum) and in_condition:
            return "enum", where, fd.value
    return "", "", ""
