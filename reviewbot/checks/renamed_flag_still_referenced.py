"""renamed-flag-still-referenced (P2 in code, P3 in docs): a removed CLI flag is still named by the repository.

## What it does
Finds the command-line flags a changed file stops registering (Python `add_argument("--foo-bar", ...)`,
C++ `arg == "--foo-bar"` and argument tables such as `{"-fa", "--flash-attn"}`) that no file of the
head tree registers any more, with no alias left (`"--foo-bar"` quoted anywhere in the same file counts
as one). It reports the flag when the head tree still names it: P2 when code, scripts, configs or tests
do (help texts, log messages, example launch scripts and YAML, CI), P3 when only documentation does,
or when the base hid the option from `--help` (`help=argparse.SUPPRESS`: a deprecated or internal
spelling, not part of the documented command line; the one such P2 of dev-scan sample 8 was judged wrong).

Not flagged: a flag kept as an alias or a deprecated spelling, a flag that moved to another file or
tool, a flag the file now generates from a dataclass field of the same name (`tyro`, `HfArgumentParser`,
`"--" + name`), itself or through a changed module it imports that does (a script handing its dataclass
to the project's tyro config manager), or from a dataclass of another changed file (Megatron's
`ArgumentGroupFactory(ProfilingConfig)`), a removed flag nothing names any more, mentions in change logs and release notes, the flags of a file the
change deletes (a tool that goes away with its own parser: the scripts that name `--batch_size` run
another program, which may still take it), a C++ `--ctx_size` whose parser now reads `_` as `-`
(`std::replace(arg.begin(), arg.end(), '_', '-')`) and registers `--ctx-size`: that parser is the changed
file's own, or, when the file no longer registers `--ctx-size` (its tool moved to the common parser),
another source of the head tree. A config key spelled as the destination (`moe_token_dropping: False`)
does not count while a Python source still declares a field of that name: the config file sets that
field (as in dev-scan sample 8), not the flag. Mentions that
already tell the reader the flag is gone do not count either: a line the change itself wrote (its own
migration note), a line that says the flag was deprecated, removed, renamed or replaced, and a
mention inside a comment of a script, config or source (`# Check if --estimate.memory=True is in the
arguments` above a command that passes the new flag: nothing a user runs passes the old one; dev-scan
sample 12 judged that P2 wrong).

## Why is this bad?
A launch script, an example config or a test that passes the old flag now fails at start-up with
"unrecognized arguments"; a help text or log message that tells the user to pass it sends them to an
option that no longer exists. Docs that name it mislead every new user.

## Example
```python
parser.add_argument("--flash-attention", action="store_true")  # was "--flash-attn"
# scripts/serve.sh still runs: python -m serve --flash-attn
```

## Use instead
```python
parser.add_argument("--flash-attention", "--flash-attn", dest="flash_attention", action="store_true")
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from reviewbot.analysis.removals.named_flags import RemovedFlag, dest, is_doc_reference, removed_flags
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place, places
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "renamed-flag-still-referenced"
severity = Severity.P2
summary = "A CLI flag removed without an alias is still named in the repository's code, scripts or docs."


def _alias(r: RemovedFlag) -> str:
    if r.path.endswith(".py"):
        return f'parser.add_argument("--new-name", "{r.flag}", dest=...)'
    return f'arg == "--new-name" || arg == "{r.flag}"'


def _finding(r: RemovedFlag) -> Finding:
    code = [x for x in r.refs if not is_doc_reference(x[0])]
    docs = [x for x in r.refs if is_doc_reference(x[0])]
    evidence = [
        msg("renamed-flag-still-referenced.was", place=place(r.path, r.base_line), text=clip(r.text, 100))
    ]
    if code:
        evidence.append(
            msg("renamed-flag-still-referenced.code", places=places([place(p, ln) for p, ln, _ in code]))
        )
        path, line, text = code[0]
        evidence.append(
            msg("renamed-flag-still-referenced.first", place=place(path, line), text=clip(text, 100))
        )
    if docs:
        evidence.append(
            msg("renamed-flag-still-referenced.docs", places=places([place(p, ln) for p, ln, _ in docs]))
        )
    return Finding.make(
        rule=id,
        severity=Severity.P2 if code and not r.hidden else Severity.P3,
        path=r.path,
        line=r.line,
        anchor=f"{r.flag}",
        title=msg("renamed-flag-still-referenced.title", flag=r.flag, count=len(r.refs)),
        evidence=tuple(evidence[:3]),
        suggestion=msg("renamed-flag-still-referenced.suggestion", flag=r.flag, alias=_alias(r)),
        extra=(
            ("field", dest(r.flag) if r.path.endswith(".py") else r.flag),
            ("flag", r.flag),
            ("code_refs", str(len(code))),
            ("doc_refs", str(len(docs))),
        ),
    )


# A line that tells the reader the flag is gone: a migration note, not a stale mention.
_GONE = re.compile(r"(?i)\b(?:deprecat\w*|removed|no longer|obsolete|renamed|replaced)\b")


def live_refs(r: RemovedFlag, added: dict[str, set[int]]) -> tuple[tuple[str, int, str], ...]:
    """The references that still send someone to the flag: not a line this change wrote (the
    author's own note or migration message) and not one that says the flag was removed or renamed."""
    return tuple(
        (path, line, text)
        for path, line, text in r.refs
        if line not in added.get(path, set()) and not _GONE.search(text)
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    texts = {f.path: (f.base_text, f.head_text) for f in ctx.change.files}
    added = {f.path: set(f.added_lines) for f in ctx.change.files if f.skipped is None}
    for r in removed_flags(changed, texts, ctx.change.head_tree, ctx.index):
        refs = live_refs(r, added)
        if refs:
            yield _finding(replace(r, refs=refs))
