"""unconditional-override (P2): a derivation overwrites a field that other code sets explicitly.

## What it does
Flags a write added or changed by the change — under a derived condition or unconditionally — to a field
of a config owner (a C++ struct/class, a Python class or dataclass) that another **source** sets
explicitly on the **same owner**: the bindings that let the other language set it (`def_readwrite`,
`def_property`), code in the other language writing through them, a model's config builder, the
environment, a command-line option's handler, a value read from a config file. It fires only when the
write neither checks whether the field was set explicitly / is still at its default nor logs that it
applied.

An explicit setting is another source, never the same one: another derivation in the code, the same
expression computed elsewhere (`args.vpp = args.layers // args.pp` in two argument validators), or a
second command-line parser are not settings this write overrides. A write that fills the field in only
while it is unset overrides nothing either (`analysis.writes.sources.fills_in`): a check of the field
in its guard, in a helper its guard calls (`if (needsDefaultDtype(config))` returning
`config.kv_cache_dtype.empty()`), in an early `return` / `continue` before it, or around every call of
its function (`if cfg.x is None: apply_defaults(cfg)`); a value that reads the field
(`x = json_value(data, "x", defaults.x)`, `x &= ok`, or a helper of the file that returns it on some path:
`self.cutlass = _cutlass(target)` keeping `self.cutlass` on CUDA); a `catch` / `except` clause. Nor is the user's
own setting: a command-line option's handler (it reads `argv`, runs when an option string matched, or
is a lambda registered for `"--option"`).

An environment setting of the project (a variable the repository reads, named with the project's own
prefix, `SGLANG_`, `VLLM_`) that a line the change adds writes (`os.environ["SGLANG_X"] = ...`,
`envs.SGLANG_X.set(...)`) without reading it first (`os.environ.setdefault`, `if not envs.X.is_set()`)
replaces what the operator exported: flagged too (`analysis.writes.env_overwrites`), except in a script
beside the package (`examples/`, `benchmarks/`, `tools/`: the script configures the engine it starts, as
a command line would; dev-scan sample 13, two such P2s judged wrong), and unless every read of
it is new in the change (a channel it opens to its own workers: nobody exported it before).

A Python field that is a command-line option of the same file (`parser.add_argument("--use-x")`,
written as `args.use_x` or as the arguments class's own `self.use_x`) is set explicitly by the user: a
line the change adds that overwrites it, unchecked and unlogged, is flagged too, unless the option is a
`store_true` (`store_false`) switch and the write is `True` (`False`): the command line can only ask
for the value written, so no explicit choice is lost (dev-scan sample 9: 3 such findings, all wrong).

Only overrides this change makes are reported: not a write whose statement and conditions it left as
they were; not one under a switch it introduces (`--grad-reduce-in-bf16`: what it replaces is what
turning it on asks for; `analysis.writes.new_switches`); not a write the base made under conditions the
head's guard still holds (a moved block, or one nested under one more condition); not a write the base
made whose guard the change only gave another case (`nextn > 0` -> `nextn > 0 || external_mtp`: the
override was decided before, the change extends it to one more model; dev-scan sample 13, two P2s
judged wrong).

Writers are matched by owner, never by bare attribute name: `weight.data_type = ...` on a weight object
does not override `ModelConfig::data_type`. The owner of a write is the type of its receiver as far as
it is known (the semantic model's owner, a binding's class, the enclosing class of `self.x` / a bare
member, the receiver's name spelling a declaring class, or the only class that declares the field);
writes whose owner stays unknown are not counted.

Not counted as explicit settings, and not flagged as overrides:
- constructors declaring their own fields (`self.x = None` in `__init__`, member initialisers in `T::T`);
- pickling and copying (`__setstate__`, `__reduce__`, pybind11 `py::pickle` unpacking `t[0].cast<int>()`);
- arithmetic re-derivations of the same field (`config.head_num = config.head_num / tp_size`);
- copies that pass the value along (`self.flag = cfg.flag`);
- the first setting of an object the function has just constructed (`MaskedSoftmaxParam param;` then
  `param.qk_scale = ...`): a parameter pack built for one call holds nothing set elsewhere;
- writes into one call's data (`prepare_request.debug_config.x = ...`: a receiver named `*_request`,
  `response`, `payload`, `message`), filled per request, not set once for the deployment;
- tests and vendored trees (`3rdparty/`, `third_party/`, `vendor/`, `external/`).
A write of the operator's own setting (its value or guard reads an environment variable, e.g.
`FORCE_STOP_WORDS_STR`) is meant to win over the models' settings and is not flagged either.
A write inside a model's own config builder (`_create_config`, `from_huggingface`) is the local extension
point, not an override of other models' settings, and is not flagged.

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

import re
from collections.abc import Iterable

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.configs import describe_reach
from reviewbot.analysis.sides import Side, sides
from reviewbot.analysis.writes.env_overwrites import env_overwrites
from reviewbot.analysis.writes.explicit import ExplicitWrite
from reviewbot.analysis.writes.new_switches import new_switches, not_this_changes
from reviewbot.analysis.writes.owners import callee_reads_itself, widened_from_base
from reviewbot.analysis.writes.sources import ENV, Source, cli_write, fills_in, same_expression, source_of
from reviewbot.checks.base import CheckContext
from reviewbot.checks.override_options import option_scopes, overridden_option
from reviewbot.checks.util import (
    MAX_TITLE,
    assignment_anchor,
    beside_package,
    clip,
    field_owner,
    is_builder,
    is_constructor,
    is_pickling,
    is_vendored,
    moved_unchanged,
    narrowed_from_base,
    place,
    receiver_of,
    rederives_itself,
    statement,
    writers_on,
)
from reviewbot.lang.facts import AssignKind, Assignment, FileFacts, OwnerVia
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.model.change import ChangedFile
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, clauses, listing, msg

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


def _declares(a: Assignment) -> bool:
    """A constructor declaring (initialising) its own object's field: `self.x = ...` in `__init__`."""
    return is_constructor(a.function) and not receiver_of(a)


def _not_a_setting(a: Assignment) -> bool:
    """Writes that are not explicit settings of a field, whoever's it is."""
    return (
        is_test_path(a.path)
        or is_vendored(a.path)
        or _declares(a)
        or is_pickling(a)
        or rederives_itself(a)
        or _is_copy(a.value, a.field)
        # `def_readonly` / `def_property_readonly` expose a field to read, not to set.
        or (a.kind is AssignKind.BINDING and "readonly" in a.value)
    )


_FRESH_VIA = (OwnerVia.DECLARED, OwnerVia.CONSTRUCTOR)


def _constructs(value: str, owner: str) -> bool:
    """`T()`, `T{}`, `{...}`, `new T(...)`, `std::make_shared<T>(...)`, `ns.T(...)`: a new object of the owner type."""
    name = re.escape(owner)
    return bool(
        value.startswith("{")  # `T x{}` / `T x = {...}`: aggregate initialisation of the declared type
        or re.match(rf"^(?:new\s*)?(?:\w+\.)*{name}\s*(?:<[^>]*>)?\s*[({{]", value)
        or re.match(rf"^(?:\w+\.)*make_(?:shared|unique)<(?:\w+\.)*{name}>", value)
    )


def initialises_fresh(a: Assignment, facts: FileFacts | None) -> bool:
    """The write sets a field of an object its own function has just constructed (`T param;` then
    `param.x = ...`, `p = T()` then `p.x = ...`): nothing set elsewhere can have reached that object, so
    the write is its first setting, not an override. An object copied in (`T config = attn_config;`) or
    whose field was set earlier in the function is not fresh."""
    if facts is None or a.owner_via not in _FRESH_VIA or not a.receiver or a.receiver in ("self", "this"):
        return False
    root = a.receiver.split(".", 1)[0]
    line = a.via_line or a.line
    for w in facts.assignments:
        if w.function != a.function or w.line >= line:
            continue
        start, end = (w.branch_start, w.branch_end) if w.guard is not None else (None, None)
        if start is not None and end is not None and not start <= line <= end:
            continue  # in a block that has ended: another object of the same name (`T param;` per block)
        if w.target == root and not _constructs(w.value, a.owner):
            return False  # copied or assigned from another object
        if w.receiver == a.receiver and w.field == a.field:
            return False
    return True


def from_operator(a: Assignment) -> bool:
    """The written value is the operator's own explicit setting (an environment variable in the value or
    the guard: `FORCE_STOP_WORDS=...`): it is meant to win over the models' settings."""
    guard = " ".join(atom.text for atom in a.guard.atoms()) if a.guard is not None else ""
    return bool(ENV.search(a.value) or ENV.search(guard))


def _exempt(d: ChangedDerivation) -> bool:
    """Derivations this rule does not judge: they check or log, or are not overrides at all."""
    a = d.head
    guard_reads_target = a.guard is not None and any(a.field in atom.text for atom in a.guard.atoms())
    return (
        a.checks_target_first
        or guard_reads_target
        or a.logs_in_branch
        or a.kind is AssignKind.AUGMENTED
        or _declares(a)
        or is_pickling(a)
        or rederives_itself(a)
        or is_builder(a.function)
        or is_vendored(a.path)
        or from_operator(a)
        or _per_call(a.target)
    )


# A receiver that holds one call's data (`prepare_request.debug_config.x = ...` in a router): filled per
# request, it is no setting a user gave once for the deployment.
_PER_CALL = re.compile(r"(?:^|_)(?:request|requests|req|response|payload|message|msg)$", re.IGNORECASE)


def _per_call(target: str) -> bool:
    root = re.split(r"\.|->|\[", target, maxsplit=1)[0]
    return _PER_CALL.search(root) is not None


def explicit_writers(a: Assignment, index: RepoIndex) -> list[Assignment]:
    """Other writes that set `a`'s field explicitly on the same owner, by path and line: from another
    source than `a` (bindings, the other language, a model builder, the environment, the command line,
    a config file), never another derivation in the code or the same expression. A write whose owner
    cannot be told is matched to nothing."""
    owner = field_owner(a, index)
    if not owner:
        return []
    mine = source_of(a, a.lang)
    return [
        w
        for w in writers_on(owner, a, index)
        if w.kind in _WRITER_KINDS
        and not (w.path == a.path and w.function == a.function)
        and not index.is_excluded(w.path)
        and not _not_a_setting(w)
        and source_of(w, a.lang) not in (Source.CODE, mine)
        and not same_expression(a, w)
    ]


def _describe_writer(w: Assignment) -> Message | str:
    if w.kind is AssignKind.BINDING:
        return msg("unconditional-override.binding", place=place(w.path, w.line))
    return f"{place(w.path, w.line)} `{clip(w.text or w.target + ' = ' + w.value, 60)}`"


def _is_setting(a: Assignment, ctx: CheckContext, by_path: dict[str, Side]) -> bool:
    """The write is a setting itself (a command-line option's handler), or fills the field in only
    while it is unset: not an override."""
    scopes = option_scopes(ctx, a.path)
    side = by_path.get(a.path)
    heads = [s.head for s in by_path.values() if s.head is not None]
    return cli_write(a, scopes) or fills_in(a, ctx.index, side.head if side else None, scopes, heads)


def _made_before(a: Assignment, base: FileFacts | None, changed: ChangedFile | None) -> bool:
    """The base made this write: moved, given another receiver, nested, or under a guard the change only
    gave more cases (`analysis.writes.owners`)."""
    removed = frozenset(changed.removed_lines) if changed is not None else frozenset()
    return (
        moved_unchanged(a, base, changed)
        or narrowed_from_base(a, base, removed)
        or widened_from_base(a, base)
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[str] = set()
    by_path = {s.path: s for s in sides(ctx.change, ctx.base_facts, ctx.head_facts)}
    switches = new_switches(ctx.change)
    for d in ctx.derivations:
        a = d.head
        changed = ctx.change.file(a.path)
        base = ctx.base_facts.get((changed.old_path or changed.path) if changed is not None else a.path)
        if (
            _exempt(d)
            or not_this_changes(a, ctx.change, switches)
            or initialises_fresh(a, ctx.head_facts.get(a.path))
            or _made_before(a, base, changed)
            or _is_setting(a, ctx, by_path)
            or callee_reads_itself(a, changed.head_text if changed is not None else None)
        ):
            continue
        others = explicit_writers(a, ctx.index)
        option = overridden_option(ctx, a, changed)
        if not others and option is None:
            continue
        anchor = assignment_anchor(a)
        if anchor in seen or f"{a.path}:{a.line}:{a.target}" in seen:
            continue  # one write, one finding (a statement spread over lines gave one per derivation)
        seen.add(f"{a.path}:{a.line}:{a.target}")
        seen.add(anchor)
        seen.add(f"{a.path}:{a.line}")
        yield _finding(ctx, a, anchor, others, option)
    heads = {f.path: f.head_text for f in ctx.change.files}
    bases = {f.old_path: f.base_text for f in ctx.change.files if f.old_path is not None}
    for w in env_overwrites(list(by_path.values()), heads, ctx.index, ctx.change.head_tree, bases):
        if f"{w.path}:{w.line}" in seen:  # the derivation's own finding already names the write
            continue
        if beside_package(w.path):
            continue  # an example or benchmark script configuring the engine it starts: its own setting
        yield _env_finding(w)


def _env_finding(w: ExplicitWrite) -> Finding:
    """A write over an environment setting the operator exports (`analysis.writes.env_overwrites`)."""
    return Finding.make(
        rule=id,
        severity=severity,
        path=w.path,
        line=w.line,
        anchor=f"env|{w.key}|{w.text}",
        title=msg("unconditional-override.title.env", name=w.key, receiver=w.receiver),
        evidence=(
            msg(
                "unconditional-override.env-source",
                name=w.key,
                place=place(w.source_path, w.source_line),
                text=clip(w.source_text, 120),
            ),
            msg(
                "unconditional-override.env-write",
                name=w.key,
                place=place(w.path, w.line),
                text=clip(w.text, 120),
            ),
        ),
        suggestion=msg("unconditional-override.suggestion.env", name=w.key),
        extra=(("field", w.key),),
    )


def _finding(
    ctx: CheckContext, a: Assignment, anchor: str, others: list[Assignment], option: int | None
) -> Finding:
    """The finding for write `a` over the setters `others` (and the command-line option at line `option`)."""
    owned = f"{field_owner(a, ctx.index) or receiver_of(a) or 'args'}.{a.field}"
    setters: list[Message | str] = [_describe_writer(w) for w in others]
    if option is not None:
        setters.insert(0, msg("unconditional-override.option", place=place(a.path, option), field=a.field))
    count = len(setters)
    evidence: list[Message | str] = [msg("unconditional-override.set-at", places=listing(setters))]
    reach = describe_reach(a.guard, ctx.index)
    extra: list[tuple[str, str]] = [("field", owned), ("writers", str(count))]
    if reach is not None:
        facts = [fact for ar in reach.atoms for fact in (ar.default_msg, ar.derived_msg) if fact]
        if facts:
            evidence.append(clauses(facts))
        if reach.sentence:
            evidence.append(reach.text)
            extra.append(("reach", reach.sentence))
    written = statement(a)
    number = "one" if count == 1 else "many"
    scope = "unconditional" if a.guard is None else "guarded"
    title = msg(f"unconditional-override.title.{scope}.{number}", written=written, count=count, owned=owned)
    finding = Finding.make(
        rule=id,
        severity=severity,
        path=a.path,
        line=a.line,
        title=title,
        anchor=anchor,
        evidence=evidence,
        # Only the user's own option is overridden: the builder advice does not apply, the option's does.
        suggestion=msg("unconditional-override.suggestion.option", field=a.field)
        if option is not None and not others
        else msg("unconditional-override.suggestion"),
        extra=tuple(extra),
    )
    # English clipped as before (the report caps other languages)
    evidence_en = (finding.evidence[0], *(clip(e, 400) for e in finding.evidence[1:]))
    return finding.with_(title=clip(finding.title, MAX_TITLE), evidence=evidence_en)
