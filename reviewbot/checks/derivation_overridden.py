"""derivation-overridden (P2): a derived value is overwritten by a later write, so the derivation is dead.

## What it does
Flags a new unconditional write of a config field that undoes a derivation, or is undone by one:
- the write comes after a call that derives the same field from its input, in the same function
  (`config = X.from_huggingface(config_json)` then `config.special_tokens.eos_token_id = 2`: the
  value read from config.json is now always replaced), or after an earlier derived write of the same
  target in the same function (also of the method's own object, `self.x` in `__post_init__`: a
  `break` or `continue` between them leaves only its loop);
- the write is a model builder's forced value (`config.tp_split_emb_and_lm_head = False` in
  `_create_config`) and a method of the config owner writes the field again from an environment
  variable, so setting the variable for the fleet silently lifts the model's constraint.

Not flagged: a later write that reads the earlier value (`x = x or default`, `x = max(x, ...)`), a
field cleared after use (`None`, `[]`, `0` written after a statement between the two reads it or may
through a call: `free(self.buffers)` before `self.buffers = []`; `self.module_state_dict()` between
`self._path = p` and `self._path = None`; a real value written after a read still loses the setting), a saved value put back (`original =
state.rank` ... `state.rank = expert_rank()` ... `finally: state.rank = original`: save, override,
restore), a write the change only edits (the base overwrote the same target there already: `max(self.sliding_window,
8192)` renamed to `max(self.sliding_window_size, 8192)` is not a new override), a guarded write (exclusive
branches, `if x is None:`), a callee that writes a constant too, writes in
the config's constructor (declarations), a return between the two writes, a write in a `catch` /
`except` clause (it runs only when deriving failed), a variant builder that
replaces a field of the config the builder it is named after made (`llama3_debugmodel_flex_attn`
calling `llama3_debugmodel`: that is what the variant is for), one arm's own value after a general
default written before the `switch` (the default still holds for the other arms), and two writes that
are not one flow: in two
lambdas (two command-line options' handlers), in two `catch` / `except` clauses, in two arms of a
`switch` (`case 28: model.type = MODEL_6B; break;` then `case 40: ...`), or each on a local
of its own loop or block (`for (auto* r : firsts) r->status = run(r);` then
`for (auto* r : seconds) r->status = grpc::Status(...);`: another `r`, another object).
Nor a reset after a loop whose body reads what it wrote there (`ctx->batch_offset += n` per
micro-batch, read by the next iteration's `forward(ctx, ...)`, then `ctx->batch_offset = 0` after the
loop): each value was consumed (dev-scan sample 12).
Nor an initial value the earlier write only fills in while the field is unset (`if not hasattr(state,
"last_event_time"): state.last_event_time = timer()`), read before the later write replaces it (an
interval timer: dev-scan sample 13).

Titles and evidence quote the code as written (`result->stage_status = grpc::Status(0, "ok")`), and
the suggestion is in the file's language.

## Why is this bad?
The derivation still reads as if it decided the value, and its tests may still pass, but every
configuration now gets the constant (or the environment's value): checkpoints whose config.json says
otherwise, or models that cannot run with the override, break without an error at start-up.

## Example
```python
if config_json:
    config = GPTNeox.from_huggingface(config_json)   # sets eos_token_id from config.json
else:
    config = GptInitModelParameters(...)
config.special_tokens.eos_token_id = 2                # overwrites it for every checkpoint
```

## Use instead
```python
else:
    config = GptInitModelParameters(...)
    config.special_tokens.eos_token_id = 2            # only where nothing derived it
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.sides import sides
from reviewbot.analysis.writes.overrides import Override, OverrideKind, overrides
from reviewbot.analysis.writes.scopes import FileScopes, file_scopes
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.lang.facts import Lang, lang_for_path
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "derivation-overridden"
severity = Severity.P2
summary = "A derived value is overwritten by a later write, so the derivation is dead."

_TEXT = 80


_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^:])=(?!=)")


def _sides_of(written: str, o: Override) -> tuple[str, str]:
    """The target and the value of a write as written (`result->stage_status`, `grpc::Status(...)`);
    the canonical spelling only when the source does not split at its `=`."""
    depth = 0
    for i, c in enumerate(written):
        depth += 1 if c in "([{" else -1 if c in ")]}" else 0
        if c == "=" and depth == 0 and _ASSIGN.match(written, i):
            target, value = written[:i].strip(), written[i + 1 :].strip()
            if target and value and o.field in target:
                return target.split(":", 1)[
                    0
                ].strip() if ":" in target and "::" not in target else target, value
    return o.target, o.value


def _finding(o: Override) -> Finding:
    other = o.other
    text = clip(o.other_written or other.text or f"{other.target} = {other.value}", _TEXT)
    target, value = _sides_of(o.written, o)
    cpp = lang_for_path(o.path) is Lang.CPP
    title: Message
    if o.kind is OverrideKind.CALL:
        title = msg("derivation-overridden.title.call", target=target, value=clip(value, 40), callee=o.callee)
        evidence = [msg("derivation-overridden.derived", place=place(other.path, other.line), text=text)]
        suggestion = msg(f"derivation-overridden.suggestion.call{'.cpp' if cpp else ''}", target=target)
    else:
        title = msg(
            "derivation-overridden.title.env", target=target, value=clip(value, 40), env=o.env,
            place=place(other.path, other.line),
        )  # fmt: skip
        evidence = [msg("derivation-overridden.later", place=place(other.path, other.line), text=text)]
        suggestion = msg("derivation-overridden.suggestion.env", target=target)
    return Finding.make(
        rule=id,
        severity=severity,
        path=o.path,
        line=o.line,
        anchor=f"{o.kind.value}|{o.target}|{other.path}:{other.line}",
        title=title,
        evidence=tuple(evidence),
        suggestion=suggestion,
        extra=(("field", o.field), ("kind", o.kind.value), ("other", place(other.path, other.line))),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    scopes: dict[str, FileScopes | None] = {}
    for s in changed:
        f = ctx.change.file(s.path)
        scopes[s.path] = (
            file_scopes(s.path, f.head_text) if f is not None and f.head_text is not None else None
        )
    for o in overrides(changed, ctx.index, scopes):
        yield _finding(o)
