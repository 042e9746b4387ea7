"""validation-rejects-default (P1): a new or changed validation rejects the configuration the defaults produce.

## What it does
Evaluates each `raise` (with the `if` conditions it runs under) and `assert` that the change adds, or
whose condition it adds or changes, in a validating function of a Python file (`__post_init__`,
`__init__`, `model_post_init`, `validate*` / `check*` / `verify*`, a function taking `args`), with every
operand at its default: dataclass / pydantic / class-level field defaults of the class validated (or
of its base class), `add_argument(..., default=...)` for `args.x`. It reports the validation when the
raise runs (or the assertion fails) for that all-defaults configuration. The evidence names each
default and where it is set.

Only when every operand's default is known: a call, a local, a subscript, an option without a declared
default, a field the function writes before the check, or a call above it that may write the object
validated (`self.derive()`, `finalize(args)`) leaves the validation alone. C++ checks are
not evaluated (the rule reads Python only).

## Why is this bad?
The all-defaults configuration is what a plain launch, a unit test and most users run. A validation
that rejects it (often because two defaults it couples are on/off together, or a new field's default
does not fit an old one's) breaks start-up for everyone who did not opt out, and usually passes review
because every example in the pull request sets the flags explicitly.

## Example
```python
@dataclass
class OffloadConfig:
    num_layers: int = 0
    offload_layers: int = 1

    def __post_init__(self):
        if self.offload_layers >= self.num_layers:  # 1 >= 0 with the defaults
            raise ValueError("offload_layers must be less than num_layers")
```

## Use instead
```python
    def __post_init__(self):
        if self.offload and self.offload_layers >= self.num_layers:
            raise ValueError("offload_layers must be less than num_layers")
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.defaults.validation import RejectedDefault, rejected_defaults
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "validation-rejects-default"
severity = Severity.P1
summary = "A new or changed validation rejects the configuration that the defaults produce."


def _finding(r: RejectedDefault) -> Finding:
    defaults = ", ".join(f"`{o.text}` = `{o.value}` ({place(o.path, o.line)})" for o in r.operands[:4])
    fields = ",".join(o.text.split(".", 1)[-1] for o in r.operands)
    return Finding.make(
        rule=id,
        severity=severity,
        path=r.path,
        line=r.line,
        anchor=f"{r.function}|{r.condition}",
        title=msg("validation-rejects-default.title", kind=r.kind, function=r.function),
        evidence=(
            msg(
                "validation-rejects-default.condition",
                place=place(r.path, r.statement_line),
                condition=clip(r.condition, 120),
            ),
            msg("validation-rejects-default.defaults", defaults=defaults),
        ),
        suggestion=msg("validation-rejects-default.suggestion"),
        extra=(("field", fields), ("owner", r.owner)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = [s for s in sides(ctx.change, ctx.base_facts, ctx.head_facts) if s.path.endswith(".py")]
    if not changed:
        return
    heads = {f.path: f.head_text for f in ctx.change.files}
    for r in rejected_defaults(changed, heads, ctx.index):
        yield _finding(r)
