"""What builds a config whose constructor requires arguments: the repository's own calls, else placeholders.

`FunctionCallParser(tools, tool_call_parser)`, `BlendedMegatronDatasetConfig(random_seed, sequence_length)`:
no all-defaults build exists. The first call of the constructor (test files first) that gives every
required argument as a literal gives those values (execution/call_sites.py). When none gives them all,
a call that gives some is taken with placeholders for the rest, when the code the test runs never reads
those (sglang's own test calls `FunctionCallParser(self.tools, "llama3")`: the parser name is the
call's, `tools` is only stored); else placeholders alone (execution/harness_placeholder.py). The
generated test names where each value comes from.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence

from reviewbot.execution.call_sites import Sites, call_values
from reviewbot.execution.harness_placeholder import PLACEHOLDERS, class_placeholders

__all__ = ["Given", "required_given"]

Given = tuple[tuple[tuple[str, str], ...], str]  # (keyword -> value source, where they come from)
_MAX_CALLS = 16  # calls that give some of the required arguments, tried for placeholders for the rest


def required_given(
    cls: ast.ClassDef,
    kind: str,
    method: str,
    required: Sequence[str],
    sites: Sites | None,
    columns: Collection[str],
    positional: Sequence[str],
) -> Given | None | str:
    """What builds `cls` with its `required` arguments: a call that gives them all as literals; else
    the literals a call gives and placeholders for the rest, which the code the test runs never reads;
    else placeholders alone. Or why nothing does (`positional`: the constructor's positional parameters)."""
    owner = cls.name
    found = call_values(owner, required, sites(owner), positional) if sites is not None else iter(())
    calls: list[Given] = []
    for call in found:
        if len(call[0]) == len(required):
            return call
        if call[0] and len(calls) < _MAX_CALLS:
            calls.append(call)
    ctors = {"dataclass": ["__post_init__"], "pydantic": ["model_post_init", "__init__"]}
    entry = [*ctors.get(kind, ["__init__"]), method]
    filled: tuple[tuple[str, str], ...] | str = ()
    for literals, where in [*calls, ((), "")]:
        named = {n for n, _ in literals}
        filled = class_placeholders(
            cls, kind, [r for r in required if r not in columns and r not in named], entry
        )
        if isinstance(filled, str):
            continue
        if not literals:
            return (filled, PLACEHOLDERS) if filled else None
        shown = ", ".join(f"`{n}`" for n, _ in filled)
        return (*literals, *filled), where + (f" ({shown}: {PLACEHOLDERS})" if filled else "")
    shown = ", ".join(f"`{r}`" for r in required[:3])
    return (
        f"`{owner}(...)` requires {shown} (no default) and no call in the repository gives "
        f"them as literals; {filled}: there is no configuration to build"
    )
