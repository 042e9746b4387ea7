"""env-name-typo (P2): the change reads or writes an environment variable under a misspelling of the project's name.

## What it does
For each environment variable the change reads (`os.environ.get`, `os.getenv`, `getenv`, `envs.X`, the
project's helpers) or writes (`os.environ["X"] = ...`, `setenv`) on an added line, searches the head
tree (code, documentation, Dockerfiles, shell scripts, YAML) for another environment name one edit
away (one letter inserted, dropped or replaced, two neighbouring letters swapped) or differing only in
case. It reports the name when the repository names it nowhere but on the lines this change added, and
names the other one as an environment variable elsewhere (an accessor, `export`, `ENV`, `$NAME`, a shell
or Dockerfile line).
When the change introduces both names (`GPTQ_BITS` in one file, `GTPQ_BITS` in another), it reports the
one whose differing word the repository writes nowhere else (`GTPQ`), when the other's word is the
project's (`gptq`, `GPTQ`, in any case, inside any identifier).
A name one inner word longer than a name the repository reads into a local of the same name
(`env_logging_level = os.getenv("MEGATRON_BRIDGE_LOGGING_LEVEL")` where the repository has
`env_logging_level = os.getenv("MEGATRON_LOGGING_LEVEL")`: code copied from a sibling project) is
reported too.
A name found nowhere else that has a stray lower-case letter inside an upper-case word
(`SCHEDUlER_RATIO`) is reported too: operators type the capitalised spelling.

Not flagged: a name used anywhere else in the head tree (then it is the project's own spelling), a
changed or swapped digit (`V1`/`V2`) or an edit inside a word shorter than four letters
(`TP_SIZE`/`PP_SIZE`), which usually make another variable rather than a typo; two new names whose
differing words the repository uses both, or neither (nothing tells which one is right).

## Why is this bad?
Nothing checks an environment variable's name. Operators set the spelling the project uses everywhere
else (docs, launch scripts, manifests); a read under a misspelled name never sees it, and the option
silently keeps its default. A write under a misspelled name configures nothing.

## Example
```python
ratio = int(os.environ.get("SCHEDUlER_RESERVE_RATIO", "5"))  # docs: SCHEDULER_RESERVE_RATIO
```

## Use instead
```python
ratio = int(os.environ.get("SCHEDULER_RESERVE_RATIO", "5"))
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.envs.typos import EnvTypo, env_typos
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place, places
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "env-name-typo"
severity = Severity.P2
summary = "An environment variable is read or written under a misspelling of the project's own name (one edit away, or one word more)."


def _make(
    t: EnvTypo, title: Message, *more: Message, suggestion: str = "env-name-typo.suggestion"
) -> Finding:
    """One finding at the changed read or write: its line first, then what tells the misspelling."""
    return Finding.make(
        rule=id,
        severity=severity,
        path=t.path,
        line=t.line,
        anchor=f"{t.name}|{t.other}",
        title=title,
        evidence=(msg("env-name-typo.changed", place=place(t.path, t.line), text=clip(t.text, 100)), *more),
        suggestion=msg(suggestion, name=t.name, other=t.other),
        extra=(("field", t.name), ("other", t.other)),
    )


def _verb(t: EnvTypo) -> Message:
    return msg("env-name-typo.writes" if t.written else "env-name-typo.reads")


def _stray(t: EnvTypo) -> Finding:
    title = msg("env-name-typo.title.case", name=t.name, other=t.other, verb=_verb(t))
    return _make(t, title, suggestion="env-name-typo.suggestion.case")


def _pair(t: EnvTypo, word: tuple[str, str, str, int, str]) -> Finding:
    right, wrong, path, line, text = word
    return _make(
        t,
        msg("env-name-typo.title.pair", name=t.name, other=t.other, verb=_verb(t), wrong=wrong),
        msg("env-name-typo.other", other=t.other, places=places([place(p, n) for p, n, _ in t.places])),
        msg("env-name-typo.word", right=right, wrong=wrong, place=place(path, line), text=clip(text, 100)),
    )


def _segment(t: EnvTypo, segment: tuple[str, str]) -> Finding:
    word, target = segment
    first_path, first_line, first_text = t.places[0]
    return _make(
        t,
        msg(
            "env-name-typo.title.segment", name=t.name, other=t.other, word=word, target=target, verb=_verb(t)
        ),
        msg("env-name-typo.first", place=place(first_path, first_line), text=clip(first_text, 100)),
    )


def _finding(t: EnvTypo) -> Finding:
    if t.word is not None:
        return _pair(t, t.word)
    if t.segment is not None and t.places:
        return _segment(t, t.segment)
    if t.mixed_case or not t.places:
        return _stray(t)
    first_path, first_line, first_text = t.places[0]
    return _make(
        t,
        msg("env-name-typo.title", name=t.name, other=t.other, count=len(t.places), verb=_verb(t)),
        msg("env-name-typo.other", other=t.other, places=places([place(p, ln) for p, ln, _ in t.places])),
        msg("env-name-typo.first", place=place(first_path, first_line), text=clip(first_text, 100)),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    if not changed:
        return
    heads = {f.path: f.head_text for f in ctx.change.files}
    for t in env_typos(changed, heads, ctx.change.head_tree, ctx.index):
        yield _finding(t)
