"""undefined-name (P0 on a start-up or derivation path, else P1; P2 on a conditional log line; P3 in an error message): the change uses a name it never binds or imports.

## What it does
Runs pyflakes (as a library) on both revisions of each changed Python file and reports the undefined
names the head has and the base lacks (compared by name and enclosing function, since lines move), on
lines the change added, or on lines it kept when it removed the line that bound the name (an import
deleted, or moved into one function while other functions still use the name). Also reports an attribute of an environment registry module
(`envs.SGLANG_FOO` with `envs` bound to sglang's `environ.py` or vllm's `envs.py`) whose name the
registry module does not contain at all; and a `self.X` read (or `args.X` of a command-line namespace:
no option registers `--x`) on an added line whose attribute name
no line of the head tree but the change's own sets, defines or even names (`analysis.unset_attributes`:
`AttributeError` on the first run).

P0 when the use runs at import time (module level), in a constructor, a config builder, a changed
derivation's function or a config / argument / launcher module, on every pass through it: the process
fails to start or to derive its configuration. P1 elsewhere, or when a condition around the use (an
`if`, an `except`, a conditional expression) lets only some configurations reach it: the first call of
that path raises. P2 when that conditional use is a logging statement off the start-up path (`if
output_attentions: logger.warning_once(...)` in a model's `forward`, `logger` never bound): the rare path
meant to warn raises instead (dev-scan sample 10 judged such a P1 a lint-level bug); in a constructor or
config builder the configuration that takes the branch fails to start, which stays P1. P3 when the name only builds the message of a
failing `assert` or of a `raise`: the error comes anyway, as a `NameError` instead of the intended one;
P3 too in a source module's self-test (a module-level `test*` function only its `if __name__ ==
"__main__":` block calls: neither serving nor the test suite runs it; dev-scan sample 13);
P3 in a method of a class nothing in the repository names (not built, subclassed, imported, listed or
registered by a string: `analysis.unreferenced`): nothing runs it, so the name is a lint note (an
undefined-name scan judged blind called all 5 such P0/P1 findings wrong: `_init_weights` of a base no
model inherits, a text tower a vision-only model never builds).

Not flagged: C++ (the compiler rejects an undeclared name), a name the base already left undefined in
the same function or on a line the change removed (a use moved with the bug it had, from this file or
another changed or deleted one: `utils.py` split into `tools/utils.py`), names pyflakes cannot judge (a module with `from x import *`, or one that binds names through its own
namespace: `__G = locals(); for m in ModelType: __G[m.name] = ...`), a name written only inside a string
(a string annotation `-> "CausalLMBatch"`, a dtype `"float32"`: never evaluated; f-string fields count),
a name used only in annotations Python never evaluates (every annotation under `from __future__ import
annotations`, a local variable's annotation anywhere: dev-scan sample 13).

## Why is this bad?
Python finds an unbound name only when the line runs. A branch that only some options reach (a new
backend, a fallback, an `except` clause) passes every test that does not take it and raises `NameError`
(or `AttributeError` for a registry attribute) for the first deployment that does, often at start-up.

## Example
```python
if args.enable_offload:
    offload_cfg = OffloadConfig.from_args(args)  # OffloadConfig never imported
```

## Use instead
```python
from engine.offload import OffloadConfig

if args.enable_offload:
    offload_cfg = OffloadConfig.from_args(args)
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.pyast import side_texts
from reviewbot.analysis.sides import sides
from reviewbot.analysis.undefined_names import UndefinedName, registry_attributes, undefined_names
from reviewbot.analysis.unreferenced import unreferenced_class
from reviewbot.analysis.unset_attributes import UnsetAttribute, unset_attributes
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, is_builder, is_constructor, place, places, short_function
from reviewbot.lang.common import is_log_callee
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "undefined-name"
severity = Severity.P0
summary = "The change uses a name it never binds or imports (NameError when the line runs)."

# Modules that run while a process starts or derives its configuration.
_START_UP_PATH = re.compile(
    r"(?i)(?:^|/)(?:[^/]*config[^/]*|[^/]*args?|[^/]*arguments|[^/]*settings|envs?|environ|[^/]*launch[^/]*|"
    r"__main__|__init__|main|server|cli)\.py$"
)
_START_UP_FUNCTION = re.compile(
    r"(?i)^_?(?:main|launch\w*|run_server|serve|setup\w*|parse_args|from_\w+|post_init)$"
)


def _start_up(u: UndefinedName, derived: set[tuple[str, str]]) -> bool:
    if not u.function:
        return True  # module level: runs at import
    return (
        (u.path, u.function) in derived
        or is_constructor(u.function)
        or is_builder(u.function)
        or _START_UP_FUNCTION.match(short_function(u.function)) is not None
        or _START_UP_PATH.search(u.path) is not None
    )


_CALLEE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\(")


def _log_line(u: UndefinedName) -> bool:
    """The use is a logging statement (`logger.warning(...)`, `print_rank_0(...)`): the line meant to
    leave a trace, not to compute anything."""
    m = _CALLEE.match(u.text)
    return u.in_log or (m is not None and is_log_callee(m.group(1)))


def _severity(u: UndefinedName, start_up: bool) -> Severity:
    """P0 when every start passes the use; P1 when only some configurations reach it (a condition around
    it) or it is off the start-up path; P2 when that conditional use is a logging statement off the
    start-up path; P3 when it only builds the message of an error raised anyway."""
    if u.reach in ("message", "self-test"):
        return Severity.P3
    if u.reach == "conditional" and _log_line(u) and not start_up:
        # on the start-up path the configuration that takes the branch fails to start: still P1 (a
        # blind train label: `warnings.warn` in `__post_init__`, P0)
        return Severity.P2
    return Severity.P0 if start_up and u.reach != "conditional" else Severity.P1


def _dead_line(dead: str) -> Message:
    """Why nothing runs the line: its class is named nowhere, or it is a private method nothing calls."""
    key = "undefined-name.reach.unreferenced.method" if "." in dead else "undefined-name.reach.unreferenced"
    return msg(key, cls=dead)


def _finding(u: UndefinedName, derived: set[tuple[str, str]], dead: str | None = None) -> Finding:
    start_up = _start_up(u, derived)
    where = (
        msg("undefined-name.at-import") if not u.function else msg("undefined-name.in", function=u.function)
    )
    evidence = [msg("undefined-name.line", place=place(u.path, u.line), text=clip(u.text, 100), where=where)]
    if u.unbound_by is not None:
        line, text = u.unbound_by
        evidence.append(msg("undefined-name.unbound", line=line, text=clip(text, 100)))
    if u.also:
        evidence.append(msg("undefined-name.also", places=places([place(u.path, n) for n in u.also])))
    if u.reach:
        evidence.append(msg(f"undefined-name.reach.{u.reach}"))
    if dead:
        evidence.append(_dead_line(dead))
    if u.registry:
        evidence.append(msg("undefined-name.registry", registry=u.registry, name=u.name.split(".", 1)[1]))
        suggestion = msg(
            "undefined-name.suggestion.registry", registry=u.registry, name=u.name.split(".", 1)[1]
        )
    else:
        suggestion = msg("undefined-name.suggestion", name=u.name)
    return Finding.make(
        rule=id,
        severity=Severity.P3 if dead else _severity(u, start_up),
        path=u.path,
        line=u.line,
        anchor=f"{u.function}|{u.name}",
        title=(
            msg(
                "undefined-name.title.registry",
                name=u.name,
                where=where,
                registry=u.registry,
                attr=u.name.split(".", 1)[1],
            )
            if u.registry
            else msg("undefined-name.title", name=u.name, where=where)
        ),
        evidence=tuple(evidence),
        suggestion=suggestion,
        extra=(
            ("field", u.name),
            ("function", u.function),
            ("start_up", str(start_up).lower()),
            *((("also", ",".join(map(str, u.also))),) if u.also else ()),
        ),
    )


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _attribute_finding(a: UnsetAttribute, derived: set[tuple[str, str]], dead: str | None = None) -> Finding:
    """A `self.X` / `args.X` read nothing sets: P0 on a start-up path as for names (P1 under a condition
    only some configurations take), P1 elsewhere; P3 in a method of a class nothing names, or when it
    only builds the message of an error raised anyway."""
    start_up = _start_up(UndefinedName(a.path, a.line, a.name, a.function, a.text), derived)
    where = (
        msg("undefined-name.at-import") if not a.function else msg("undefined-name.in", function=a.function)
    )
    return Finding.make(
        rule=id,
        severity=(
            Severity.P3
            if dead or a.message
            else Severity.P0
            if start_up and not a.conditional
            else Severity.P1
        ),
        path=a.path,
        line=a.line,
        anchor=f"{a.function}|{a.receiver}.{a.name}",
        title=msg(
            "undefined-name.title.unregistered" if a.unregistered else "undefined-name.title.attribute",
            name=a.name,
            receiver=a.receiver,
            where=where,
        ),
        evidence=(
            msg("undefined-name.line", place=place(a.path, a.line), text=clip(a.text, 100), where=where),
            msg(
                "undefined-name.unregistered" if a.unregistered else "undefined-name.attribute",
                name=a.name,
                flag=_flag(a.name),
                receiver=a.receiver,
            ),
            *((msg("undefined-name.reach.conditional"),) if a.conditional and not a.message else ()),
            *((msg("undefined-name.reach.message"),) if a.message else ()),
            *((_dead_line(dead),) if dead else ()),
            *(
                (
                    msg(
                        "undefined-name.attribute-more",
                        names=", ".join(f"`{a.receiver}.{n}`" for n in a.more),
                    ),
                )
                if a.more
                else ()
            ),
        ),
        suggestion=(
            msg("undefined-name.suggestion.attribute", name=a.name)
            if a.receiver == "self"
            else msg("undefined-name.suggestion.option", name=a.name, receiver=a.receiver, flag=_flag(a.name))
        ),
        extra=(("field", a.name), ("function", a.function), ("start_up", str(start_up).lower())),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = [s for s in sides(ctx.change, ctx.base_facts, ctx.head_facts) if s.path.endswith(".py")]
    if not changed:
        return
    texts = side_texts(ctx.change)
    derived = {(d.head.path, d.head.function or "") for d in ctx.derivations}
    found = undefined_names(changed, texts) + registry_attributes(changed, texts, ctx.change.head_tree)
    heads = {path: head for path, (_, head) in texts.items()}
    tree = ctx.change.head_tree

    def dead(path: str, function: str) -> str | None:
        head = heads.get(path)
        return unreferenced_class(function, path, head, tree) if function and head else None

    for u in sorted(found, key=lambda u: (u.path, u.line, u.name)):
        yield _finding(
            u, derived, dead(u.path, u.function) if u.reach not in ("message", "self-test") else None
        )
    for a in unset_attributes(changed, heads, tree, ctx.index.is_excluded):
        yield _attribute_finding(a, derived, dead(a.path, a.function))
