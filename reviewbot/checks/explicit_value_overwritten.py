"""explicit-value-overwritten (P2): the change overwrites a value the user gave on the command line or in a config.

## What it does
Looks at the writes a change adds after the user's value is known: a dict key (`kwargs["x"] = ...` on a
function's `**kwargs` or on a `*_kwargs` parameter that passes the caller's keyword options on, also
after a copy such as `mm_kwargs = dict(mm_kwargs)`; `config_dict["x"] = ...` on a config loaded from a
file), `setattr(args, "x", ...)`, `vars(args)["x"] = ...`, `args.x = ...` on an argparse namespace
after `parse_args()` or `self.x = ...` in the `__post_init__` of a dataclass whose fields are
command-line options (`ServerArgs`), in a method the post-init calls on `self`
(`_handle_model_specific_adjustments`) or in any method of a dataclass that registers its own
options (`EngineArgs._override_v1_engine_args`: its instances are the command line), and in C++ a field
of the params struct a command-line parser filled (`params.n_ctx = 4096;` after
`gpt_params_parse(argc, argv, params)`, or a call added there that writes its fields). It reports the
write when the value is one the user sets explicitly (a command-line option the repository registers
with `add_argument`, a C++ option handler that assigns the field, the caller's keyword, a key of the
config file) and nothing around the write asks whether the user gave it.

Not flagged: a write in a file the change adds (no caller, command line or config set a value there
before), set-only-if-unset, a write under a condition or after an early exit that reads the key
(`is None`, `not in kwargs`, `if not args.x`, `== parser default`, a sentinel), a write whose value
reads the key itself (a normalisation such as `kwargs["x"] = int(kwargs["x"])`, or in C++ a floor such
as `params.n_parallel = std::max(4, params.n_parallel)`), and a Python write
its function already made at the base, unguarded (the line was edited for another reason; a write of
another constant, `True` at the base and `False` now, is new), and a
write of the one value an option's command line can give (`True` over a `store_true` flag), and a C++
params struct reused after the user's values were used (handed to a call, or the field read, between
the parse and the write: `load_model(params); params.model = draft;`), and a write below an assertion
of its function that pins the key to one value (`assert self.cuda_graph_impl == "none"` before
`self.cuda_graph_impl = "local"`: any other value the user gave is rejected there): nothing the user
gave is lost.
A `**kwargs` key that no caller passes is not flagged either: when the head tree calls the function by
name and no call passes the key or forwards `**` (dev-scan sample 12: `kwargs["device"] = "cuda"` in
sglang's `process_mm_data`, nine call sites, none passing `device`); a function nothing calls by name (a
public entry point) or that is passed around as a reference keeps the finding.
A write that only runs for who turns on a switch the change introduces (`if self.enable_beta_spec:
self.disable_overlap_schedule = False`, `--enable-beta-spec` new) is not flagged either: what it replaces
is what turning the switch on asks for (dev-scan sample 14, a P2 judged wrong).
`args.x = ...` on a namespace the rule `unconditional-override` already reports is left to that rule.

## Why is this bad?
The user's explicit value is silently replaced: the flag or the config key still parses, but has no
effect, and nothing in the logs says so. The override model of `unconditional-override` sees attribute
writes on config objects; writes through a dict key, `setattr` or `vars()` escape it.

## Example
```python
def from_pretrained(path, **kwargs):
    kwargs["trust_remote_code"] = True  # the caller's trust_remote_code=False is lost
    return load(path, **kwargs)
```

## Use instead
```python
def from_pretrained(path, **kwargs):
    kwargs.setdefault("trust_remote_code", True)
    return load(path, **kwargs)
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.sides import sides
from reviewbot.analysis.writes.explicit import ExplicitWrite, explicit_writes
from reviewbot.analysis.writes.new_switches import new_switch_guard, new_switches
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place, places
from reviewbot.model.change import FileStatus
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "explicit-value-overwritten"
severity = Severity.P2
summary = "A write replaces a value the user gave on the command line or in a config, without asking whether it was given."


def _suggestion(w: ExplicitWrite) -> Message:
    if w.kind == "cli":
        return msg("explicit-value-overwritten.suggestion.cpp", receiver=w.receiver, field=w.key)
    if w.kind in ("kwargs", "options", "config"):
        return msg("explicit-value-overwritten.suggestion.dict", receiver=w.receiver, name=w.key)
    return msg("explicit-value-overwritten.suggestion.flag", receiver=w.receiver, name=w.key)


def _finding(w: ExplicitWrite) -> Finding:
    source = msg(
        f"explicit-value-overwritten.source.{w.kind}",
        place=place(w.source_path, w.source_line),
        text=clip(w.source_text, 120),
        name=w.key,
    )
    evidence = [
        source,
        msg("explicit-value-overwritten.write", place=place(w.path, w.line), text=clip(w.text, 120)),
    ]
    if w.writes:
        first_path, first_line, first_text = w.writes[0]
        evidence.append(
            msg(
                "explicit-value-overwritten.callee",
                fields=", ".join(f"`{f}`" for f in w.fields),
                places=places([place(p, n) for p, n, _ in w.writes]),
                first=place(first_path, first_line),
                text=clip(first_text, 100),
            )
        )
    title_key = "explicit-value-overwritten.title.call" if w.writes else "explicit-value-overwritten.title"
    return Finding.make(
        rule=id,
        severity=severity,
        path=w.path,
        line=w.line,
        anchor=f"{w.receiver}|{w.key}|{'call' if w.writes else 'write'}",
        title=msg(title_key, name=w.key, receiver=w.receiver, count=len(w.fields)),
        evidence=tuple(evidence),
        suggestion=_suggestion(w),
        extra=(("field", w.key),),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    heads = {f.path: f.head_text for f in ctx.change.files}
    bases = {f.path: f.base_text for f in ctx.change.files}
    found = explicit_writes(changed, heads, ctx.change.head_tree, bases)
    if not found:
        return
    taken: set[tuple[str, int]] = set()
    if any(
        w.kind == "flag" and "." in w.text.split("=")[0] and "[" not in w.text.split("=")[0] for w in found
    ):
        from reviewbot.checks import unconditional_override

        taken = {(f.path, f.line) for f in unconditional_override.run(ctx)}
    switches = new_switches(ctx.change)
    for w in found:
        if (w.path, w.line) in taken or _added(ctx, w.path) or _asserted_unset(w, heads.get(w.path)):
            continue
        if _under_new_switch(ctx, w, switches):
            continue
        yield _finding(w)


def _under_new_switch(ctx: CheckContext, w: ExplicitWrite, switches: set[str]) -> bool:
    """The write runs only for who turns on a switch the change introduces (`if self.enable_beta_spec:
    self.disable_overlap_schedule = False`): what it replaces is what turning it on asks for, as
    unconditional-override already judges (dev-scan sample 14: sglang 20a6c0a63, a P2 judged wrong)."""
    facts = ctx.head_facts.get(w.path)
    if facts is None or not switches:
        return False
    return any(a.line == w.line and new_switch_guard(a, ctx.change, switches) for a in facts.assignments)


def _asserted_unset(w: ExplicitWrite, text: str | None) -> bool:
    """An assertion above the write, in the same function, pins the field to one value
    (`assert self.cuda_graph_impl == "none"`, `assert args.x is None`): a value the user gave is
    rejected there, not overwritten here (dev-scan sample 9)."""
    if not text or not w.key.isidentifier():
        return False
    lines = text.split("\n")[: max(w.line - 1, 0)]
    receiver = re.escape(w.receiver) + r"\." if w.receiver.isidentifier() else r"(?:\w+\.)?"
    pinned = re.compile(r"\bassert\s*\(?\s*" + receiver + re.escape(w.key) + r"\s*(?:==|is(?!\s+not)\b)")
    block: list[str] = []
    for line in reversed(lines[-_LOOKBACK:]):
        if line.lstrip().startswith(("def ", "async def ")):
            break
        block.insert(0, line.strip())
    return pinned.search(" ".join(block)) is not None


_LOOKBACK = 30  # lines above the write searched for the assertion


def _added(ctx: CheckContext, path: str) -> bool:
    """A file the change adds: no caller, command line or config set a value there before it."""
    f = ctx.change.file(path)
    return f is not None and f.status is FileStatus.ADDED
