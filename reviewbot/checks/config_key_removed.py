"""config-key-removed (P2): a config-file key the base read is read nowhere in the head.

## What it does
Finds the keys a removed line read from a config dictionary (`get_scalar_param(param_dict,
FP32_ALLREDUCE, ...)`, `config.get("key")`, `cfg["key"]`, the key as a literal or a constant bound to
one) that no Python source of the head tree quotes any more: no alias read, no warning that names it,
no field of that name in a config model a changed file declares (`swap_buffer_count: int = 4` in a
pydantic model or dataclass: the model reads the key when it parses the dict), no parameter of that
name in the `__init__` of a config class of the head tree (`RWConfig(**config_dict)` hands
`multi_query` to `def __init__(self, ..., multi_query=False)`).
It reports the key at the line that took the read's place.

Not judged: keyword arguments of a Python API that move into a config model; C++ JSON keys; test
files and files the change deletes; a key the code writes rather than reads (`pass_config["tir.x"] =
True`: an option handed to a callee, renamed with it in dev-scan sample 8, not a key users set).

Split from flag-removed-without-alias, whose command-line flags are opt-in: a removed flag fails
loudly ("unrecognized arguments") and maintainers who labelled real commits blind did not count one as
a defect by itself; a dropped key fails silently, which is why this part stays on.

## Why is this bad?
Configs that set the key keep loading, and the setting is silently ignored: no error tells the user
that the value they chose no longer does anything.

## Example
```python
def fp32_allreduce(param_dict):
    return False  # was: get_scalar_param(param_dict, FP32_ALLREDUCE, FP32_ALLREDUCE_DEFAULT)
```

## Use instead
```python
def fp32_allreduce(param_dict):
    if FP32_ALLREDUCE in param_dict:
        logger.warning(f"{FP32_ALLREDUCE} is deprecated and ignored")
    return False
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.removals.config_keys import DroppedKey, dropped_keys
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "config-key-removed"
severity = Severity.P2
summary = (
    "A config-file key the base read is read nowhere any more, so configs that set it are silently ignored."
)


def _finding(d: DroppedKey) -> Finding:
    return Finding.make(
        rule=id,
        severity=severity,
        path=d.path,
        line=d.line,
        anchor=d.key,
        title=msg("config-key-removed.title", name=d.key),
        evidence=(
            msg("config-key-removed.was", place=place(d.path, d.base_line), text=clip(d.text, 100)),
            msg("config-key-removed.nowhere", name=d.key),
        ),
        suggestion=msg("config-key-removed.suggestion", name=d.key),
        extra=(("field", d.key), ("key", d.key)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    texts = {f.path: (f.base_text, f.head_text) for f in ctx.change.files}
    for k in dropped_keys(changed, texts, ctx.change.head_tree):
        yield _finding(k)
