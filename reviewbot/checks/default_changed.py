"""default-changed (P3; P1 when the checks a new switch turns on reject launches): a default flips, so every
deployment that never set it changes behaviour.

## What it does
Compares each changed file before and after the change and flags a default that now has another value:
- a field default: a C++ member initialiser (`bool use_x = false;`), a Python class or dataclass default
  (`use_x: bool = False`), a constant that `__init__` assigns (`self.use_x = False`);
- an environment switch's default, as parsed (`os.environ.get("USE_X", "0") == "1"` with `"1"`);
- a command-line option's default (`add_argument("--x", default=...)`) and a parameter default of a
  config builder or a config class's constructor;
- a constructor initialiser that now takes its value from another config field with another default
  (`reserve_(cfg.reserve_blocks_)` -> `reserve_(cfg.reserve_ratio_ * free / 100)`).
- a brand-new bool switch of a config class that defaults on (`cpu_offloading: bool = True`,
  `bool kv_offload = true;`) and is read only on lines the change adds, never as `not x` / `!x`: the new
  code runs for every deployment that never sets it.

The evidence names the old value and where it was, who sets the field explicitly (every other model
takes the new default), where it is consumed (and whether that reaches numerics or persistent data:
dtypes, precision, quantisation, TensorRT / ONNX engines, scales, saving and exporting files), the
documentation that states the old default, and the config files the project ships that set the key.

Severity: P3, a note for the reviewer: "this changes every deployment that does not set it; is that the
intent, and is it announced?". Measured held out, it does not tell the flips a maintainer must act on
from the rest: of 77 P0–P2 findings in dev-scan samples 2–9, judged blind, 6 were right (P1 ones: 2 of
about 25; the numerics words did not help), and 2 of 8 on the labelled test split. What the wrong ones
were: switches only an opt-in feature reads, defaults whose change is the commit's stated purpose (an
issue and a measurement in the message), one model's own defaults, a new feature's own layout; nothing
in the code separates them from the right ones (generation defaults every request runs with, a context
size every launch gets). P1 stays for one shape with its own evidence: a new switch that defaults on
and turns on checks that reject configurations (Megatron's `cpu_offloading = True` with its pipeline
and recompute checks: every such launch fails at start-up).

Not flagged: a brand-new field, switch or option (nothing to flip) other than a switch that defaults on
and feeds only new code in a file the base had (a new model's own file: nobody ran it before) — not one read as `not x` (an opt-out), one that wraps statements that were
there before (`if params.warmup { warmup(); }`), or one copied into a local the function otherwise
sets to the switch's default (`drop = True` / `if valid: drop = cfg.drop_last_valid`); the same value spelled differently
(`1.0` / `1.`, quotes, a string replaced by the enum member of the same name: `"f16"` ->
`GGML_TYPE_F16`); a `None` made the empty value of its declared type (`base_dir: str = None` -> `""`:
false as before, a type fix); an object default replaced by a plain value (`Metric t = Metric(true);` -> `double t = 0;`:
the field changed type); an object of a class the change renamed (`Float8Dense()` -> `Float8Linear()`); a literal replaced by a
named constant the change defines as that literal (`-1` -> `LLAMA_TOKEN_NULL` with `#define LLAMA_TOKEN_NULL
-1`), or back (`TENSORBOARD_ENABLED_DEFAULT` -> `False`, the deleted constant was `False`), or one whose
value the change does not show; a module constant the change deletes with the code that used it, beside
a new environment switch (the switch replaces the constant only where the two lines are one statement:
`torch.empty(SIZE, ...)` -> `torch.empty(envs.SIZE, ...)`); a field of a runtime record
(`FlashAttentionMetadata`, `EngineMetrics`, `ForwardBatch`: filled per step, not set by anyone); a C++ in-class default that every constructor's initialiser list overrides; a
change that keeps the old behaviour reachable in the same change (a guarded write of the old value to the
same field: an opt-in or a deprecation switch); a parameter default made `None` that the function binds
back to the old value (`if args is None: args = sys.argv[1:]`); a `None` placeholder of `__init__` that another method of the class fills in (`_initialize` reading
`get_scalar_param(d, KEY, KEY_DEFAULT)`: a pydantic rewrite declaring that default changes nothing); a `None` ("filled in later") default
that becomes the value the change stops filling in (`"eliminate_noops": True` removed from the
per-level tables); a value picked only while the option is left at a sentinel nobody sets explicitly
(`None`, `"auto"`) in a branch that logs the choice (`if self.attention_backend is None: ...
logger.info("Use trtllm_mla ...")`): it is announced at start-up and any explicit setting opts out,
which is the "Use instead" below (a `False` that is both "unset" and an explicit choice is still
flagged: no deployment can opt out); a value the base already picked for the unset option under
conditions the head's guard still holds (a refactor that moved the block, or nested it under one more
condition); an option default that flips to the value its `store_true` / `store_false` action stores
(always-true-guard reports that flag as stuck). The same flip on a second owner (a CLI struct and the struct it is copied into) is
one finding, on the first copy, naming the others.

## Why is this bad?
A default is the configuration of every deployment that never set the value. Flipping it changes all of
them at once, silently: no one's configuration changed, yet their engine, numerics or memory use did.

## Example
```python
if os.environ.get("VIT_TRT", "1") == "1":   # was "0": TensorRT ViT engine for everyone
    self.visual = VITEngine(self.visual.vit)
```

## Use instead
```python
if os.environ.get("VIT_TRT", "0") == "1":   # keep the default; opt in per deployment
    self.visual = VITEngine(self.visual.vit)
logging.info("VIT_TRT=%s", os.environ.get("VIT_TRT", "0"))
```
or flip it with a release note, a start-up log line and a switch that restores the old value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.defaults.changes import DefaultChange, DefaultKind, changed_defaults, reaches_numerics
from reviewbot.analysis.defaults.shipped import shipped_configs
from reviewbot.analysis.envs.parse import Outcome, value_of_default
from reviewbot.analysis.envs.switches import head_readers
from reviewbot.analysis.pyast import side_texts
from reviewbot.analysis.sides import Side, sides
from reviewbot.analysis.stuck_flags import stuck_flags
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import MAX_EVIDENCE, clip, is_vendored, narrowed_from_base, place, places
from reviewbot.lang.facts import AssignKind, Assignment, Lang, lang_for_path
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.owners import is_init_function
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "default-changed"
severity = Severity.P3
summary = "A default flips, so every deployment that never set it changes behaviour."

_VALUE = 40  # characters of a value shown in a title


def _writers(c: DefaultChange, index: RepoIndex) -> list[Assignment]:
    """Explicit settings of the field on its owner: the models that keep their value."""
    if c.kind is not DefaultKind.FIELD:
        return []
    out = [
        w
        for w in index.writers_of(c.owner, c.field)
        if not (w.path == c.path and w.line == c.line)
        and not is_test_path(w.path)
        and not is_vendored(w.path)
        and not (is_init_function(w.function) and w.guard is None)
        and w.kind is not AssignKind.BINDING
    ]
    return sorted(set(out), key=lambda w: (w.path, w.line))


def _consumers(c: DefaultChange, ctx: CheckContext, changed: list[Side]) -> tuple[list[str], list[str]]:
    """(places, texts) of what the default feeds: reads of the field, statements the switch gates."""
    spots: list[str] = []
    texts: list[str] = [c.name]
    if c.kind is DefaultKind.FIELD:
        for r in ctx.index.readers_of(c.owner, c.field):
            if is_test_path(r.path) or is_vendored(r.path):
                continue
            spots.append(place(r.path, r.line))
            texts.append(r.expr)
            texts.extend(g.text for g in r.gated)
            texts.extend(call for g in r.gated for call in g.calls)
    if c.kind is DefaultKind.ENV:
        for s in changed:
            if s.path != c.path or s.head is None:
                continue
            for cl in s.head.clauses:
                if any(g.line == c.line for g in cl.guards):
                    spots.append(place(s.path, cl.line))
                    texts.append(cl.text)
        if c.env is not None and c.env.head.target:
            texts.append(c.env.head.target)
    return list(dict.fromkeys(spots)), texts


def _rejecting_checks(c: DefaultChange, changed: list[Side]) -> list[str]:
    """Places of the raises and checks the change adds that a new switch, on by default, turns on: a
    validation whose guard or condition reads the switch (`if self.cpu_offloading and pp > 1: raise`)."""
    word = re.compile(rf"(?<![\w]){re.escape(c.field)}(?![\w])")
    found: list[str] = []
    for s in changed:
        if s.head is None:
            continue
        for cl in s.head.clauses:
            if (
                cl.kind.validates
                and cl.line in s.added
                and (word.search(cl.text) or any(word.search(a) for a in cl.guard_atoms))
            ):
                found.append(place(s.path, cl.line))
    return found[:3]


_CPP_LITERALS = {"True": "true", "False": "false", "None": "nullptr"}


def _shown(value: str, path: str) -> str:
    """A value in its language's spelling (canonical values are Python-spelled)."""
    if lang_for_path(path) is Lang.CPP:
        return _CPP_LITERALS.get(value, value)
    return value


def _says_itself(c: DefaultChange) -> bool:
    """The parsed values are the defaults themselves (`int(os.environ.get("N", 32))`): no need to say them twice."""
    assert c.env is not None
    before, after = value_of_default(c.old), value_of_default(c.new)
    return (
        before.outcome is Outcome.VALUE
        and after.outcome is Outcome.VALUE
        and c.env.before.value == before.value
        and c.env.after.value == after.value
    )


def _title(c: DefaultChange) -> Message:
    old, new = clip(_shown(c.old, c.path), _VALUE), clip(_shown(c.new, c.path), _VALUE)
    if c.kind is DefaultKind.ENV and c.env is not None and c.env.head.parse and not _says_itself(c):
        return msg(
            "default-changed.title.env",
            name=c.name,
            old=old,
            new=new,
            before=f"`{c.env.before.shown()}`",
            after=f"`{c.env.after.shown()}`",
        )
    if c.kind is DefaultKind.CONSTANT:
        return msg(
            "default-changed.title.constant",
            name=c.name,
            constant=clip(c.old, _VALUE),
            was=clip(c.old_effective, _VALUE),
            now=clip(c.new_effective, _VALUE),
        )
    if c.kind is DefaultKind.NEW_ON:
        return msg("default-changed.title.new-on", name=c.name, new=new, place=c.condition)
    if c.kind is DefaultKind.AUTO:
        return msg("default-changed.title.auto", name=c.name, new=new, condition=clip(c.condition, 70))
    if c.kind is DefaultKind.INITIALISER:
        return msg(
            "default-changed.title.initialiser",
            name=c.name,
            old=old,
            new=new,
            was=clip(c.old_effective, _VALUE),
            now=clip(c.new_effective, _VALUE),
        )
    return msg("default-changed.title", name=c.name, old=old, new=new)


def _use(c: DefaultChange, ctx: CheckContext) -> str:
    """The statement of a replaced constant's use: one constant replaced at two reads is two findings."""
    if c.kind is not DefaultKind.CONSTANT:
        return ""
    f = ctx.change.file(c.path)
    lines = f.head_text.split("\n") if f is not None and f.head_text else []
    return lines[c.line - 1].strip() if 0 < c.line <= len(lines) else str(c.line)


def _env_evidence(c: DefaultChange, ctx: CheckContext, changed: list[Side]) -> list[Message]:
    """The switch's other readers and the documentation that states its default."""
    out: list[Message] = []
    others = [place(e.path, e.line) for e in head_readers(c.name, ctx.index, changed)
              if not (e.path == c.path and e.line == c.line)]  # fmt: skip
    if others:
        out.append(msg("default-changed.readers", places=places(others)))
    docs = ctx.docs.get(c.name, ())
    if docs:
        out.append(msg("default-changed.docs", places=places([place(d.path, d.line) for d in docs])))
    return out


def _shipped(c: DefaultChange, ctx: CheckContext) -> Message | None:
    """The note that every config file the project ships already sets the new value, or None."""
    shipped = shipped_configs(c.field, c.new, ctx.change.head_tree, ctx.index.is_excluded)
    if shipped is None or not shipped.agree:
        return None
    new = clip(_shown(c.new, c.path), 80)
    return msg("default-changed.shipped", count=shipped.files, new=new, place=place(*shipped.first))


def _finding(c: DefaultChange, ctx: CheckContext, changed: list[Side]) -> Finding:
    evidence: list[Message] = (
        []
        if c.kind is DefaultKind.NEW_ON
        else [
            msg(
                "default-changed.was",
                old=clip(_shown(c.old, c.path), 80),
                place=place(c.base_path, c.base_line),
            )
        ]
    )
    writers = _writers(c, ctx.index)
    if c.kind is DefaultKind.FIELD:
        evidence.append(
            msg("default-changed.writers", places=places([place(w.path, w.line) for w in writers]))
            if writers
            else msg("default-changed.no-writers")
        )
    if c.copies:
        evidence.append(msg("default-changed.copies", places=places([place(p, n) for p, n in c.copies])))
    spots, texts = _consumers(c, ctx, changed)
    if c.kind is DefaultKind.ENV:
        evidence += _env_evidence(c, ctx, changed)
    word = reaches_numerics(texts)
    rejects = _rejecting_checks(c, changed) if c.kind is DefaultKind.NEW_ON else []
    aligned = None if rejects else _shipped(c, ctx)
    if aligned is not None:
        evidence.insert(0, aligned)
    if rejects:
        evidence.insert(0, msg("default-changed.rejects", places=places(rejects)))
    if word and len(evidence) < MAX_EVIDENCE:
        evidence.append(msg("default-changed.reaches", word=word))
    elif spots and len(evidence) < MAX_EVIDENCE:
        evidence.append(msg("default-changed.consumers", places=places(spots)))
    return Finding.make(
        rule=id,
        # A note (P3, see the docs: 6 of 77 held-out P0-P2 findings were right), except when the checks a
        # new switch turns on for everyone reject configurations: every such launch fails at start-up.
        severity=Severity.P1 if rejects else severity,
        path=c.path,
        line=c.line,
        anchor=f"{c.kind.value}|{c.name}|{c.new}|{_use(c, ctx)}",
        title=_title(c),
        evidence=tuple(evidence[:MAX_EVIDENCE]),
        suggestion=(
            msg("default-changed.suggestion.new-on", name=c.field, off=_shown("False", c.path))
            if c.kind is DefaultKind.NEW_ON
            else msg("default-changed.suggestion", old=clip(c.old, _VALUE))
        ),
        extra=(("field", c.field), ("kind", c.kind.value), ("old", c.old), ("new", c.new)),
    )


# "Left unset" sentinels that no explicit setting spells: any value a deployment sets opts out.
_SENTINELS = frozenset({"None", "nullptr", "auto", "AUTO"})


def announced(c: DefaultChange, ctx: CheckContext) -> bool:
    """A value picked only while the option is left at a sentinel no one sets explicitly (`None`,
    `"auto"`), in a branch that logs the choice at start-up: every deployment sees the new value named
    and can opt out by setting the option, which is how this rule's doc says to change a default."""
    if c.kind is not DefaultKind.AUTO or c.old.strip("\"'") not in _SENTINELS:
        return False
    facts = ctx.head_facts.get(c.path)
    return facts is not None and any(a.line == c.line and a.logs_in_branch for a in facts.assignments)


def _picked_before(c: DefaultChange, ctx: CheckContext) -> bool:
    """The base already picked this value for the unset option, under conditions the head's guard
    still holds (a refactor that moved the block, or nested it under one more condition)."""
    f = ctx.change.file(c.path)
    base = ctx.base_facts.get((f.old_path or f.path) if f is not None else c.path)
    head = ctx.head_facts.get(c.path)
    writes = [a for a in head.assignments if a.line == c.line and a.field == c.field] if head else []
    removed = frozenset(f.removed_lines) if f is not None else frozenset()
    return any(narrowed_from_base(a, base, removed) for a in writes)


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    # An option whose new default its `store_true`/`store_false` action can never move away from is
    # always-true-guard's (a flag the command line cannot turn off): one finding for one problem.
    found = changed_defaults(changed, ctx.index)
    options = any(c.kind is DefaultKind.OPTION for c in found)
    stuck = {(f.path, f.dest) for f in stuck_flags(changed, side_texts(ctx.change))} if options else set()
    for c in found:
        if c.kind is DefaultKind.OPTION and (c.path, c.field) in stuck:
            continue
        if c.kind is DefaultKind.AUTO and _picked_before(c, ctx):
            continue
        if not c.silent and not announced(c, ctx):
            yield _finding(c, ctx, changed)
