"""formatting-noise (P3; opt-in): code re-indented or re-spaced in a file whose logic the change also alters.

Opt-in (off unless `.reviewbot.toml` has `[review] enabled = ["formatting-noise"]`): on the labelled
corpus no maintainer labelling blind asked for it (0 of 2 train and 0 of 4 test findings were labelled),
and a formatter run is a project's own policy, which its CI enforces better than a reviewer's note.

## What it does
In a file where the change alters logic, reports the hunks that only re-space code: lines whose
indentation or inner spacing changed while their tokens did not, when there are at least
`MIN_RESPACED` (3) such lines in the file (a block re-indented, a list re-aligned). A hunk counts as
whitespace-only when the whole old and new text of the hunk, context lines included, are equal once
whitespace is removed: a line moved within a list (`[A, B]` -> `[B, A]`) is a reorder, not noise.

Incidental edits are not reported: blank lines added or removed, trailing whitespace, a final newline,
one or two re-spaced lines, and whitespace in a file whose logic the change does not touch (a file that
is only reformatted is a formatting change of its own).

## Why is this bad?
Re-indenting code next to a logic change makes the change harder to review and to revert, and hides
the lines that matter among lines that do not.

## Example
```python
def derive(cfg):
    if not cfg.use_kvcache:          # the logic change
        cfg.need_rope_kv_cache = False
...
def names(cfg):                      # the same change re-aligns an unrelated block
    return [cfg.a,  cfg.b,
            cfg.c,  cfg.d,
            cfg.e,  cfg.f]
```

## Use instead
Keep the logic change minimal; send the reformatting in its own commit or PR.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import MAX_TITLE, clip
from reviewbot.lang.facts import lang_for_path
from reviewbot.model.change import ChangedFile, Hunk
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "formatting-noise"
severity = Severity.P3
summary = "Code re-indented or re-spaced in a file whose logic the change also alters."


def _evidence(path: str, noise: list[Hunk]) -> list[Message | str]:
    """At most three lines: the first two hunks, then how many more."""
    lines: list[Message | str] = [
        clip(f"{path}:{h.target_start} {h.header.strip() or '@@'}", 200) for h in noise[:2]
    ]
    if len(noise) > 2:
        lines.append(
            msg(
                "formatting-noise.more",
                count=len(noise) - 2,
                lines=[str(h.target_start) for h in noise[2:8]],
            )
        )
    return lines


MIN_RESPACED = 3  # re-spaced lines with content in a file before the rule speaks


def _side(text: str | None, start: int, length: int) -> list[str]:
    lines = (text or "").splitlines()
    return lines[max(start - 1, 0) : max(start - 1, 0) + length]


def whitespace_only(f: ChangedFile, h: Hunk) -> bool:
    """The hunk's old and new text, context lines included, are equal without whitespace (a line moved
    past a context line is a reorder, not a whitespace change). Without the texts: its own lines."""
    if f.base_text is None or f.head_text is None:
        return h.whitespace_only
    old = _side(f.base_text, h.source_start, h.source_length)
    new = _side(f.head_text, h.target_start, h.target_length)
    return "".join("".join(t.split()) for t in old) == "".join("".join(t.split()) for t in new)


def respaced(h: Hunk) -> int:
    """Lines with content whose spacing changed (not blank lines, not trailing whitespace)."""
    before = Counter(t.rstrip() for _, t in h.removed if t.strip())
    after = Counter(t.rstrip() for _, t in h.added if t.strip())
    return sum((before - after).values())


def run(ctx: CheckContext) -> Iterable[Finding]:
    source = [f for f in ctx.change.files if f.skipped is None and lang_for_path(f.path) is not None]
    for f in source:
        if not any(h.added or h.removed for h in f.hunks):
            continue
        flags = [whitespace_only(f, h) for h in f.hunks]
        if all(flags):
            continue  # no logic change in this file: nothing to mix into
        noise = [h for h, ws in zip(f.hunks, flags, strict=True) if ws and respaced(h)]
        if sum(respaced(h) for h in noise) < MIN_RESPACED:
            continue
        first = noise[0]
        line = first.added[0][0] if first.added else max(first.target_start, 1)
        head_lines = (f.head_text or "").splitlines()
        context = next((t.strip() for t in head_lines[line - 1 : line + 3] if t.strip()), "")
        # the English title is clipped as before; other languages are capped by the report
        removed = sum(len(h.removed) for h in noise)
        added = sum(len(h.added) for h in noise)
        title = msg(
            "formatting-noise.title.whitespace",
            count=len(noise),
            path=f.path,
            added=added,
            removed=removed,
        )
        finding = Finding.make(
            rule=id,
            severity=severity,
            path=f.path,
            line=line,
            title=title,
            anchor=f"whitespace|{f.path}|{context}",
            evidence=_evidence(f.path, noise),
            suggestion=msg("formatting-noise.suggestion"),
        )
        yield finding.with_(title=clip(finding.title, MAX_TITLE))
