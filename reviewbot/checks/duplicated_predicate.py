"""duplicated-predicate (P3): a compound condition the change adds already exists elsewhere.

## What it does
Finds a compound predicate (two or more atoms, e.g. `style == RopeStyle::No && !use_kvcache`) on an added
line that is already written, in any spelling or in the other language, in the same function, the same file
or elsewhere in the repository. Spellings are compared after normalisation: whitespace, parentheses, operand
order of `&&`/`||`/`and`/`or`, `!x` vs `not x`, `::` vs `.`, and the receiver variable (`config.x` vs `self.x`).

## Why is this bad?
Each copy is an independent encoding of one decision. When the decision changes, one copy gets updated
and the others silently keep the old rule, so two derived flags disagree about the same configuration.

## Example
```cpp
config.fuse_qkv_add_bias = qk_norm || (config.rope_config.style == RopeStyle::No && !use_kvcache) ? false : true;
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {  // same predicate again
    config.need_rope_kv_cache = false;
}
```

## Use instead
```cpp
const bool no_rope_no_kvcache = config.rope_config.style == RopeStyle::No && !use_kvcache;
config.fuse_qkv_add_bias = qk_norm || no_rope_no_kvcache ? false : true;
if (no_rope_no_kvcache) {
    config.need_rope_kv_cache = false;
}
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import place
from reviewbot.lang.facts import Lang, PredicateUse
from reviewbot.lang.predicate import Pred, compound_parts, literals, loose_key
from reviewbot.model.finding import Finding, Severity

id = "duplicated-predicate"
severity = Severity.P3
MAX_SHOWN = 12  # occurrences listed as evidence; the count in the title covers all of them
summary = "A compound predicate added by the change already exists in the same function, file or repository."


def _scope(use: PredicateUse, other: PredicateUse) -> str:
    if other.path == use.path and other.function == use.function and other.function is not None:
        return "same function"
    if other.path == use.path:
        return "same file"
    return "other language" if other.lang != use.lang else "elsewhere"


def _name_for(part: Pred) -> str:
    """A local's name built from the predicate's atoms: `style_is_no_and_not_use_kvcache`."""
    words: list[str] = []
    for atom, want in literals(part):
        pieces = atom.text.split(" ")
        if len(pieces) == 3:
            left, op, right = pieces
            field, value = (right, left) if left[:1].isupper() else (left, right)
            word = f"{field.rsplit('.', 1)[-1]}_{'is' if op == '==' else 'is_not'}_{value.rsplit('.', 1)[-1]}"
        else:
            word = atom.text.rsplit(".", 1)[-1]
        words.append(word if want else f"not_{word}")
    name = "_and_".join(words) or "condition"
    return re.sub(r"\W+", "_", name).lower().strip("_")


def _named(part: Pred, written: str, lang: Lang) -> str:
    name = _name_for(part)
    return f"const bool {name} = {written};" if lang is Lang.CPP else f"{name} = {written}"


def run(ctx: CheckContext) -> Iterable[Finding]:
    reported: set[tuple[str, str]] = set()
    for use in ctx.added_predicates:
        for part in compound_parts(use.pred):
            key = loose_key(part)
            if (use.path, key) in reported:
                continue
            others = [
                o for o in ctx.index.predicate_uses(key) if not (o.path == use.path and o.line == use.line)
            ]
            if not others:
                continue
            reported.add((use.path, key))
            others.sort(key=lambda o: (o.path != use.path, o.path, o.line))
            scopes = sorted({_scope(use, o) for o in others})
            shown = use.text if part is use.pred else part.key
            evidence = [f"added: {place(use.path, use.line)} `{use.text}`"]
            evidence += [f"{_scope(use, o)}: {place(o.path, o.line)} `{o.text}`" for o in others[:MAX_SHOWN]]
            if len(others) > MAX_SHOWN:
                evidence.append(f"... and {len(others) - MAX_SHOWN} more occurrence(s)")
            yield Finding(
                rule=id,
                severity=severity,
                path=use.path,
                line=use.line,
                title=(
                    f"The predicate `{shown}` is written {len(others) + 1} times "
                    f"({', '.join(scopes)}); name it once and reuse it."
                ),
                anchor=key,
                evidence=tuple(evidence),
                suggestion=(
                    f"Extract the condition into one named local or helper (e.g. `{_named(part, shown, use.lang)}`) "
                    "and reuse it at every site, or document which copy is the source of truth."
                ),
                extra=(("predicate", part.key), ("occurrences", str(len(others) + 1))),
            )
            break  # the largest duplicated part of a condition is enough
