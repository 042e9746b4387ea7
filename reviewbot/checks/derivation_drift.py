"""derivation-drift (P2): the same default or derivation lives in two places and they now disagree.

## What it does
Flags a change that leaves two copies of one setting disagreeing, naming both places and both values:
- a changed environment read that parses a switch into a bool differently from another read of the
  same switch in the project (`os.environ.get("REUSE_CACHE") == "1"` here, `bool(int(...))` there):
  some value an operator sets means on in one place and off, or an error, in the other;
- one switch tested two ways in the same function, one of the tests constant (`envs.X is True` next
  to `envs.X.get()`): with the switch set the two tests pick different branches;
- linked field defaults (a C++ member and the Python field bound to it; an argument dataclass whose
  default read the config's default) that agreed before the change and disagree after it — one copy
  changed, or one stopped reading the other. Reported once, on the copy that lost a `None` sentinel
  the other keeps ("auto"), else on the changed copy;
- a command-line option the change adds with another plain default than the config class field of the
  same name (`--mscale` defaults to `1.0`, `MLATransformerConfig.mscale` to `0.707`): launchers copy
  the parsed arguments into config dataclasses by field name, so the command line and the Python API
  get two values for one setting. Only when every config class declaring the field agrees on it.

Not flagged: copies that agree; a copy that reads the other (`x: int = Config.x`); reads in tests;
parses that are not both bool switches; two tests that are exact complements (`== "1"` here, `!= "1"`
there: one reading of the switch, each place asking from its own side).

## Why is this bad?
Which value wins depends on which copy a code path happens to read: the CLI and the Python API, the
C++ engine and the Python scheduler, see different configurations, and a fix to one copy leaves the
other behind.

## Example
```python
# config/cache.py
enable_prefix_caching: bool = True          # was None ("decide per model")
# engine/arg_utils.py
enable_prefix_caching: bool | None = None   # was CacheConfig.enable_prefix_caching
```

## Use instead
```python
enable_prefix_caching: bool | None = None   # one sentinel, resolved in one place
# engine/arg_utils.py
enable_prefix_caching: bool | None = CacheConfig.enable_prefix_caching
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.constant_guards import constant_guards
from reviewbot.analysis.defaults.changes import changed_defaults
from reviewbot.analysis.drift import (
    Drift,
    DriftKind,
    default_drifts,
    env_drifts,
    option_drifts,
    switch_drifts,
)
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "derivation-drift"
severity = Severity.P2
summary = "The same default or derivation lives in two places and they now disagree."

_TEXT = 60


def _title(d: Drift) -> Message:
    there = place(d.there_path, d.there_line)
    if d.kind is DriftKind.ENV:
        return msg(
            "derivation-drift.title.env", name=d.name, here=clip(d.here, _TEXT), there=clip(d.there, _TEXT),
            place=there, sample=d.sample, a=d.here_gives, b=d.there_gives,
        )  # fmt: skip
    if d.kind is DriftKind.SWITCH:
        return msg("derivation-drift.title.switch", name=d.name, here=clip(d.here, _TEXT), there=clip(d.there, _TEXT), place=there)  # fmt: skip
    return msg(
        "derivation-drift.title.default", name=d.name, new=clip(d.here, _TEXT), other=d.there_gives,
        value=clip(d.there, _TEXT), place=there,
    )  # fmt: skip


def _finding(d: Drift) -> Finding:
    evidence: list[Message] = [
        msg("derivation-drift.here", text=clip(d.here, _TEXT), place=place(d.path, d.line)),
        msg("derivation-drift.there", text=clip(d.there, _TEXT), place=place(d.there_path, d.there_line)),
    ]
    if d.was:
        evidence.append(msg("derivation-drift.was", value=clip(d.was, _TEXT)))
    if d.also:
        evidence[-1] = msg("derivation-drift.also", fields=", ".join(f"`{f}`" for f in d.also))
    if d.kind is DriftKind.OPTION:  # the option is the new copy: it should follow the field
        suggestion = msg(
            "derivation-drift.suggestion.option", option=d.name, value=clip(d.there, _TEXT),
            other=d.there_gives,
        )  # fmt: skip
    elif d.kind is DriftKind.DEFAULT:
        suggestion = msg("derivation-drift.suggestion.default", name=d.name, other=d.there_gives)
    else:
        suggestion = msg("derivation-drift.suggestion.env", name=d.name)
    return Finding.make(
        rule=id,
        severity=severity,
        path=d.path,
        line=d.line,
        anchor=f"{d.kind.value}|{d.name}|{d.there_path}:{d.there_line}",
        title=_title(d),
        evidence=tuple(evidence),
        suggestion=suggestion,
        extra=(("field", d.field), ("kind", d.kind.value), ("other", place(d.there_path, d.there_line))),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    drifts = [
        *env_drifts(changed, ctx.index),
        *switch_drifts(changed, constant_guards(changed, ctx.index)),
        *default_drifts(changed_defaults(changed, ctx.index), ctx.index),
        *option_drifts(changed, ctx.index, {f.path: f.head_text for f in ctx.change.files}),
    ]
    for d in sorted(drifts, key=lambda d: (d.path, d.line, d.kind.value, d.name)):
        yield _finding(d)
