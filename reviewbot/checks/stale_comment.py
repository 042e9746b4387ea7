"""stale-comment (P3): a comment next to changed code still names what the code no longer does.

## What it does
Flags an unchanged full-line comment directly above a statement the change rewrote, when the comment
names a function or identifier that the old statement used and the new one does not (`# kv heads by
gcd` above a formula that no longer calls `gcd`), or states a number that was the old value and is no
longer in the code (`# default 8 blocks` above `reserve = 8` -> `reserve = 16`).

Not flagged: a comment the change also edited; a comment that also names the new word or number; a
word still used by the statement or the lines right after it, also through a getter (`max_model_len`
-> `_get_max_model_len(...)`); a plain word the comment uses as prose ("Forward and sample the next
tokens" above a rewrite of `batch.sample(...)`: only identifier shapes, vowel-less abbreviations such
as `gcd`, or a word written as a call or in backticks count); 0 and 1.

## Why is this bad?
The next reader trusts the comment: a reviewer checks the code against a rule it no longer follows,
and an operator tunes a default the comment misstates.

## Example
```python
# kv heads per rank: gcd of the head count and the TP size
kv_head_num = kv_head_num // tp_size
```

## Use instead
```python
# kv heads per rank: the head count split evenly over the TP ranks
kv_head_num = kv_head_num // tp_size
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.stale_comments import StaleComment, stale_comments
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "stale-comment"
severity = Severity.P3
summary = "A comment next to changed code still names what the code no longer does."

_TEXT = 100


def _finding(s: StaleComment) -> Finding:
    where = place(s.path, s.comment_line)
    title = (
        msg("stale-comment.title.value", place=where, word=s.word, new=s.new)
        if s.number
        else msg("stale-comment.title.word", place=where, word=s.word)
    )
    return Finding.make(
        rule=id,
        severity=severity,
        path=s.path,
        line=s.line,
        anchor=f"{s.comment_line}|{s.word}",
        title=title,
        evidence=(
            msg("stale-comment.comment", text=clip(s.comment, _TEXT)),
            msg("stale-comment.was", text=clip(s.was, _TEXT)),
        ),
        suggestion=msg("stale-comment.suggestion"),
        extra=(("field", s.word), ("comment", where)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    for s in stale_comments(ctx.change):
        yield _finding(s)
