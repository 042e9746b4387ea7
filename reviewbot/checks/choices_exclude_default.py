"""choices-exclude-default (P2): an argparse option's default is not one of its `choices`.

## What it does
Finds the `add_argument(...)` calls the change adds or edits (or whose default field it edits) that
declare literal `choices` and a default outside them: a literal, or a field of a config class of the
same file (`default=ServerArgs.flashinfer_mxfp4_moe_precision` where `ServerArgs` says `"default"`).
A string default is converted by `type=int` / `type=float` first, as argparse does
(`analysis.option_choices`). P3 in a script beside the package (`benchmark/`, `examples/`, `tools/`).

Not flagged: `None` and `""` defaults (the "not set" sentinels), options with `nargs` or an `action`,
choices that are not all literals, defaults not resolved to a literal, and a mismatch the base had.

## Why is this bad?
argparse checks `choices` only against what the command line passes, never against the default. Every
launch that does not pass the option starts with a value the command line can neither give nor give
back, and the code written against the choices meets a value none of its branches expects: a silent
fall-through, or an error that only the default configuration hits (sglang 0374304a2: choices
`["mxfp4", "bf16"]`, default `"default"`).

## Example
```python
parser.add_argument("--moe-precision", choices=["mxfp4", "bf16"], default="default")
```

## Use instead
```python
parser.add_argument("--moe-precision", choices=["default", "mxfp4", "bf16"], default="default")
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.option_choices import ChoicesMiss, choices_misses
from reviewbot.analysis.pyast import side_texts
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import beside_package, clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "choices-exclude-default"
severity = Severity.P2
summary = "An argparse option's default is not one of its choices: every launch starts with a value the command line cannot give."


def _finding(m: ChoicesMiss) -> Finding:
    evidence: list[Message] = [
        msg(
            "choices-exclude-default.choices",
            place=place(m.path, m.choices_line),
            text=clip(m.choices_text, 100),
        ),
    ]
    if m.field_line:
        evidence.append(
            msg(
                "choices-exclude-default.field",
                place=place(m.path, m.field_line),
                text=clip(m.field_text, 100),
            )
        )
    return Finding.make(
        rule=id,
        severity=Severity.P3 if beside_package(m.path) else severity,
        path=m.path,
        line=m.line,
        anchor=m.flag,
        title=msg(
            "choices-exclude-default.title", flag=m.flag, default=m.default, choices=", ".join(m.choices)
        ),
        evidence=tuple(evidence),
        suggestion=msg("choices-exclude-default.suggestion", default=m.default),
        extra=(("field", m.flag.lstrip("-").replace("-", "_")), ("default", m.default)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    python = [s for s in sides(ctx.change, ctx.base_facts, ctx.head_facts) if s.path.endswith(".py")]
    if not python:
        return
    for m in choices_misses(python, side_texts(ctx.change)):
        yield _finding(m)
