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

__all__ = ["model_families"]

_ARCH_NAME = r"(?:[\w.]*\.)?(?:model_arch|architectures?|model_type|arch_name)(?:\[\d+\])?"
_LITERAL = r"[\"']([\w.\-]+)[\"']"
# `"X" == arch`, `arch == "X"`, `"X" in arch`, `arch in ["X", "Y"]`, `arch.startswith("X")`.
_NAMED = re.compile(
    rf"^(?:{_LITERAL}\s*(?:==|in)\s*{_ARCH_NAME}|{_ARCH_NAME}\s*==\s*{_LITERAL}"
    rf"|{_ARCH_NAME}\s+in\s+[\[(](?P<many>[^\])]*)[\])]|{_ARCH_NAME}\.startswith\({_LITERAL}\))$"
)
_EACH = re.compile(_LITERAL)


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
