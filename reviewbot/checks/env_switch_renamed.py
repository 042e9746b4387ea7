"""env-switch-renamed (P1; P3 for a rename nothing names): an environment switch is renamed or removed without an alias, or parsed stricter.

## What it does
Compares the environment reads of each changed file before and after the change (`os.environ.get`,
`os.environ[...]`, `os.getenv`, `getenv` / `std::getenv`, the project's own helpers recognised by shape
such as `get_env_bool("X", False)`) with every reader of the same name left in the head tree, in
either language:
- **removed or renamed**: a variable the change stopped reading that no source file of the head reads
  any more (tests do not count) — renamed when the same function now reads a new name instead;
- **alias dropped**: a removed compatibility write `os.environ["NEW"] = os.environ.get("OLD")` whose old
  name is now read by only some of the new name's readers (a C++ `getenv("NEW")` no longer sees `OLD`);
- **parsed stricter**: the same read now parses its text so that a value the old parsing accepted raises
  (`· == "1"` -> `bool(int(·))`: `X=true` now crashes at start-up), or `1` reads as off.

The evidence is the old read (base `path:line`), the documentation and the tests that still mention
the old name, and for a dropped alias the readers that no longer see it.

A removed or renamed switch is P1 when the repository told operators about it: its documentation or
its tests still name the old variable (or it was an alias the project wrote for them, or the new name
is a mixed-case typo). A renamed switch nothing in the repository names any more was an undocumented
knob: the finding is P3, a note for the release notes rather than a break a maintainer must fix. A
removed one (no new name read in its place) that nothing names is not reported: on the labelled corpus
none of those notes was labelled a problem (0 of 6 train findings: switches that went away with their
feature, a third-party library's variable the code stopped setting up).

Not flagged: a rename that keeps reading the old name as a fallback
(`os.environ.get("NEW", os.environ.get("OLD"))`), a brand-new switch, a read that moved to another file
or language (the name is still read), a parsing that accepts more than before, a test that is the old
one's exact complement (`!= "1"` -> `== "1"`: a warning that became an `assert` reads the switch the
same way; the statement around it, not the parsing, changed).

## Why is this bad?
Deployments set environment switches in launch scripts and manifests that the pull request cannot see.
A renamed or dropped switch is silently ignored: nothing fails, the deployment just loses the behaviour
it asked for (or its escape hatch). A stricter parsing turns a working manifest into a start-up crash.

## Example
```python
self.reuse_cache = bool(int(os.environ.get("REUSE_CACHE", "0")))  # was: USE_BLOCK_CACHE == "1"
```

## Use instead
```python
value = os.environ.get("REUSE_CACHE", os.environ.get("USE_BLOCK_CACHE", "0"))
if "USE_BLOCK_CACHE" in os.environ:
    logging.warning("USE_BLOCK_CACHE is deprecated, use REUSE_CACHE")
self.reuse_cache = value.lower() in ("1", "true", "yes")
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.envs.switches import (
    LostAlias,
    ParseChange,
    RemovedSwitch,
    lost_aliases,
    parse_changes,
    removed_switches,
)
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import MAX_EVIDENCE, clip, place, places
from reviewbot.lang.env import is_env_name
from reviewbot.lang.facts import EnvRead
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "env-switch-renamed"
severity = Severity.P1
summary = "An environment switch is renamed or removed without an alias, or parsed stricter."


def _read(e: EnvRead) -> str:
    """The read as code, its default included: `bool(int(os.environ.get('X', "1")))`,
    `os.environ['X']`, `envs.X` (without the default, evidence would misstate what unset means)."""
    if e.accessor == "os.environ[]":
        call = f"os.environ[{e.name!r}]"
    elif e.accessor.endswith(".X"):
        call = e.accessor[:-1] + e.name
    elif e.default is not None:
        call = f"{e.accessor}({e.name!r}, {e.default})"
    else:
        call = f"{e.accessor}({e.name!r})"
    return clip(e.parse.replace("·", call) if e.parse else call, 80)


def _mentions(name: str, ctx: CheckContext) -> list[Message]:
    out: list[Message] = []
    docs = ctx.docs.get(name, ())
    if docs:
        out.append(msg("env-switch-renamed.docs", places=places([place(d.path, d.line) for d in docs])))
    tests = ctx.index.tests_mentioning([name])
    if tests:
        out.append(msg("env-switch-renamed.tests", places=places([place(t.path, t.line) for t in tests])))
    return out


def _fallback(old: str, new: str, lang: str) -> str:
    if lang == "cpp":
        return f'getenv("{new}") ? getenv("{new}") : getenv("{old}")'
    return f'os.environ.get("{new}", os.environ.get("{old}"))'


def _removed(r: RemovedSwitch, ctx: CheckContext) -> Finding:
    new = r.renamed_to.name if r.renamed_to is not None else ""
    title = (
        msg("env-switch-renamed.title.renamed", name=r.name, new=new)
        if new
        else msg("env-switch-renamed.title.removed", name=r.name)
    )
    where = place(r.base.path, r.base.line)
    first = (
        msg(
            "env-switch-renamed.was-alias",
            new=r.alias_of,
            text=f"os.environ[{r.alias_of!r}] = …",
            place=where,
        )
        if r.alias_of
        else msg("env-switch-renamed.was-read", place=where, read=_read(r.base))
    )
    said = _mentions(r.name, ctx)
    evidence = [first, *said]
    typo = bool(new) and not is_env_name(new) and is_env_name(new.upper())
    if typo:
        # `SCHEDUlER_RATIO`: a lowercase letter in a name spelled in capitals is a typo operators will not type.
        evidence.insert(1, msg("env-switch-renamed.mixed-case", new=new, upper=new.upper()))
    # Operators set what the repository tells them to: a switch its docs or tests still name (or an
    # alias it wrote for them) is in launch scripts; one nothing names was an internal knob.
    told = bool(said) or bool(r.alias_of) or typo
    return Finding.make(
        rule=id,
        severity=severity if told else Severity.P3,
        path=r.path,
        line=r.line,
        anchor=f"removed|{r.name}|{new}",
        title=title,
        evidence=tuple(evidence[:MAX_EVIDENCE]),
        suggestion=msg(
            "env-switch-renamed.suggestion",
            name=r.name,
            fallback=_fallback(r.name, new or r.alias_of or "NEW_NAME", r.base.lang.value),
        ),
        extra=(("field", r.name), ("renamed_to", new), ("kind", "removed")),
    )


def _alias(a: LostAlias, ctx: CheckContext) -> Finding:
    kept = places([place(k.path, k.line) for k in a.kept], shown=2)
    lost = [place(r.path, r.line) for r in a.lost]
    evidence = [
        msg("env-switch-renamed.lost", new=a.new, old=a.old, places=places(lost)),
        msg(
            "env-switch-renamed.alias-write",
            text=clip(a.write.text, 80),
            place=place(a.write_path, a.write.line),
        ),
        *_mentions(a.old, ctx),
    ]
    lang = a.lost[0].lang.value if a.lost else "python"
    return Finding.make(
        rule=id,
        severity=severity,
        path=a.path,
        line=a.line,
        anchor=f"alias|{a.old}|{a.new}",
        title=msg("env-switch-renamed.title.alias", old=a.old, new=a.new, kept=kept, count=len(a.lost)),
        evidence=tuple(evidence[:MAX_EVIDENCE]),
        suggestion=msg("env-switch-renamed.suggestion", name=a.old, fallback=_fallback(a.old, a.new, lang)),
        extra=(("field", a.old), ("alias_of", a.new), ("kind", "alias"), ("lost", str(len(a.lost)))),
    )


def _parse(p: ParseChange) -> Finding:
    sample, before, after = p.breaks[0]
    effect = (
        msg("env-switch-renamed.effect.raises")
        if after.outcome.value == "raises"
        else msg("env-switch-renamed.effect.value", before=before.shown(), after=after.shown())
    )
    table = ", ".join(f"`{s or '(empty)'}`: {b.shown()} → {a.shown()}" for s, b, a in p.breaks[:4])
    return Finding.make(
        rule=id,
        severity=severity,
        path=p.head.path,
        line=p.head.line,
        anchor=f"parse|{p.name}|{p.head.parse}",
        title=msg(
            "env-switch-renamed.title.parse",
            name=p.name,
            parse=clip(p.head.parse, 50),
            old_parse=clip(p.base.parse, 50),
            sample=sample or '""',
            effect=effect,
        ),
        evidence=(msg("env-switch-renamed.samples", table=table, place=place(p.base.path, p.base.line)),),
        suggestion=msg("env-switch-renamed.suggestion.parse", name=p.name),
        extra=(
            ("field", p.name),
            ("kind", "parse"),
            ("old_parse", p.base.parse),
            ("new_parse", p.head.parse),
        ),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    for r in removed_switches(changed, ctx.index):
        f = _removed(r, ctx)
        if f.severity is Severity.P3 and r.renamed_to is None:
            continue  # removed with its feature, named nowhere: nobody is left setting it (see the docs)
        yield f
    for a in lost_aliases(changed, ctx.index):
        yield _alias(a, ctx)
    for p in parse_changes(changed):
        yield _parse(p)
