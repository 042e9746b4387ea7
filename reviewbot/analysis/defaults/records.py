"""The record of a changed default (shared by `analysis.defaults.changes`, `analysis.defaults.picked` and the
rules that read them: default-changed, derivation-drift)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from reviewbot.analysis.envs.switches import EnvDefaultChange

__all__ = ["DefaultKind", "DefaultChange"]


class DefaultKind(str, Enum):
    FIELD = "field"
    ENV = "env"
    OPTION = "option"
    PARAMETER = "parameter"
    INITIALISER = "initialiser"
    AUTO = "auto"  # the value a derivation picks for a field nobody set
    CONSTANT = "constant"  # a module constant replaced by an environment read with another default
    NEW_ON = "new-on"  # a brand-new switch that defaults on and feeds only code the change adds


@dataclass(frozen=True)
class DefaultChange:
    kind: DefaultKind
    name: str  # `Owner.field`, the variable, the option or `function(param)`
    field: str  # the bare field / variable / option / parameter name
    owner: str  # the owner type ("" for env and options)
    old: str  # as written (canonical)
    new: str
    path: str  # head path and line of the new default
    line: int
    base_path: str
    base_line: int
    env: EnvDefaultChange | None = None
    old_effective: str = ""  # INITIALISER: the values with the read fields' defaults substituted
    new_effective: str = ""
    condition: str = ""  # AUTO: the condition it is picked under, as written
    silent: str = ""  # why `default-changed` does not report it ("" when it does); other rules may
    copies: tuple[tuple[str, int], ...] = ()  # FIELD: other owners whose same field flipped the same way
