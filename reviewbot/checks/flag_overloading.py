"""flag-overloading (P3): one derived flag gates different behaviours at different read sites.

## What it does
For every field the change derives, follows its read sites in the repository (one level of aliasing,
`self.flag = cfg.flag` then `if self.flag:`) and collects what each read gates. When two or more sites
gate different behaviours — different calls in the branch the flag controls — the flag carries more than
one meaning, and the finding lists each site with what it gates.

## Why is this bad?
Whoever sets the flag for one purpose (skip the rope kernel) also switches the other behaviour (skip the
KV-cache write). The derivation is only correct while an unstated invariant holds that makes both
effects safe at once; nothing asserts it.

## Example
```python
if self.attn_configs.need_rope_kv_cache:          # aiter.py: gates the fused rope kernel
    fmha_input = self.rope_kvcache_op.forward(qkv, kv_cache, seq_len)
...
if self.need_rope_kv_cache:                        # py_flashinfer_mha.py: gates the KV-cache write
    self.kv_cache_write_op.forward(qkv, kv_cache)
```

## Use instead
Split the flag into one flag per behaviour, or document both meanings where the field is declared and
fail fast where the invariant could break (`assert not (not need_rope_kv_cache and kv_cache is not None)`).
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import place
from reviewbot.lang.facts import FieldRead
from reviewbot.lang.index import is_test_path
from reviewbot.model.finding import Finding, Severity

id = "flag-overloading"
severity = Severity.P3
summary = "The derived flag is read at sites that gate different behaviours."


def _behaviour(r: FieldRead) -> frozenset[str]:
    stmts = r.gated or r.gated_else  # `gated` runs when the flag is true, whatever the spelling
    return frozenset(c for s in stmts for c in s.calls)


def _describe(r: FieldRead) -> str:
    stmts = r.gated or r.gated_else  # `gated` runs when the flag is true, whatever the spelling
    via = f" (via `{r.alias}`, bound at line {r.alias_line})" if r.alias else ""
    what = "; ".join(f"`{s.text}`" for s in stmts[:2]) or "nothing"
    return f"{place(r.path, r.line)}{via} gates {what}"


def run(ctx: CheckContext) -> Iterable[Finding]:
    done: set[str] = set()
    for d in ctx.derivations:
        a = d.head
        if a.field in done:
            continue
        done.add(a.field)
        sites = [
            r
            for r in ctx.index.reads(a.field)
            if r.in_condition and not is_test_path(r.path) and _behaviour(r)
        ]
        behaviours: dict[frozenset[str], FieldRead] = {}
        for r in sorted(sites, key=lambda r: (r.path, r.line)):
            behaviours.setdefault(_behaviour(r), r)
        if len(behaviours) < 2:
            continue
        distinct = list(behaviours.values())
        shared = frozenset.intersection(*behaviours)
        calls = sorted({c for b in behaviours for c in b - shared})
        yield Finding(
            rule=id,
            severity=severity,
            path=a.path,
            line=a.line,
            title=(
                f"`{a.field}` gates {len(distinct)} different behaviours "
                f"({', '.join(f'`{c}`' for c in calls[:4])}); setting it for one also switches the others."
            ),
            anchor=f"{a.field}|" + "|".join(sorted(",".join(sorted(b)) for b in behaviours)),
            evidence=tuple(_describe(r) for r in distinct),
            suggestion=(
                f"Document every meaning of `{a.field}` where it is declared and fail fast where the unstated "
                "invariant could break, or split it into one flag per behaviour."
            ),
            extra=(("field", a.field), ("sites", str(len(distinct)))),
        )
