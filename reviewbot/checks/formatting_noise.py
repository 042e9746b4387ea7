"""formatting-noise (P3): whitespace-only or blank-line-only hunks mixed into a logic change.

## What it does
In a change that alters logic, reports each file's hunks whose only effect is whitespace: blank lines
added or removed, indentation or spacing changed.

## Why is this bad?
Unrelated formatting makes the logic change harder to review and to revert, and hides the lines that
matter among lines that do not.

## Example
```diff
 #include "rtp_llm/cpp/config/ModelConfig.h"
-
 namespace rtp_llm {
```
(in the same PR as a new derivation branch)

## Use instead
Keep the logic change minimal; send formatting in its own commit or PR (or restore the blank line).
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import MAX_TITLE, clip
from reviewbot.lang.facts import lang_for_path
from reviewbot.model.change import Hunk
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "formatting-noise"
severity = Severity.P3
summary = "Whitespace-only hunks are mixed into a logic change."


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


def run(ctx: CheckContext) -> Iterable[Finding]:
    source = [f for f in ctx.change.files if f.skipped is None and lang_for_path(f.path) is not None]
    has_logic = any(not h.whitespace_only for f in source for h in f.hunks)
    if not has_logic:
        return
    for f in source:
        noise = [h for h in f.hunks if h.whitespace_only and (h.added or h.removed)]
        if not noise:
            continue
        first = noise[0]
        if first.added:
            line = first.added[0][0]
        else:  # a pure removal: point at the head line that now follows the removed lines
            line = max(first.removed[0][0] - first.source_start + first.target_start, 1)
        head_lines = (f.head_text or "").splitlines()
        context = next((t.strip() for t in head_lines[line - 1 : line + 3] if t.strip()), "")
        blank = all(not t.strip() for h in noise for _, t in h.removed + h.added)
        kind = "blank-line" if blank else "whitespace"
        # the English title is clipped as before; other languages are capped by the report
        removed = sum(len(h.removed) for h in noise)
        added = sum(len(h.added) for h in noise)
        title = msg(
            "formatting-noise.title." + ("blank" if blank else "whitespace"),
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
            anchor=f"{kind}|{f.path}|{context}",
            evidence=_evidence(f.path, noise),
            suggestion=msg("formatting-noise.suggestion"),
        )
        yield finding.with_(title=clip(finding.title, MAX_TITLE))
