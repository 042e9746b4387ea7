"""guard-ignores-coupled-flag (P2): a rule turns off the only code that applies a config switch the guard never tests.

## What it does
For a derivation that forces a boolean flag under a guard (`if (G) flag = false;`), follows every read
site of the flag — through the aliases the front ends resolve (`self.flag = cfg.flag`) — into the code
the forced value turns off: the statements in the gated branch, and one or two call levels further
(methods of objects built from the same config, inherited ones included; methods of the same class;
functions handed the config). It collects the config fields that code consumes and reports, in one
finding per rule, the **switches that lose all their effect** when the rule fires:

- the field is a switch: declared `bool` (or defaulting to a boolean), or an enum tested in a condition.
  Sizes, dtypes and lengths are not: they only parametrise the skipped work;
- the guard does not test it, and the derivation function does not force it to a neutral value
  whenever the guard holds (decided with a truth table: a sibling such as
  `fuse_qkv_add_bias = ... ? false : true` under the same predicate is accounted for);
- the guard does not make it irrelevant: a guard that turns a feature off (`rope_config.style ==
  RopeStyle::No`) takes the feature's parameters with it (`rope_config.is_neox_style`);
- it is consumed on a path that can run while the guard holds: a guard that turns the KV cache off
  rules out decode implementations, so their consumers are no evidence;
- nothing else reads it: every file that mentions the field was searched, and every read that is not a
  copy, a log line or a `to_string` lies in the skipped code or in code the guard rules out. A function
  the skipped code calls is skipped only when no other call site runs it: one that another caller still
  runs (a gradient hook calling `start_grad_sync` where the skipped branch did too) keeps its reads,
  unless that caller sits under a condition naming the flag (a parameter the flag is handed in as);
- the forced flag is configuration (`analysis.scope.in_config_code`: a config owner, file or deriving
  function, or a value or guard that reads one): a runtime state machine (`if (token == eos)
  has_next_token = false;` in a server's token loop) that stops reading its own output fields
  (`truncated`) is the loop working, not a switch lost (dev-scan sample 13, a P2 judged wrong);
- the guard is not a platform test: a rule whose every atom asks what the machine has
  (`is_cuda_available()`, `is_hip()`, `flash_attn_available()`, `HAS_TRITON`) turns off code that cannot run
  there anyway, so no configuration loses the switch to it.

The evidence names the skipped site, where each switch is consumed, and whether a model config that
reaches the rule sets the switch; the rest (every site, the call chains) is in the finding's `extra`.

## Why is this bad?
The skipped code does more than the rule's author had in mind. For a configuration that sets the
switch — a model with `use_logn_attn` whose rope style is left at `No`, served for a non-LM task — the
rule silently drops what that switch asks for (log-n query scaling) and the output changes without an
error; nothing in the guard or the tests mentions the switch.

## Example
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;   // skips FusedRopeKVCacheOp.forward, the only code applying use_logn_attn
}
```

## Use instead
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache && !config.use_logn_attn) {
    config.need_rope_kv_cache = false;
}
```
or fail fast on the contradictory combination (`use_logn_attn` with the fused kernel skipped), and pin the
row with the switch set in the derivation's test.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.coupled.switches import Consumer, CoupledField, coupled_fields
from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.configs import describe_reach
from reviewbot.analysis.scope import in_config_code
from reviewbot.checks.base import CheckContext
from reviewbot.checks.missing_tests import rows_to_pin
from reviewbot.checks.util import assignment_anchor, is_platform_atom, place, short_function
from reviewbot.lang.facts import Assignment, Lang
from reviewbot.model.finding import Finding, Location, Severity
from reviewbot.model.messages import Message, clauses, listing, msg

id = "guard-ignores-coupled-flag"
severity = Severity.P2
summary = "A guarded rule turns off the only code that applies a config switch the guard never tests."

_OPPOSITE = {"True": "False", "False": "True"}
_TITLE_NAMES = 3  # switches named in the title; the evidence names them all
_TITLE_CHARS = 160


def _receiver_prefix(d: ChangedDerivation) -> str:
    a = d.head
    receiver = a.target.rsplit(".", 1)[0] if "." in a.target else ""
    if a.lang is Lang.PYTHON and a.text.lstrip().startswith("self."):
        receiver = f"self.{receiver}" if receiver else "self"
    return f"{receiver}." if receiver else ""


def _term(d: ChangedDerivation, c: CoupledField) -> str:
    """The term the guard needs so the rule stays off while the switch asks for the skipped behaviour."""
    name = _receiver_prefix(d) + c.field
    neutral = c.neutral
    cpp = d.head.lang is Lang.CPP
    if cpp and name.startswith("this."):
        name = name.replace(".", "->", 1)
    if c.switch == "enum":
        value = c.default.replace(".", "::") if cpp else c.default
        return f"&& {name} == {value}" if cpp else f"and {name} == {value}"
    want_off = neutral == "False"  # the rule may fire only while the switch is at its neutral value
    if cpp:
        return f"&& !{name}" if want_off else f"&& {name}"
    return f"and not {name}" if want_off else f"and {name}"


def _replacement(ctx: CheckContext, d: ChangedDerivation, terms: str) -> str | None:
    """The `if` line with the terms added, when the guard is written once on that line."""
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
    return line.replace(a.guard_text, f"{a.guard_text} {terms}")


def _row(d: ChangedDerivation, ctx: CheckContext, lost: list[CoupledField]) -> Message:
    cols, rows = rows_to_pin(d, ctx.index)
    cells: list[str] = []
    keep: Message | str = msg("guard-ignores-coupled-flag.its-input")
    if rows:
        inputs, _ = rows[0]
        keep = inputs[-1] if inputs else keep
        cells = [f"{col}={val}" for col, val in zip(cols, inputs, strict=True)]
    for c in lost:
        cells.append(
            f"{c.field}={c.default.rsplit('.', 1)[0] + '.<other>' if c.switch == 'enum' else _OPPOSITE.get(c.neutral, 'True')}"
        )
    return msg("guard-ignores-coupled-flag.row", cells=", ".join(cells), field=d.head.field, keep=keep)


def _where(x: Consumer) -> str:
    fn = f" in `{x.function}`" if x.function else ""
    return f"{place(x.path, x.line)}{fn}"


def _reading_functions(c: CoupledField) -> list[str]:
    """Each function of the skipped code that reads the switch, once, at its first read, by path."""
    first: dict[tuple[str, str], int] = {}
    for x in c.feasible:
        key = (x.path, x.function or "")
        first[key] = min(first.get(key, x.line), x.line)
    return [
        f"`{fn}` ({place(path, line)})" if fn else place(path, line)
        for (path, fn), line in sorted(first.items())
    ]


def _consumed_line(c: CoupledField) -> Message:
    """`use_logn_attn` (bool, AttentionConfig.h:40) is read only by the skipped code: `A` (a.cc:3), ..."""
    decl = f"{c.switch}, {c.declared}" if c.declared else c.switch
    return msg(
        "guard-ignores-coupled-flag.consumed",
        field=c.field,
        decl=decl,
        places=listing(_reading_functions(c), 2),
    )


def _at_risk(ctx: CheckContext, d: ChangedDerivation, lost: list[CoupledField]) -> list[Message]:
    """For each lost switch, the model configs that reach the rule and set it (in the builder or a
    helper it calls) to anything but its neutral value: `Cohere (llama.py:217) sets use_logn_attn
    (llama.py:123)`, by path."""
    reach = describe_reach(d.head.guard, ctx.index)
    if reach is None:
        return []
    out: list[Message] = []
    for c in lost:
        leaf = c.field.rsplit(".", 1)[-1]
        for m in sorted(reach.builders, key=lambda m: (m.path, m.line, m.name)):
            sets = [w for w in m.writes if w.field == leaf and w.value != c.neutral]
            if not m.excluded and sets:
                w = sets[-1]
                out.append(
                    msg(
                        "guard-ignores-coupled-flag.sets",
                        name=m.name,
                        place=place(m.path, m.line),
                        field=c.field,
                        at=place(w.path, w.line),
                    )
                )
    return out


def _finding(ctx: CheckContext, d: ChangedDerivation, lost: list[CoupledField]) -> Finding:
    a = d.head
    names = [c.field for c in lost]
    number = "one" if len(names) == 1 else "many"
    sk = lost[0].feasible[0].skipped
    sites = sorted({(x.skipped.path, x.skipped.line) for c in lost for x in c.feasible})
    risk = _at_risk(ctx, d, lost)
    terms = " ".join(_term(d, c) for c in lost)
    row = _row(d, ctx, lost)
    extra: list[tuple[str, str]] = [
        ("field", ", ".join(names)),
        ("skipped", ", ".join(place(p, n) for p, n in sites)),
    ]
    extra += _extra(a, lost)
    if risk:
        extra.append(("at_risk", "; ".join(str(r) for r in risk)))
    return Finding.make(
        rule=id,
        severity=severity,
        path=a.path,
        line=a.guard_line or a.line,
        title=_title(lost, number),
        anchor=f"{assignment_anchor(a)}|coupled",
        evidence=_evidence(a, lost, sites, risk),
        suggestion=msg(f"guard-ignores-coupled-flag.suggestion.{number}", terms=terms, row=row),
        replacement=_replacement(ctx, d, terms),
        extra=tuple(extra),
        related=tuple(Location(x.path, x.line) for c in lost for x in c.feasible[:2])
        + (Location(sk.path, sk.line, sk.text),),
    )


def _title(lost: list[CoupledField], number: str) -> Message:
    shown = listing([f"`{c.field}`" for c in lost], _TITLE_NAMES)
    first = lost[0].feasible[0]
    reader = (
        msg("guard-ignores-coupled-flag.reader.function", function=first.function)
        if first.function
        else msg("guard-ignores-coupled-flag.reader.code")
    )
    title = msg(f"guard-ignores-coupled-flag.title.{number}", shown=shown, reader=reader)
    if len(str(title)) > _TITLE_CHARS:
        title = msg(f"guard-ignores-coupled-flag.title.{number}.short", shown=shown)
    return title


def _evidence(
    a: Assignment, lost: list[CoupledField], sites: list[tuple[str, int]], risk: list[Message]
) -> list[Message | str]:
    """The skipped statement (and how many more), what consumes each lost switch, and the model
    configs at risk."""
    sk = lost[0].feasible[0].skipped
    more: Message | str = ""
    if len(sites) > 1:
        more = msg(
            "guard-ignores-coupled-flag.more-sites"
            if len(sites) > 2
            else "guard-ignores-coupled-flag.more-site",
            count=len(sites) - 1,
        )
    flag_value = "false" if a.value == "False" else "true"
    fn: Message | str = msg("guard-ignores-coupled-flag.in", function=sk.function) if sk.function else ""
    evidence: list[Message | str] = [
        msg(
            "guard-ignores-coupled-flag.skipped",
            place=place(sk.path, sk.line),
            text=sk.text,
            fn=fn,
            field=a.field,
            value=flag_value,
            more=more,
        ),
    ]
    consumed = [_consumed_line(c) for c in lost]
    if len(consumed) > 1 or risk:
        evidence.append(clauses(consumed))
    else:
        evidence.extend(consumed)
    if risk:
        evidence.append(msg("guard-ignores-coupled-flag.at-risk", places=listing(risk, 2)))
    return evidence


def _extra(a: Assignment, lost: list[CoupledField]) -> list[tuple[str, str]]:
    """Per lost switch: its consumers, call chains, what ruled sites out, and where it is written."""
    extra: list[tuple[str, str]] = []
    for c in lost:
        consumers = c.feasible
        reads = dict.fromkeys(
            f"{_where(x)}: {x.gates}" for x in sorted(consumers, key=lambda x: (x.path, x.line))
        )
        extra.append((f"consumed.{c.field}", "; ".join(reads)))
        chains = list(dict.fromkeys(" -> ".join(x.chain) for x in consumers if x.chain))
        if chains:
            extra.append((f"chain.{c.field}", " | ".join(chains)))
        if c.blocked:
            extra.append((f"ruled_out.{c.field}", c.blocked))
        writes = ", ".join(place(w.path, w.line) for w in c.writes)
        extra.append(
            (
                f"not_forced.{c.field}",
                f"writes in `{short_function(a.function)}`: {writes}"
                if writes
                else f"never set in `{short_function(a.function) or a.path}`",
            )
        )
    return extra


def platform_guard(d: ChangedDerivation) -> bool:
    """Every atom of the guard tests the platform or what is installed: where it holds, the skipped
    code cannot run at all, so no configuration loses a switch to the rule that it had not lost already."""
    g = d.head.guard
    atoms = [atom.text for atom in g.atoms()] if g is not None else []
    return bool(atoms) and all(is_platform_atom(t) for t in atoms)


def run(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[str] = set()
    for d in ctx.derivations:
        if platform_guard(d) or not in_config_code(d.head):
            continue
        lost = [c for c in coupled_fields(d, ctx.index, ctx.calls) if c.lost]
        if not lost:
            continue
        finding = _finding(ctx, d, lost)
        if finding.anchor in seen:
            continue
        seen.add(finding.anchor)
        yield finding
