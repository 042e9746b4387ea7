"""Model families a guard names (pure): `model_arch == "DeepseekV3ForCausalLM"`, `"Llama4" in model_arch`.

A guard that needs the model's architecture (or type) to be a named model is reached by every
deployment of that model that meets its other conditions: a population that ships, which the issue's
bar for a P1 untested row asks to be named. Only atoms the guard needs true count (`!=` / `not in`
exclude a family, they do not name who reaches the row), and only a name that says it holds the
architecture or model type (`model_arch`, `hf_config.architectures`, `model_type`), compared with or
searched for a string literal.
"""

from __future__ import annotations

import re

from reviewbot.lang.predicate import Pred, literals
from reviewbot.model.truthtable import TruthTable

__all__ = ["family_reached", "model_families"]

_ARCH_NAME = r"(?:[\w.]*\.)?(?:model_arch|architectures?|model_type|arch_name)(?:\[\d+\])?"
_LITERAL = r"[\"']([\w.\-]+)[\"']"
# `"X" == arch`, `arch == "X"`, `"X" in arch`, `arch in ["X", "Y"]`, `arch.startswith("X")`.
_NAMED = re.compile(
    rf"^(?:{_LITERAL}\s*(?:==|in)\s*{_ARCH_NAME}|{_ARCH_NAME}\s*==\s*{_LITERAL}"
    rf"|{_ARCH_NAME}\s+in\s+[\[(](?P<many>[^\])]*)[\])]|{_ARCH_NAME}\.startswith\({_LITERAL}\))$"
)
_EACH = re.compile(_LITERAL)
_ARCH_WORD = re.compile(rf"(?<![\w.]){_ARCH_NAME}")


def model_families(guard: Pred | None) -> tuple[list[str], str]:
    """The model names the guard needs the architecture to be, and the atom that names them."""
    for atom, needed in literals(guard):
        m = _NAMED.match(atom.text.strip()) if needed else None
        if m is None:
            continue
        names = _EACH.findall(m.group("many")) if m.group("many") else [g for g in m.groups() if g]
        if names:
            return names, atom.text
    return [], ""


def family_reached(table: TruthTable | None) -> bool:
    """A changed row where every other column with a declared default is at it: the family's own
    deployments take the row without opting into anything else (a switch the change adds, off by
    default, keeps them out). Columns without a known default (a call, `is_cuda()`) may be anything."""
    if table is None:
        return False
    fixed = [
        v
        for v in table.variables
        if not v.is_input and v.default is not None and v.default_from not in ("", "bool default")
        and not _ARCH_WORD.search(v.name)
    ]  # fmt: skip
    return any(r.changed and all(r.inputs.get(v.name) == v.default for v in fixed) for r in table.rows)
