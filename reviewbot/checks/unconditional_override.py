"""unconditional-override (P2): a derivation overwrites a field that other code sets explicitly.

## What it does
Flags a write added or changed by the change — under a derived condition or unconditionally — to a field
that other code in the repository also sets explicitly (model configs, bindings, environment parsing),
when the write neither checks whether the field was set explicitly / is still at its default nor logs
that it applied. The evidence lists the other writers and how wide the guard is when its atoms sit at
their defaults.

## Why is this bad?
The central derivation silently wins over every explicit setting: a model that sets the flag on purpose,
or an operator who sets it through the bindings, is overridden without a trace in the logs and without a
way to turn the optimisation off. When the guard's atoms are true at their defaults, the rule reaches far
more configurations than its author had in mind.

## Example
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;  // also set by models/bert.py and the pybind setter
}
```

## Use instead
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache && !attn_config.need_rope_kv_cache_explicit) {
    RTP_LLM_LOG_INFO("need_rope_kv_cache: true -> false (rope style No, no KV cache)");
    config.need_rope_kv_cache = false;
}
```
or set the flag in the target model's own config builder and leave the central derivation alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.reach import describe_reach
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import assignment_anchor, place
from reviewbot.lang.facts import AssignKind
from reviewbot.lang.index import is_test_path
from reviewbot.model.finding import Finding, Severity

id = "unconditional-override"
severity = Severity.P2
summary = "A derivation overwrites a field that other code sets explicitly, without checking or logging."

_WRITER_KINDS = (
    AssignKind.PLAIN,
    AssignKind.KEYWORD,
    AssignKind.BINDING,
    AssignKind.AUGMENTED,
    AssignKind.TERNARY,
)


def _is_copy(value: str, field: str) -> bool:
    """`self.flag = cfg.flag` passes a value along; it is a read, not an explicit setting."""
    return value == field or value.endswith("." + field)


def run(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[str] = set()
    for d in ctx.derivations:
        a = d.head
        guard_reads_target = a.guard is not None and any(a.field in atom.text for atom in a.guard.atoms())
        if a.checks_target_first or guard_reads_target or a.logs_in_branch:
            continue
        others = [
            w
            for w in ctx.index.writers(a.field)
            if w.kind in _WRITER_KINDS
            and not is_test_path(w.path)
            and not (w.path == a.path and w.function == a.function)
            and not _is_copy(w.value, a.field)
        ]
        if not others:
            continue
        anchor = assignment_anchor(a)
        if anchor in seen:
            continue
        seen.add(anchor)
        others.sort(key=lambda w: (w.path, w.line))
        evidence = [
            f"writer: {place(w.path, w.line)} `{w.text or w.target + ' = ' + w.value}`" for w in others
        ]
        reach = describe_reach(a.guard, ctx.index)
        extra: list[tuple[str, str]] = [("field", a.field), ("writers", str(len(others)))]
        if a.guard is None:
            scope = "unconditionally"
        else:
            scope = f"whenever `{a.guard_text or a.guard.key}` holds"
        if reach is not None:
            for ar in reach.atoms:
                for fact in (ar.default, ar.derived):
                    if fact:
                        evidence.append(fact)
            if reach.sentence:
                evidence.append(reach.sentence)
                extra.append(("reach", reach.sentence))
        yield Finding(
            rule=id,
            severity=severity,
            path=a.path,
            line=a.line,
            title=(
                f"`{a.target} = {a.value}` overrides {len(others)} explicit setting(s) of `{a.field}` {scope}, "
                "without checking them and without a log line."
            ),
            anchor=anchor,
            evidence=tuple(evidence),
            suggestion=(
                "Prefer the local extension point (set the flag in the target model's config builder); or derive "
                "only while the field is still at its default, log once at initialisation when the override "
                "applies (old and new value, the guard's inputs), and offer a switch to turn it off."
            ),
            extra=tuple(extra),
        )
