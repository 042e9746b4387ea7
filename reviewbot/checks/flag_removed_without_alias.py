"""flag-removed-without-alias (P3; opt-in): a command-line flag the base accepted is gone.

## What it does
Finds the command-line flags a changed file stops registering (Python `add_argument("--foo-bar", ...)`,
C++ `arg == "--foo-bar"` and argument tables such as `{"-fa", "--flash-attn"}`) that no file of the
head tree registers or quotes any more: no alias in the same call or table entry, no deprecated
spelling that still forwards to the new option, no move to another file. It reports the flag at the
line that took the definition's place, naming the replacement spelling when there is one. Flags
reported at the same line (one options block dropped or rewritten) are one finding that lists them.

A config-file key the base read and the head no longer does is its own rule, config-key-removed (P2).

Severity: P3, a note for the maintainer. Measured on real commits (docs/accuracy.md), maintainers
labelling blind counted some removals as defects (long-standing flags that launch scripts pass) and most
not at all: in these projects options are renamed and dropped release by release, and what they
flagged more often was the docs, scripts and tests still passing the old spelling
(renamed-flag-still-referenced). At P1 the rule was wrong on 10 of 10 test findings and 9 of 13 train
findings.

Opt-in (off unless `.reviewbot.toml` has `[review] enabled = ["flag-removed-without-alias"]`): even as a
P3 note it was wrong on 9 of 10 test findings (the tenth on an allowed place) and on every train finding
for a flag (its one right train finding was a config key, now config-key-removed); no discriminator
(the flag's age, mentions in docs) separated the removals maintainers flagged from the rest. Its own
findings are off by default; the places that still pass the old spelling stay on, as
renamed-flag-still-referenced.

Not flagged: a flag kept as an alias, a deprecated spelling or a move; a flag the base had already
announced as deprecated (the end of a deprecation cycle); a spelling fix where the usage text already
documented the new spelling; a Python flag argparse still accepts as an abbreviation of the new one;
test files and files the change deletes. When the repository still names the old flag,
renamed-flag-still-referenced reports those places as well.

## Why is this bad?
Every launch script, service unit, Helm chart or benchmark that passes the old flag now fails at
start-up with "unrecognized arguments" (or "invalid argument"), after an upgrade that looked harmless.
Users learn about the rename from a crash, not from a warning. A dropped config key is worse in one
way (config-key-removed): configs that set it keep loading, and the setting is silently ignored.

## Example
```python
parser.add_argument("--flash-attention", action="store_true")  # was "--flash-attn"
```

## Use instead
```python
parser.add_argument("--flash-attention", "--flash-attn", dest="flash_attention", action="store_true")
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.removals.flags import DroppedFlag, dropped_flags
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import listing, msg

id = "flag-removed-without-alias"
severity = Severity.P3
summary = "A command-line flag the base accepted is removed with no alias, so launches that pass it fail."


def _alias(d: DroppedFlag) -> str:
    new = d.replacements[0] if d.replacements else "--new-name"
    if d.removed.path.endswith(".py"):
        return f'add_argument("{new}", "{d.removed.flag}", ...)'
    if "==" in d.removed.text:  # an `if (arg == ...)` chain
        return f'arg == "{new}" || arg == "{d.removed.flag}"'
    return f'{{"{new}", "{d.removed.flag}"}}'


def _finding(group: list[DroppedFlag]) -> Finding:
    """The flags one removed block registered, reported at the line that took its place as one finding:
    one decision of the change (an options block dropped or rewritten), read once, not once per flag."""
    d, first = group[0], group[0].removed
    flags = [g.removed.flag for g in group]
    evidence = [
        msg(
            "flag-removed-without-alias.was",
            place=place(first.path, first.base_line),
            text=clip(first.text, 100),
        )
    ]
    if len(group) > 1:
        title = msg("flag-removed-without-alias.title.many", flags=listing([f"`{f}`" for f in flags], 3))
        evidence.append(
            msg("flag-removed-without-alias.also", flags=listing([f"`{f}`" for f in flags[1:]], 8))
        )
    else:
        title = msg("flag-removed-without-alias.title", flag=first.flag)
        if d.replacements:
            evidence.append(msg("flag-removed-without-alias.replaced", flags=list(d.replacements)))
    evidence.append(msg("flag-removed-without-alias.nowhere", flag=", ".join(flags[:3])))
    return Finding.make(
        rule=id,
        severity=severity,
        path=first.path,
        line=first.line,
        anchor="|".join(flags),
        title=title,
        evidence=tuple(evidence),
        suggestion=msg("flag-removed-without-alias.suggestion", flag=first.flag, alias=_alias(d)),
        extra=(
            ("field", ", ".join(dict.fromkeys(g.field for g in group))),
            ("flag", ", ".join(flags)),
            ("replacement", ", ".join(dict.fromkeys(r for g in group for r in g.replacements))),
        ),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    texts = {f.path: (f.base_text, f.head_text) for f in ctx.change.files}
    groups: dict[tuple[str, int], list[DroppedFlag]] = {}
    for d in dropped_flags(changed, texts, ctx.change.head_tree, ctx.index):
        groups.setdefault((d.removed.path, d.removed.line), []).append(d)
    for group in groups.values():
        yield _finding(group)
