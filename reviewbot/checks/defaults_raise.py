"""defaults-raise (P0): building the changed config with every default raises on the head (executed).

## What it does
For each changed derivation whose truth table reviewbot could execute (the derivation runs in
`__post_init__` or `__init__` of a class that takes the table's columns as keyword arguments: a
dataclass, a pydantic model or a plain class; or in a function that validates an argument parser's
namespace, `validate_args(args)`), the execution stage builds the config with every default in the
sandbox, on the head and on the base: the class with no arguments, or the parser's defaults
(`validate_args(get_parser().parse_args([]))`). When that raises on the head, this rule reports it
with the exception's last line as executed evidence (and what the base did). A constructor with
required arguments is built with the literal values a call in the repository gives them (its tests
first), nothing else set. A build that raises the same exception on the base is not reported: the
change did not cause it.

## Why is this bad?
The all-defaults configuration is what a plain launch, a unit test and most users run. A constructor
that raises for it breaks start-up for everyone who did not opt out. This is not a prediction: the code
was run.

## Example
```python
@dataclass
class OffloadConfig:
    num_layers: int = 0
    offload_layers: int = 1

    def __post_init__(self):
        assert self.offload_layers < self.num_layers  # AssertionError with the defaults
```

## Use instead
```python
    def __post_init__(self):
        assert not self.offload or self.offload_layers < self.num_layers
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.model.executed import ExecutedTable
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

__all__ = ["id", "severity", "summary", "run", "findings"]

id = "defaults-raise"
severity = Severity.P0
summary = "Building the changed config with every default raises on the head (executed in the sandbox)."


def run(ctx: CheckContext) -> Iterable[Finding]:
    ex = ctx.execution
    if ex is None:
        return []
    return findings(ex.tables)


def findings(tables: Iterable[ExecutedTable]) -> list[Finding]:
    """One finding per owner whose all-defaults construction raised on the head (pure)."""
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for t in tables:
        h = t.harness
        if h is None or not t.defaults_raise or (h.path, h.owner) in seen:
            continue
        seen.add((h.path, h.owner))
        last = t.defaults_head.value
        if t.defaults_base.outcome == "raised" and t.defaults_base.value == last:
            continue  # the base raises the same: not this change's doing (a sandbox without network, ...)
        evidence: list[Message | str] = [
            msg("defaults-raise.executed", call=h.construction, module=h.module, last=last)
        ]
        if t.defaults_base.outcome != "not_run":
            evidence.append(msg("defaults-raise.base", base=t.defaults_base.value))
        out.append(
            Finding.make(
                rule=id,
                severity=severity,
                path=t.path,
                line=t.defaults_head.line_in(t.path) or t.line,
                title=msg("defaults-raise.title", call=h.construction, last=last),
                anchor=h.construction,
                evidence=evidence,
                suggestion=msg("defaults-raise.suggestion", call=h.construction),
                extra=(("executed", last), ("harness", f"{h.module}.{h.owner}")),
            )
        )
    return out
