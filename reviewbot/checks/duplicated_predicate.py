"""duplicated-predicate (P3): the change writes a compound condition a second time in the same function.

## What it does
Finds a compound predicate (two or more atoms, e.g. `style == RopeStyle::No && !use_kvcache`) on an added
line that is written again in the **same function**, where both copies decide a derived value: each guards
a write of a field (`config.x = ...` under `if (...)`) or is part of the written value (a ternary's
condition, a boolean). Spellings are compared after normalisation: whitespace, parentheses, operand
order of `&&`/`||`/`and`/`or`, `!x` vs `not x`, `::`/`->` vs `.`, `self.`/`this->`, and the root receiver
variable when it is named like a config (`config.x` vs `cfg.x` vs `self.x`). Operands are compared whole
otherwise: `!a.items.empty() && b.has_value()` and `!req.tokens.empty() && res.has_value()` test different
objects and are not the same predicate.

Only what the change itself does is reported. Not duplication: one value compared with constants (`prio < 0
|| prio > 3`, `mode == GRAPH || mode == ATTN`: a single atom in disguise); copies in other functions, files
or the other language (shared helpers, platform checks and the like are spelled out everywhere on purpose);
copies in branches that exclude each other (`if arch == A: ... elif arch == B: ...`, an `if` and its
`else`), which each handle one case; copies that decide the same field (`if backend is None: backend = "a"`
for one model, `... = "b"` for another: alternatives for one value); copies that only guard calls,
`return`s, `raise`s or locals (no derived field disagrees when they drift); a predicate that replaces one on
a removed line of its hunk, the same up to one renamed identifier (a rename or reformat), or one that the
change moves from a removed line elsewhere (code moved between files or functions). The suggested local is
named from the predicate's meaning (`rope_style_is_no_and_no_kvcache`), in the file's language.

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
const bool rope_style_is_no_and_no_kvcache = config.rope_config.style == RopeStyle::No && !use_kvcache;
config.fuse_qkv_add_bias = qk_norm || rope_style_is_no_and_no_kvcache ? false : true;
if (rope_style_is_no_and_no_kvcache) {
    config.need_rope_kv_cache = false;
}
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.checks.pinning import constant, split_comparison
from reviewbot.checks.predicate_names import local_declaration
from reviewbot.checks.predicate_names import name_for as name_for
from reviewbot.checks.util import MAX_TITLE, clip, place, snake
from reviewbot.lang.facts import AssignKind, Assignment, FileFacts, PredicateUse
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred, compound_parts, loose_key
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, listing, msg

id = "duplicated-predicate"
severity = Severity.P3
summary = (
    "A compound predicate added by the change is written again in the same function, deciding derived values."
)

_PATH = re.compile(r"(?<![\w.])[a-z_]\w*(?:\.[A-Za-z_]\w*)+")
# Root variables that only say "the config at hand": dropped before comparing operands.
_RECEIVER_WORDS = frozenset({"config", "configs", "cfg", "conf", "param", "params", "parameters", "args", "arg",
                             "options", "opts", "settings", "model", "gpt", "init", "server"})  # fmt: skip


def _receiver_like(root: str) -> bool:
    words = snake(root).split("_")
    return bool(words) and all(w in _RECEIVER_WORDS for w in words if w)


def _operand(text: str) -> str:
    def drop_root(m: re.Match[str]) -> str:
        root, rest = m.group(0).split(".", 1)
        return rest if _receiver_like(root) else m.group(0)

    return _PATH.sub(drop_root, text)


def _compatible(a: str, b: str) -> bool:
    """Two operands name the same thing: equal, or the longer path ends with the shorter one of two or
    more components (`attn_config.rope_config.style` and `rope_config.style`: the receivers differ)."""
    a, b = _operand(a), _operand(b)
    if a == b:
        return True
    short, long = sorted((a.split("."), b.split(".")), key=len)
    return len(short) >= 2 and long[-len(short) :] == short and bool(_PATH.fullmatch(".".join(long)))


_MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}


def _same_atom(a: Atom, b: Atom) -> bool:
    pa, pb = split_comparison(a.text), split_comparison(b.text)
    if pa is None or pb is None:
        return pa is None and pb is None and _compatible(a.text, b.text)
    (l1, op1, r1), (l2, op2, r2) = pa, pb
    if op1 == op2 and _compatible(l1, l2) and _compatible(r1, r2):
        return True
    return _MIRROR.get(op1) == op2 and _compatible(l1, r2) and _compatible(r1, l2)


def same_predicate(p: Pred, q: Pred) -> bool:
    """Equal after normalisation, operands included: `!a.items.empty() && b.ok()` and
    `!req.tokens.empty() && res.ok()` are different predicates; `config.rope_config.style == No` and
    `self.attn_config.rope_config.style == No` are the same."""
    if isinstance(p, Atom) and isinstance(q, Atom):
        return _same_atom(p, q)
    if isinstance(p, Not) and isinstance(q, Not):
        return same_predicate(p.arg, q.arg)
    if isinstance(p, (And, Or)) and type(p) is type(q) and len(p.args) == len(q.args):
        # Operands in the loose order (receivers stripped) pair up the arguments of both sides.
        left = sorted(p.args, key=lambda x: (loose_key(x), x.key))
        right = sorted(q.args, key=lambda x: (loose_key(x), x.key))
        return all(same_predicate(x, y) for x, y in zip(left, right, strict=True))
    return False


def _same_part(keyed: list[tuple[str, Pred]], key: str, part: Pred) -> bool:
    """Does a use whose parts are `keyed` (see `_keyed`) hold a part equal to ours after
    normalisation, operands included?"""
    return any(k == key and same_predicate(c, part) for k, c in keyed)


def _keyed(o: PredicateUse) -> list[tuple[str, Pred]]:
    return [(loose_key(c), c) for c in (o.pred, *compound_parts(o.pred))]


_TOKEN = re.compile(r"[A-Za-z_]\w*|\S")


def renamed(old: str, new: str) -> bool:
    """The same predicate, or the same one with one identifier renamed (`is_hybrid` -> `is_hybrid_swa`)."""
    if old == new:
        return True
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(a) != len(b):
        return False
    pairs = {(x, y) for x, y in zip(a, b, strict=True) if x != y}
    return len(pairs) == 1 and all(re.fullmatch(r"[A-Za-z_]\w*", x + y) for x, y in pairs)


def rewritten_in_place(
    ctx: CheckContext, use: PredicateUse, part: Pred, absorbed: set[tuple[str, int]]
) -> bool:
    """The added predicate replaces one on a removed line of its hunk that was the same up to one renamed
    identifier: the change renamed or reformatted an existing copy, it did not write a new one. Each
    removed predicate stands for one added copy (`absorbed` records which were used)."""
    changed = ctx.change.file(use.path)
    base = ctx.base_facts.get(changed.old_path or changed.path) if changed is not None else None
    if changed is None or base is None:
        return False
    new = loose_key(part)
    for h in changed.hunks:
        if use.line not in {n for n, _ in h.added}:
            continue
        removed = {n for n, _ in h.removed}
        for b in sorted(base.predicates, key=lambda b: b.line):
            if b.line not in removed or (base.path, b.line) in absorbed:
                continue
            if any(renamed(loose_key(x), new) for x in (b.pred, *compound_parts(b.pred))):
                absorbed.add((base.path, b.line))
                return True
    return False


# The scope as said in the report: copies are only counted in the same function.
_SCOPES = {"same function": msg("duplicated-predicate.scope.function")}


def _conjuncts(guard: Pred | None) -> list[Pred]:
    if guard is None:
        return []
    if isinstance(guard, And):
        return [c for a in guard.args for c in _conjuncts(a)]
    return [guard]


_COMPLEMENT = {
    "==": "!=",
    "!=": "==",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "is": "is not",
    "is not": "is",
}


def _compared(text: str) -> tuple[str, str, str] | None:
    """`(operand, op, constant)` of a comparison with a constant side, else None."""
    parts = split_comparison(text)
    if parts is None:
        return None
    left, op, right = parts
    if constant(right) is not None and constant(left) is None:
        return left, op, right
    if constant(left) is not None and constant(right) is None:
        return right, _MIRROR.get(op, op), left
    return None


def _excludes(a: Pred, b: Pred) -> bool:
    """`a` and `b` cannot both hold: one is the other negated (`x` / `!x`, `a == b` / `a != b`: an `if`
    and its `else` or `elif`), or both compare one operand for equality with different constants
    (`arch == "A"`, `arch == "B"`)."""
    if isinstance(a, Not) and a.arg.key == b.key or isinstance(b, Not) and b.arg.key == a.key:
        return True
    if not (isinstance(a, Atom) and isinstance(b, Atom)):
        return False
    pa, pb = split_comparison(a.text), split_comparison(b.text)
    if (
        pa is not None
        and pb is not None
        and (pa[0], pa[2]) == (pb[0], pb[2])
        and _COMPLEMENT.get(pa[1]) == pb[1]
    ):
        return True
    ca, cb = _compared(a.text), _compared(b.text)
    return ca is not None and cb is not None and ca[0] == cb[0] and ca[1] == cb[1] == "==" and ca[2] != cb[2]


def _exclusive(g1: Pred | None, g2: Pred | None) -> bool:
    """The two guards exclude each other (the writes sit in branches that never run together)."""
    left, right = _conjuncts(g1), _conjuncts(g2)
    return any(_excludes(a, b) for a in left for b in right)


def _subjects(part: Pred) -> set[str]:
    """What the predicate tests: the operand of each comparison with a constant (`x == A || x == B`
    tests `x` only), else the atom itself."""
    out: set[str] = set()
    for atom in part.atoms():
        compared = _compared(atom.text)
        out.add(_operand(compared[0]) if compared is not None else _operand(atom.text))
    return out


def _decided(facts: FileFacts | None, use: PredicateUse) -> list[Assignment]:
    """The field writes a condition decides: writes it guards (it is one of their enclosing conditions)
    or whose statement holds it (a ternary's condition, a boolean value). Writes of locals, pybind
    bindings and statements without a write (calls, `return`, `raise`) decide no derived field."""
    if facts is None:
        return []
    out = []
    for a in facts.assignments:
        if a.function != use.function or not a.receiver or a.kind is AssignKind.BINDING:
            continue
        start, end = a.stmt_start or a.line, a.stmt_end or a.line
        if start <= use.line <= end or any(s <= use.line <= e for s, e in a.guard_spans):
            out.append(a)
    return out


def _may_disagree(mine: list[Assignment], theirs: list[Assignment]) -> bool:
    """The two copies feed two different derived values that can be computed in the same run: some
    write decided by one copy and a write of another field decided by the other are not in branches
    that exclude each other. Copies that decide the same field are alternatives for that one value
    (`if not set: x = "a"` for one model, `if not set: x = "b"` for another), not one decision encoded
    twice."""
    return any(a.target != b.target and not _exclusive(a.guard, b.guard) for a in mine for b in theirs)


def moved_here(ctx: CheckContext, part: Pred, absorbed: set[tuple[str, int]]) -> bool:
    """The same predicate is on a removed line elsewhere in the change (any file): the change moved an
    existing copy (code moved between files or functions), it did not write a new one. Each removed
    copy stands for one added copy (`absorbed` records which were used)."""
    key = loose_key(part)
    for changed in sorted(ctx.change.files, key=lambda f: f.path):
        base = ctx.base_facts.get(changed.old_path or changed.path)
        if base is None:
            continue
        removed = {n for h in changed.hunks for n, _ in h.removed}
        for b in sorted(base.predicates, key=lambda b: b.line):
            if b.line not in removed or (base.path, b.line) in absorbed:
                continue
            if _same_part(_keyed(b), key, part):
                absorbed.add((base.path, b.line))
                return True
    return False


def run(ctx: CheckContext) -> Iterable[Finding]:
    reported: set[tuple[str, str]] = set()
    absorbed: set[tuple[str, int]] = set()
    for use in sorted(ctx.added_predicates, key=lambda u: (u.path, u.line, u.text)):
        facts = ctx.head_facts.get(use.path)
        if facts is None or use.function is None:
            continue
        mine = _decided(facts, use)
        if not mine:
            continue  # the added copy decides no derived field
        same_function = [o for o in facts.predicates if o.function == use.function and o.line != use.line]
        for part in compound_parts(use.pred):
            key = loose_key(part)
            if (use.path, key) in reported or len(_subjects(part)) < 2:
                continue  # one value tested against constants (`mode == A || mode == B`) is one atom
            others = [
                o
                for o in same_function
                if _same_part(_keyed(o), key, part) and _may_disagree(mine, _decided(facts, o))
            ]
            if not others or rewritten_in_place(ctx, use, part, absorbed) or moved_here(ctx, part, absorbed):
                continue
            reported.add((use.path, key))
            others = sorted(set(others), key=lambda o: (o.line, o.text))
            shown = use.text if part is use.pred else part.key
            scope = _SCOPES["same function"]
            evidence: list[Message | str] = [
                msg("duplicated-predicate.added", place=place(use.path, use.line), text=clip(use.text, 120))
            ]
            first = others[0]
            evidence.append(
                msg(
                    "duplicated-predicate.site",
                    scope=scope,
                    place=place(first.path, first.line),
                    text=clip(first.text, 120),
                )
            )
            if len(others) > 1:
                evidence.append(
                    msg(
                        "duplicated-predicate.sites",
                        scope=scope,
                        places=listing([place(o.path, o.line) for o in others[1:]], 3),
                    )
                )
            title = msg(
                "duplicated-predicate.title",
                predicate=clip(shown, 70),
                count=len(others) + 1,
                scopes=[scope],
            )
            finding = Finding.make(
                rule=id,
                severity=severity,
                path=use.path,
                line=use.line,
                title=title,
                anchor=key,
                evidence=evidence,
                suggestion=msg(
                    "duplicated-predicate.suggestion", example=local_declaration(part, shown, use.lang)
                ),
                extra=(("predicate", part.key), ("occurrences", str(len(others) + 1))),
            )
            yield finding.with_(title=clip(finding.title, MAX_TITLE))  # English clipped as before
            break  # the largest duplicated part of a condition is enough
