"""guard-ignores-coupled-flag (P2): a rule turns off code that also applies a config field the guard never tests.

## What it does
For a derivation that forces a boolean flag under a guard (`if (G) flag = false;`), follows every read
site of the flag — through the aliases the front ends resolve (`self.flag = cfg.flag`) — into the code
the forced value turns off: the statements in the gated branch, and one or two call levels further
(methods of objects built from the same config, methods of the same class, functions handed the config).
It collects the config fields that code consumes. A field is reported when the guard does not test it
and the same derivation function does not force it to a neutral value whenever the guard holds (decided
with a truth table: a sibling such as `fuse_qkv_add_bias = ... ? false : true` under the same predicate
is accounted for). The evidence names where the field is consumed, the call chain, and the skipped site.

## Why is this bad?
The skipped code does more than the rule's author had in mind. For a configuration that sets the coupled
field — a model with `use_logn_attn` whose rope style is left at `No`, served for a non-LM task — the
rule silently drops what that field asks for (log-n query scaling) and the output changes without an
error; nothing in the guard or the tests mentions the field.

## Example
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;   // skips FusedRopeKVCacheOp.forward, which also applies use_logn_attn
}
```

## Use instead
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache && !config.use_logn_attn) {
    config.need_rope_kv_cache = false;
}
```
or fail fast on the contradictory combination (`use_logn_attn` with the fused kernel skipped), and pin the
row with the coupled field set in the derivation's test.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.coupled import Consumer, CoupledField, coupled_fields
from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach import describe_reach
from reviewbot.checks.base import CheckContext
from reviewbot.checks.missing_tests import rows_to_pin
from reviewbot.checks.util import assignment_anchor, place, short_function
from reviewbot.lang.facts import Lang
from reviewbot.model.finding import Finding, Location, Severity

id = "guard-ignores-coupled-flag"
severity = Severity.P2
summary = "A guarded rule turns off code that also consumes a config field the guard never tests."

_OPPOSITE = {"True": "False", "False": "True"}


def _receiver_prefix(d: ChangedDerivation) -> str:
    a = d.head
    receiver = a.target.rsplit(".", 1)[0] if "." in a.target else ""
    if a.lang is Lang.PYTHON and a.text.lstrip().startswith("self."):
        receiver = f"self.{receiver}" if receiver else "self"
    return f"{receiver}." if receiver else ""


def _added_condition(d: ChangedDerivation, c: CoupledField, neutral: str) -> str:
    """The term the guard needs so the rule stays off while the field asks for the skipped behaviour."""
    name = _receiver_prefix(d) + c.field
    want_off = neutral == "False"  # the rule may fire only while the field is at its neutral value
    if d.head.lang is Lang.CPP:
        name = name.replace(".", "->") if name.startswith("this.") else name
        return f"&& !{name}" if want_off else f"&& {name}"
    return f"and not {name}" if want_off else f"and {name}"


def _replacement(ctx: CheckContext, d: ChangedDerivation, term: str) -> str | None:
    """The `if` line with the term added, when the guard is written once on that line."""
    a = d.head
    changed = ctx.change.file(a.path)
    if changed is None or changed.head_text is None or a.guard_line is None or not a.guard_text:
        return None
    lines = changed.head_text.split("\n")
    if not 0 < a.guard_line <= len(lines):
        return None
    line = lines[a.guard_line - 1]
    if line.count(a.guard_text) != 1:
        return None
    return line.replace(a.guard_text, f"{a.guard_text} {term}")


def _consumed(c: Consumer) -> str:
    where = f" inside `{c.function}`" if c.function else ""
    via = f" (via `{c.alias}`, bound at line {c.alias_line})" if c.alias else ""
    return f"consumed at {place(c.path, c.line)}{where}{via}: {c.gates}"


def _row(d: ChangedDerivation, ctx: CheckContext, c: CoupledField, neutral: str) -> str:
    cols, rows = rows_to_pin(d, ctx.index)
    inputs, _ = rows[0]
    keep = inputs[-1]
    cells = [f"{col}={val}" for col, val in zip(cols, inputs, strict=True)]
    cells.append(f"{c.field}={_OPPOSITE.get(neutral, 'True')}")
    return f"({', '.join(cells)}) -> `{d.head.field}` stays {keep} (or the combination is rejected)"


def _at_risk(ctx: CheckContext, d: ChangedDerivation, c: CoupledField) -> list[str]:
    """Model configs that reach the rule and set the coupled field themselves."""
    reach = describe_reach(d.head.guard, ctx.index)
    if reach is None:
        return []
    leaf = c.field.rsplit(".", 1)[-1]
    out: list[str] = []
    for m in reach.builders:
        if m.excluded:
            continue
        writes = [
            w
            for w in ctx.index.writers(leaf)
            if w.path == m.path and w.function == m.function and w.value not in (c.consumers[0].neutral,)
        ]
        for w in writes[:1]:
            out.append(
                f"at risk: {m.name} reaches the rule and sets `{c.field}` at {place(w.path, w.line)} "
                f"`{w.text or w.value}`"
            )
    return out


def _finding(ctx: CheckContext, d: ChangedDerivation, c: CoupledField) -> Finding:
    a = d.head
    first = c.consumers[0]
    sk = first.skipped
    fn = f"`{first.function}`" if first.function else place(first.path, first.line)
    title = (
        f"When this rule fires, `{c.field}` stops taking effect (consumed at {place(first.path, first.line)} "
        f"inside {fn}, skipped at {place(sk.path, sk.line)}), but the guard never tests `{c.field}`."
    )
    flag_value = "false" if a.value == "False" else "true"
    evidence = [
        f"rule: {place(a.path, a.line)} `{a.text or a.target + ' = ' + a.value}` whenever "
        f"`{a.guard_text or (a.guard.key if a.guard else '')}` holds",
    ]
    for skipped in dict.fromkeys(x.skipped for x in c.consumers):
        where = f" in `{skipped.function}`" if skipped.function else ""
        alias = f", via `{skipped.alias}` bound at line {skipped.alias_line}" if skipped.alias else ""
        evidence.append(
            f"skipped: {place(skipped.path, skipped.line)} `{skipped.text}` does not run when `{a.field}` is "
            f"{flag_value} (read at {place(skipped.path, skipped.read_line)}{where}{alias})"
        )
    for x in c.consumers[:4]:
        for step in x.chain:
            evidence.append(f"call: {step}")
        evidence.append(_consumed(x))
    evidence = list(dict.fromkeys(evidence))
    if c.writes:
        evidence.append(
            f"not forced: in the truth table of the writes of `{c.field}` in `{short_function(a.function)}` "
            f"({', '.join(place(w.path, w.line) for w in c.writes)}), it keeps its input where the guard holds"
        )
    else:
        evidence.append(
            f"not forced: `{short_function(a.function) or a.path}` never sets `{c.field}` under the guard"
        )
    evidence.extend(_at_risk(ctx, d, c))
    term = _added_condition(d, c, first.neutral)
    row = _row(d, ctx, c, first.neutral)
    return Finding(
        rule=id,
        severity=severity,
        path=a.path,
        line=a.guard_line or a.line,
        title=title,
        anchor=f"{assignment_anchor(a)}|{c.field}",
        evidence=tuple(evidence),
        suggestion=(
            f"Add the field to the guard (`{term}`) or fail fast on the contradictory combination, and pin "
            f"the truth-table row {row} in the derivation's test."
        ),
        replacement=_replacement(ctx, d, term),
        extra=(
            ("field", c.field),
            ("consumed", place(first.path, first.line)),
            ("skipped", place(sk.path, sk.line)),
        ),
        related=tuple(Location(x.path, x.line) for x in c.consumers[:4])
        + (Location(sk.path, sk.line, sk.text),),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[str] = set()
    for d in ctx.derivations:
        for c in coupled_fields(d, ctx.index, ctx.calls):
            if c.constrained or c.forced:
                continue
            finding = _finding(ctx, d, c)
            if finding.anchor in seen:
                continue
            seen.add(finding.anchor)
            yield finding
