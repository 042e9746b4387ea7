"""Operands of a guard: which fields it tests, enum comparisons, defaults and derivations of a field.

Pure helpers over the repository index, shared by reach (`analysis.reach.configs`) and coupled flags.
"""

from __future__ import annotations

import re

from reviewbot.lang.facts import Assignment
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.predicate import Pred, canonical_operand
from reviewbot.model.messages import Message, msg

__all__ = ["CMP", "is_enum_ref", "leaf", "default_of", "derivation_of", "split", "holds", "guard_fields"]

CMP = re.compile(r"^(?P<left>.+?)\s*(?P<op>==|!=)\s*(?P<right>.+)$")


def is_enum_ref(text: str) -> bool:
    head = text.split(".", 1)[0]
    return "." in text and head[:1].isupper()


def leaf(text: str) -> str:
    return text.rsplit(".", 1)[-1]


def default_of(index: RepoIndex, fld: str) -> tuple[str, Message] | None:
    for d in sorted(index.defaults(fld), key=lambda d: (d.lang.value, d.path, d.line)):
        return d.value, msg(
            "reach.default", field=f"{d.owner}.{d.field}", value=d.value, place=f"{d.path}:{d.line}"
        )
    return None


def derivation_of(index: RepoIndex, fld: str) -> Assignment | None:
    """A write of `fld` whose value is a comparison (the atom is derived from another field)."""
    for a in sorted(index.writers(fld), key=lambda a: (a.path, a.line)):
        if is_test_path(a.path) or a.guard is not None:
            continue
        if CMP.match(a.value):
            return a
    return None


def split(text: str) -> tuple[str, str, str, str] | None:
    """(field operand, op, enum operand, enum member) of `x == Enum.M`, else None."""
    m = CMP.match(text)
    if not m:
        return None
    left, op, right = (canonical_operand(m.group(g)) for g in ("left", "op", "right"))
    enum_side, field_side = (left, right) if is_enum_ref(left) else (right, left)
    if not is_enum_ref(enum_side) or is_enum_ref(field_side):
        return None
    return field_side, op, enum_side, leaf(enum_side)


def holds(op: str, member: str, value: str) -> bool:
    return (leaf(value) == member) == (op == "==")


_OPERATOR = re.compile(r"\s*(?:==|!=|<=|>=|<|>)\s*")
_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def _operand_fields(text: str) -> set[str]:
    return {
        leaf(op)
        for op in _OPERATOR.split(text.strip())
        if _PATH.match(op) and not is_enum_ref(op) and op not in ("True", "False", "None")
    }


def guard_fields(guard: Pred | None, index: RepoIndex) -> set[str]:
    """Fields a guard tests (last components): its operands and, for an atom derived from other
    fields (`use_kvcache = task_type == TaskType.LANGUAGE_MODEL`), those fields too."""
    out: set[str] = set()
    if guard is None:
        return out
    for atom in guard.atoms():
        out |= _operand_fields(atom.text)
        if not CMP.match(atom.text):
            derived = derivation_of(index, leaf(atom.text))
            if derived is not None:
                out |= _operand_fields(derived.value)
    return out
