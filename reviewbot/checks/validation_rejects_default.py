"""validation-rejects-default (P1): a new or changed validation rejects the configuration the defaults produce.

## What it does
Evaluates each `raise` (with the `if` conditions it runs under) and `assert` that the change adds, or
whose condition it adds or changes, in a validating function of a Python file (`__post_init__`,
`__init__`, `model_post_init`, `validate*` / `check*` / `verify*`, a function taking `args`), with every
operand at its default: dataclass / pydantic / class-level field defaults of the class validated (or
of its base class); for `args.x`, the default argparse gives the option (`default=`, `store_true` →
False, no default → None, a string default through `type=int`, `set_defaults`), or the field default
of the config class the parser generates the option from. Builtins that only read (`bool`, `any`,
`all`, `len`) are evaluated. It reports the validation when the raise runs (or the assertion fails) for
that all-defaults configuration. The evidence names each default and where it is set, with the text
that sets it (`default=None`, `action='store_true'`).

A check nested under an opt-in switch that is off by default (`if args.perform_rl_step:`) is evaluated
with that switch on and everything else at its default: it is reported when the feature's own defaults
fail it, and those defaults are choices (a boolean on by default, a string), not `None` / `0`
placeholders the feature's users are expected to set nor other switches off by default that the
feature needs turned on with it (`if args.fp8_param_gather: assert args.use_distributed_optimizer`),
nor the one other option it needs set to a value (`if self.moe_enable_deepep: if
self.moe_token_dispatcher_type != "flex": raise ...`: a requirement the message states). Two defaults
of the feature that contradict each other are reported (`--rl-persist-cuda-graphs` on by default,
`--cuda-graph-impl` "none" by default).

A check on one option whose default is a `None` / `0` placeholder (`assert args.input is not None`)
makes the option required rather than rejecting a combination of defaults, and is not reported.

A check after an early exit (`if self.stream_options is None: return self`) runs only on the other side
of that test, which is evaluated with it. A check the change only loosened (`assert a or b` becoming
`assert a or b or c`; `if a: raise` becoming `if a and b: raise`) rejects nothing its base version
accepted and is not reported.

Only when every operand's default is known: a call, a local, a subscript, an option without a known
default, or a field written above the check (by the function, or by a call handed the object: a
function of the module or of the repository is read, up to the early exit the defaults take, as in
`if args.project_dir is None: return`; any other call may write anything) leaves the validation alone.
C++ checks are not evaluated (the rule reads Python only).

## Why is this bad?
The all-defaults configuration is what a plain launch, a unit test and most users run. A validation
that rejects it (often because two defaults it couples are on/off together, or a new field's default
does not fit an old one's) breaks start-up for everyone who did not opt out, and usually passes review
because every example in the pull request sets the flags explicitly.

## Example
```python
parser.add_argument("--mock-data", action="store_true")
parser.add_argument("--data-path", nargs="*", default=None)

def validate_args(args):
    # 0 == 1 with the defaults: every launch without data (an inference server, a converter) fails
    assert args.mock_data + bool(args.data_path) == 1, "a single data source must be provided"
```

## Use instead
```python
    assert args.mock_data + bool(args.data_path) <= 1, "at most one data source"
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.defaults.evaluate import Operand
from reviewbot.analysis.defaults.validation import RejectedDefault, rejected_defaults
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "validation-rejects-default"
severity = Severity.P1
summary = "A new or changed validation rejects the configuration that the defaults produce."


def _default(o: Operand) -> str:
    """`args.x` = `None` (`default=None`, path:line): the value and the source text that sets it."""
    how = f"`{o.how}`, " if o.how else ""
    return f"`{o.text}` = `{o.value}` ({how}{place(o.path, o.line)})"


def _finding(r: RejectedDefault) -> Finding:
    rest = [o for o in r.operands if o not in r.switched]
    defaults = ", ".join(_default(o) for o in rest[:6])
    fields = ",".join(o.text.split(".", 1)[-1] for o in rest)
    switches = ", ".join(_default(o) for o in r.switched)
    if r.switched:
        title = msg(
            "validation-rejects-default.title.switched",
            kind=r.kind,
            function=r.function,
            switches=", ".join(f"`{o.text}`" for o in r.switched),
        )
    else:
        title = msg("validation-rejects-default.title", kind=r.kind, function=r.function)
    condition = msg(
        "validation-rejects-default.condition",
        place=place(r.path, r.statement_line),
        condition=clip(r.condition, 120),
    )
    evidence = [condition, msg("validation-rejects-default.defaults", defaults=defaults)]
    if r.switched:
        evidence.append(msg("validation-rejects-default.switched", switches=switches))
    return Finding.make(
        rule=id,
        severity=severity,
        path=r.path,
        line=r.line,
        anchor=f"{r.function}|{r.condition}",
        title=title,
        evidence=tuple(evidence),
        suggestion=msg("validation-rejects-default.suggestion"),
        extra=(("field", fields), ("owner", r.owner)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = [s for s in sides(ctx.change, ctx.base_facts, ctx.head_facts) if s.path.endswith(".py")]
    if not changed:
        return
    heads = {f.path: f.head_text for f in ctx.change.files}
    bases = {f.path: f.base_text for f in ctx.change.files}
    tree = ctx.change.head_tree
    for r in rejected_defaults(changed, heads, ctx.index, tree.read if tree is not None else None, bases):
        yield _finding(r)
