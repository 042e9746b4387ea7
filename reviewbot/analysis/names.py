"""Which identifiers must the repository index know about for this change? (pure)"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Sequence

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.configs import BUILDER_NAMES
from reviewbot.lang.facts import PredicateUse

__all__ = ["interesting_names"]

_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_NOISE_WORDS = {"True", "False", "None", "self", "this", "config", "cfg", "not", "and", "or"}
# Words of the languages themselves (`any(x for x in xs)`, `isinstance(c, T)`, `static_cast`): every
# file has them, so searching for them parses the whole repository and finds nothing about the change.
_LANGUAGE_WORDS = (
    frozenset(keyword.kwlist)
    | frozenset(dir(builtins))
    | {
        "auto",
        "bool",
        "const",
        "constexpr",
        "static_cast",
        "dynamic_cast",
        "reinterpret_cast",
        "nullptr",
        "sizeof",
        "std",
        "int",
        "float",
        "double",
        "size_t",
        "int64_t",
        "int32_t",
        "uint32_t",
        "true",
        "false",
    }
)


def _operand_names(text: str) -> list[str]:
    """Identifiers of a guard atom, outside its string literals. Of an enum constant (`RopeStyle.No`)
    only the enum: its members (`No`, `Off`, `LANGUAGE_MODEL`) are common words, and the enum's
    definition names the enum. Of an attribute path on a variable (`node.swa_tombstone`,
    `server_args.enable_x`) the attributes only: the variable's name (`node`, `metadata`) is a local
    word of every other file, and the fields are what other code writes and reads."""
    out: list[str] = []
    for path in _PATH.findall(_STRING.sub('""', text)):
        parts = path.split(".")
        if len(parts) == 1:
            out.extend(parts)
        elif parts[0][:1].isupper():
            out.append(parts[0])
        else:
            out.extend(parts[1:])
    return [n for n in out if n not in _LANGUAGE_WORDS]


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
