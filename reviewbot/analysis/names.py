"""Which identifiers must the repository index know about for this change? (pure)"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach import BUILDER_NAMES
from reviewbot.lang.facts import PredicateUse

__all__ = ["interesting_names"]

_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_NOISE_WORDS = {"True", "False", "None", "self", "this", "config", "cfg", "not", "and", "or"}


def _operand_names(text: str) -> list[str]:
    """Identifiers of a guard atom; of an enum constant (`RopeStyle.No`) only the enum: its members
    (`No`, `Off`, `LANGUAGE_MODEL`) are common words, and the enum's definition names the enum."""
    out: list[str] = []
    for path in _PATH.findall(text):
        parts = path.split(".")
        out.extend(parts[:1] if len(parts) > 1 and parts[0][:1].isupper() else parts)
    return out


def interesting_names(
    derivations: list[ChangedDerivation], ctx_preds: Sequence[PredicateUse], functions: bool = True
) -> set[str]:
    """Identifiers the repository index must know about: fields, guard operands, config builders and,
    with `functions`, the functions holding the derivations.

    Function names (`derive`, `forward`) are common words of a code base: the index only searches
    tests for them (missing-tests) and must not parse every file that mentions one.
    """
    names: set[str] = set()
    for d in derivations:
        a = d.head
        names.add(a.field)
        if a.function and functions:
            names.add(a.function.replace("::", ".").rsplit(".", 1)[-1])
        if a.guard is not None:
            for atom in a.guard.atoms():
                names.update(_operand_names(atom.text))
    for p in ctx_preds:
        for atom in p.pred.atoms():
            names.update(_operand_names(atom.text))
    if any(d.head.guard is not None for d in derivations):
        names.update(BUILDER_NAMES)  # model config builders: how far a guarded rule reaches (review.reach)
    return {n for n in names if n not in _NOISE_WORDS and len(n) > 2}
