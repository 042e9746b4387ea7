"""always-true-guard (P0; P1 when only some spellings are misread): a guard that is always true or
always false, so one of its branches never runs.

## What it does
Flags, on the changed lines, a guard whose value does not depend on the configuration:
- an environment holder object compared with a bool: `envs.X is True` where the same code uses
  `envs.X.get()` (the holder is an object, never the bool `True`): always false;
- a standard environment read compared with a non-string: `os.environ.get("X") == 1`,
  `os.getenv("X") is True`: the environment gives a string, so the test is always false;
- a bare name tested for truth (`if SOME_FLAG:`) that the same file binds once to a function, a class,
  a non-empty string literal or an instance of a project class without `__bool__`/`__len__` (a
  singleton instance is always truthy);
- P1: a raw environment string used as a bool (`os.getenv("X", False)`, `bool(os.getenv("X"))`):
  `X=0` or `X=false` is a non-empty string and still enables;
- P1: a rank divided instead of taken modulo (`tp_rank / tp_size == 0`).

Not flagged: a name bound to a bool or a comparison, a name rebound anywhere in the file, an
`Optional` that can be `None`, an instance of a class that defines `__bool__`/`__len__` (or of a
library class), a read that is parsed (`== "1"`, `bool(int(...))`), a raw read without a bool or
number default (the "set to anything" idiom).

## Why is this bad?
The `else` that used to run never runs again (or the opt-in never takes effect), for every model and
deployment, and nothing fails: the switch silently does nothing.

## Example
```python
if envs.SGLANG_USE_MODELSCOPE is True:      # an EnvBool object, never `True`
    from modelscope import HubApi
```

## Use instead
```python
if envs.SGLANG_USE_MODELSCOPE.get():
    from modelscope import HubApi
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.constant_guards import ConstantGuard, ConstantKind, constant_guards
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "always-true-guard"
severity = Severity.P0
summary = "A guard that is always true or always false, so one branch never runs."

_TEXT = 80


def _title(c: ConstantGuard) -> Message:
    if c.kind in (ConstantKind.ENV_OBJECT, ConstantKind.ENV_CONSTANT):
        key = "env-object" if c.kind is ConstantKind.ENV_OBJECT else "env-constant"
        return msg(f"always-true-guard.title.{key}", read=clip(c.read, _TEXT), value=c.value, name=c.name)
    if c.kind is ConstantKind.ENV_STRING:
        return msg("always-true-guard.title.env-string", name=c.name)
    if c.kind is ConstantKind.DIVISION:
        return msg("always-true-guard.title.division", text=clip(c.text, _TEXT), rank=c.name)
    return msg("always-true-guard.title.name", text=clip(c.text, _TEXT), value=c.value, name=c.name, bound=clip(c.bound, 40))  # fmt: skip


def _evidence(c: ConstantGuard) -> list[Message]:
    if c.kind is ConstantKind.ENV_OBJECT:
        return [msg("always-true-guard.object-use", use=clip(c.bound.replace("·", c.read.split(" ")[0] if c.accessor.endswith(".X") else c.name), _TEXT), place=place(c.bound_path, c.bound_line))]  # fmt: skip
    if c.kind is ConstantKind.NAME:
        return [msg("always-true-guard.bound", name=c.name, bound=clip(c.bound, _TEXT), place=place(c.bound_path, c.bound_line))]  # fmt: skip
    if c.kind is ConstantKind.ENV_STRING:
        table = ", ".join(f"`{c.name}={s}` → {v}" for s, v in c.samples)
        return [msg("always-true-guard.samples", table=table)]
    if c.kind is ConstantKind.ENV_CONSTANT:
        return [msg("always-true-guard.string", name=c.name)]
    return [msg("always-true-guard.division", rank=c.name)]


def _suggestion(c: ConstantGuard) -> Message:
    if c.kind is ConstantKind.ENV_OBJECT:
        return msg("always-true-guard.suggestion.env-object", name=c.name)
    if c.kind in (ConstantKind.ENV_CONSTANT, ConstantKind.ENV_STRING):
        return msg("always-true-guard.suggestion.env", name=c.name)
    if c.kind is ConstantKind.DIVISION:
        return msg("always-true-guard.suggestion.division", rank=c.name)
    return msg("always-true-guard.suggestion.name", name=c.name)


def _finding(c: ConstantGuard) -> Finding:
    return Finding.make(
        rule=id,
        severity=Severity.P0 if c.kind.constant else Severity.P1,
        path=c.path,
        line=c.line,
        anchor=f"{c.kind.value}|{c.name}|{c.text}",
        title=_title(c),
        evidence=tuple(_evidence(c)),
        suggestion=_suggestion(c),
        extra=(("field", c.name), ("kind", c.kind.value), ("value", c.value)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    for c in constant_guards(changed, ctx.index):
        yield _finding(c)
