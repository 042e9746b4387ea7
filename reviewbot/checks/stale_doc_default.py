"""stale-doc-default (P3): a help text, docstring, comment or doc page states a default the code no longer has.

## What it does
For each value the change alters that a text documents next to it: an argparse option's `default=` with
its `help=`, a dataclass or pydantic field with its docstring, `Field(description=...)` or comment, a
function parameter's default with the paragraph of the docstring that names it, a C++ member initialiser
with its comment. It reads the default the text states (`default: 4`, `defaults to True`,
`(default 0.9)`) and reports the text when it states the base's value and the change set another one.

Two more places state a default away from the value:

- C++ help texts of hand-written parsers that hard-code it (`"log output format (default: json)"`,
  `"(default: %s)", "f32"`). The option is tied to the field its parse branch sets (`arg ==
  "--graph-reduce-type"` -> `params.reduce_type = argv[i]`, or a word map `"json"` -> `log_json = true`)
  and the text to that field's member initialiser (`std::string reduce_type = "f16";`, read in the
  changed files, else the repository). Reported when the change writes the help line or the initialiser
  and the text states another value (for an untouched help text: the value the initialiser had before).
- Markdown and reStructuredText files of the repository: when the change alters a default, the lines
  that name its option or config key and state the old value as its default, on the same line
  (`--batch-size N: ... (default: 512)`) or in a table row's `Default` column. Options are the flags
  whose parse branch sets the changed C++ field, an argparse option's flags, a config field's generated
  flag (`max_running_requests` -> `--max-running-requests`); keys are DeepSpeed-style constants
  (`X = "initial_scale_power"` with `X_DEFAULT = 16`).

Not flagged: texts that state no default or a placeholder (`%(default)s`, `(default: %d)` filled from
the field), values the change does not alter, texts that already state the new value, words that are no
value (`none`, `auto`, `same as --threads`), a help text next to a sentinel initialiser (`-1`, `NAN`),
options that set several fields, a default respelled rather than replaced (`"f16"` -> `GGML_TYPE_F16`),
change logs and release notes, a document beside another program that registers the same flag for a
field of its own, a Python flag that another script registers too, and config keys without `_` or `-`
(`enabled` names a switch in every section).

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

from reviewbot.analysis.defaults.doc_files import stale_doc_files
from reviewbot.analysis.defaults.docs import StaleDefault, stale_defaults
from reviewbot.analysis.defaults.stale_help import stale_help_defaults
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "stale-doc-default"
severity = Severity.P3
summary = "A help text, docstring, comment or doc page still states a default the code no longer has."

_WHAT = {
    "help": "help text",
    "docstring": "docstring",
    "comment": "comment",
    "description": "description",
    "doc": "documentation",
}


def _suggestion(path: str) -> str:
    """The fix in the file's own terms: argparse's placeholder for Python, the field for C++, words for docs."""
    if path.endswith(".py"):
        return "stale-doc-default.suggestion"
    if path.endswith((".md", ".rst", ".txt", ".markdown", ".adoc")):
        return "stale-doc-default.suggestion.docs"
    return "stale-doc-default.suggestion.cpp"


def _finding(d: StaleDefault) -> Finding:
    return Finding.make(
        rule=id,
        severity=severity,
        path=d.path,
        line=d.doc_line,
        anchor=f"{d.name}|{d.what}" if not d.value_path else f"{d.name}|{d.what}|{d.doc_line}",
        title=msg("stale-doc-default.title", what=_WHAT[d.what], name=d.name, stated=d.stated, actual=d.new),
        evidence=(
            msg("stale-doc-default.doc", place=place(d.path, d.doc_line), text=clip(d.doc_text, 120)),
            msg(
                "stale-doc-default.default",
                place=place(d.value_path or d.path, d.line),
                text=clip(d.value_text, 120),
                old=d.old,
            ),
        ),
        suggestion=msg(_suggestion(d.path), actual=d.new),
        extra=(("field", d.field or d.name),),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    texts = {f.path: (f.base_text, f.head_text) for f in ctx.change.files}
    for d in stale_defaults(changed, texts):
        yield _finding(d)
    for d in stale_help_defaults(changed, texts, ctx.index):
        yield _finding(d)
    for d in stale_doc_files(changed, texts, ctx.change.head_tree, ctx.index):
        yield _finding(d)
