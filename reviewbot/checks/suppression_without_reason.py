"""suppression-without-reason (P3): an inline `reviewbot: ignore[rule-id]` comment that gives no reason.

## What it does
Reports each line the change adds with a suppression comment, `# reviewbot: ignore[rule-id] reason`
(Python) or `// reviewbot: ignore[rule-id] reason` (C++), that names no reason after the rule ids.
A suppression with a reason silences the named rules' findings on its own line and on the line below
it (the review counts them as `suppressed` in its KPI); one without a reason silences nothing.

## Why is this bad?
A suppression is a decision someone made about a finding. Without the reason the next reader cannot
tell whether it still holds, and a bare suppression would let anyone unblock a pull request silently.

## Example
```cpp
config.need_rope_kv_cache = false;  // reviewbot: ignore[unconditional-override]
```

## Use instead
```cpp
// reviewbot: ignore[unconditional-override] embedding models never set the flag themselves
config.need_rope_kv_cache = false;
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.checks.base import CheckContext
from reviewbot.lang.facts import lang_for_path
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

__all__ = ["id", "severity", "summary", "run", "Suppression", "parse_suppression"]

id = "suppression-without-reason"
severity = Severity.P3
summary = "An inline suppression gives no reason."

# `# reviewbot: ignore[a, b] reason` or `// reviewbot: ignore[a] reason`, anywhere on the line.
_SUPPRESSION = re.compile(r"(?:#|//)\s*reviewbot:\s*ignore\[(?P<rules>[^\]]*)\](?P<reason>.*)$")
_CLOSERS = re.compile(r"(\*/|-->)\s*$")  # the end of a block comment is not part of the reason


@dataclass(frozen=True)
class Suppression:
    rules: tuple[str, ...]
    reason: str  # "" when none is given


def parse_suppression(line: str) -> Suppression | None:
    """The suppression comment on `line`, or None."""
    if "reviewbot" not in line:
        return None
    found = _SUPPRESSION.search(line)
    if found is None:
        return None
    rules = tuple(r.strip() for r in found["rules"].split(",") if r.strip())
    reason = _CLOSERS.sub("", found["reason"]).strip(" \t:-—")
    return Suppression(rules, reason if any(c.isalnum() for c in reason) else "")


def run(ctx: CheckContext) -> Iterable[Finding]:
    for f in ctx.change.files:
        if f.skipped is not None or lang_for_path(f.path) is None:
            continue
        for line, text in sorted(f.added_lines.items()):
            found = parse_suppression(text)
            if found is None or found.reason:
                continue
            rules = ", ".join(found.rules) or "?"
            yield Finding.make(
                rule=id,
                severity=severity,
                path=f.path,
                line=line,
                title=msg("suppression-without-reason.title", rules=rules),
                anchor=f"{f.path}|{text.strip()}",
                evidence=(f"{f.path}:{line} `{text.strip()[:200]}`",),
                suggestion=msg("suppression-without-reason.suggestion", rules=rules),
            )
