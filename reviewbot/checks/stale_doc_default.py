"""stale-doc-default (P3): a help text, docstring or comment still states the default the change replaced.

## What it does
For each value the change alters that a text documents next to it: an argparse option's `default=` with
its `help=`, a dataclass or pydantic field with its docstring, `Field(description=...)` or comment, a
function parameter's default with the paragraph of the docstring that names it, a C++ member initialiser
with its comment. It reads the default the text states (`default: 4`, `defaults to True`,
`(default 0.9)`) and reports the text when it states the base's value and the change set another one.

Not flagged: texts that state no default or a placeholder (`%(default)s`), values the change does not
alter, and texts that already state the new value.

## Why is this bad?
Users read the help text and the docs, not the code: they keep relying on the old default (or set the
value to what they think is already the default), and reviewers of later changes are misled.

## Example
```python
parser.add_argument("--max-batch", type=int, default=8, help="Largest batch (default: 4).")
```

## Use instead
```python
parser.add_argument("--max-batch", type=int, default=8, help="Largest batch (default: %(default)s).")
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.defaults.docs import StaleDefault, stale_defaults
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "stale-doc-default"
severity = Severity.P3
summary = "A help text, docstring or comment still states the default this change replaced."

_WHAT = {"help": "help text", "docstring": "docstring", "comment": "comment", "description": "description"}


def _finding(d: StaleDefault) -> Finding:
    return Finding.make(
        rule=id,
        severity=severity,
        path=d.path,
        line=d.doc_line,
        anchor=f"{d.name}|{d.what}",
        title=msg("stale-doc-default.title", what=_WHAT[d.what], name=d.name, stated=d.stated, actual=d.new),
        evidence=(
            msg("stale-doc-default.doc", place=place(d.path, d.doc_line), text=clip(d.doc_text, 120)),
            msg(
                "stale-doc-default.default",
                place=place(d.path, d.line),
                text=clip(d.value_text, 120),
                old=d.old,
            ),
        ),
        suggestion=msg("stale-doc-default.suggestion", actual=d.new),
        extra=(("field", d.name),),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    texts = {f.path: (f.base_text, f.head_text) for f in ctx.change.files}
    for d in stale_defaults(changed, texts):
        yield _finding(d)
