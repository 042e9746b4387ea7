"""duplicated-predicate (P3): a compound condition the change adds already exists elsewhere.

## What it does
Finds a compound predicate (two or more atoms, e.g. `style == RopeStyle::No && !use_kvcache`) on an added
line that is already written, in any spelling or in the other language, in the same function, the same file
or elsewhere in the repository. Spellings are compared after normalisation: whitespace, parentheses, operand
order of `&&`/`||`/`and`/`or`, `!x` vs `not x`, `::`/`->` vs `.`, `self.`/`this->`, and the root receiver
variable when it is named like a config (`config.x` vs `cfg.x` vs `self.x`). Operands are compared whole
otherwise: `!a.items.empty() && b.has_value()` and `!req.tokens.empty() && res.has_value()` test different
objects and are not the same predicate. A predicate that replaces one on a removed line of its hunk, the same up to one renamed identifier, is
an existing copy renamed or reformatted, not a new one. The suggested local is named from the predicate's meaning
(`rope_style_is_no_and_no_kvcache`), in the file's language.

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

import builtins
import re
from collections.abc import Iterable

from reviewbot.checks.base import CheckContext
from reviewbot.checks.pinning import column_name, constant, in_source_order, split_comparison
from reviewbot.checks.util import MAX_TITLE, clip, identifier, place, snake
from reviewbot.lang.facts import Lang, PredicateUse
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred, compound_parts, literals, loose_key
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, clauses, listing, msg

id = "duplicated-predicate"
severity = Severity.P3
summary = "A compound predicate added by the change already exists in the same function, file or repository."

_PATH = re.compile(r"(?<![\w.])[a-z_]\w*(?:\.[A-Za-z_]\w*)+")
# Root variables that only say "the config at hand": dropped before comparing operands.
_RECEIVER_WORDS = frozenset({"config", "configs", "cfg", "conf", "param", "params", "parameters", "args", "arg",
                             "options", "opts", "settings", "model", "gpt", "init", "server"})  # fmt: skip
MAX_NAME = 48  # characters of a suggested local's name


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


def _renamed(old: str, new: str) -> bool:
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
            if any(_renamed(loose_key(x), new) for x in (b.pred, *compound_parts(b.pred))):
                absorbed.add((base.path, b.line))
                return True
    return False


def _scope(use: PredicateUse, other: PredicateUse) -> str:
    if other.path == use.path and other.function == use.function and other.function is not None:
        return "same function"
    if other.path == use.path:
        return "same file"
    return "other language" if other.lang != use.lang else "elsewhere"


# The scopes as said in the report (keyed by the English word the ordering uses).
_SCOPES = {
    "same function": msg("duplicated-predicate.scope.function"),
    "same file": msg("duplicated-predicate.scope.file"),
    "other language": msg("duplicated-predicate.scope.language"),
    "elsewhere": msg("duplicated-predicate.scope.elsewhere"),
}
_NEGATED_PREFIX = (("use_", "no_"), ("has_", "no_"), ("enable_", "disable_"), ("is_", "not_"))
_COMPARE_WORDS = {">": "above", "<": "below", ">=": "at_least", "<=": "at_most"}
_NEGATED_COMPARE = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}


def _word(atom: Atom, want: bool) -> str:
    """The words of one literal: `rope_style_is_no`, `no_kvcache`, `has_quant`, `seq_len_above_8`."""
    parts = split_comparison(atom.text)
    if parts is not None:
        left, op, right = parts
        lc, rc = constant(left), constant(right)
        const = lc if rc is None else rc if lc is None else None
        if const is not None:
            field = column_name(right if lc is not None else left)
            if lc is not None:
                op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            if not want:
                op = {"==": "!=", "!=": "==", "is": "is not", "is not": "is"}.get(
                    op, _NEGATED_COMPARE.get(op, op)
                )
            value = const.py.rsplit(".", 1)[-1].strip("'\"").lower() or "empty"
            if const.kind == "none":
                return f"{field}_is_none" if op in ("==", "is") else f"has_{field}"
            if op in ("==", "is"):
                return f"{field}_is_{value}"
            if op in ("!=", "is not"):
                return f"{field}_is_not_{value}"
            if op in _COMPARE_WORDS:
                return f"{field}_{_COMPARE_WORDS[op]}_{value}"
        return identifier(atom.text) if want else f"not_{identifier(atom.text)}"
    word = column_name(atom.text)
    if want:
        return word
    if word.endswith("_empty"):  # `!x.items.empty()` -> `items_not_empty`
        return word[: -len("empty")] + "not_empty"
    for prefix, negated in _NEGATED_PREFIX:
        if word.startswith(prefix) and len(word) > len(prefix):
            return negated + word[len(prefix) :]
    return f"not_{word}"


def name_for(part: Pred, written: str) -> str:
    """A local's name built from what the predicate means, in the order it is written."""
    if isinstance(part, Or):
        words = [name_for(a, written) for a in part.args]
        joiner = "_or_"
    else:
        lits = literals(part)
        if not lits:
            return identifier(loose_key(part), "condition")
        words = [_word(atom, want) for atom, want in in_source_order(lits, written)]
        joiner = "_and_"
    name = identifier(joiner.join(words), "condition")
    if len(name) > MAX_NAME:  # cut at a word boundary
        name = name[:MAX_NAME].rsplit("_", 1)[0]
    return identifier(name, "condition")


def _named(part: Pred, written: str, lang: Lang) -> str:
    name = name_for(part, written)
    return f"const bool {name} = {written};" if lang is Lang.CPP else f"{name} = {written}"


def run(ctx: CheckContext) -> Iterable[Finding]:
    reported: set[tuple[str, str]] = set()
    absorbed: set[tuple[str, int]] = set()
    # A use of the index is compared with every added part of its key: its parts' keys are taken once
    # (recomputing them per comparison was a third of this rule's time on a 500-file change).
    # (By identity: this module's `id` is the rule's, hence builtins.id.)
    keyed: dict[int, tuple[PredicateUse, list[tuple[str, Pred]]]] = {}

    def parts_of(o: PredicateUse) -> list[tuple[str, Pred]]:
        entry = keyed.get(builtins.id(o))
        if entry is None or entry[0] is not o:
            entry = keyed[builtins.id(o)] = (o, _keyed(o))
        return entry[1]

    for use in sorted(ctx.added_predicates, key=lambda u: (u.path, u.line, u.text)):
        for part in compound_parts(use.pred):
            key = loose_key(part)
            if (use.path, key) in reported:
                continue
            others = [
                o
                for o in ctx.index.predicate_uses(key)
                if not (o.path == use.path and o.line == use.line) and _same_part(parts_of(o), key, part)
            ]
            if not others or rewritten_in_place(ctx, use, part, absorbed):
                continue
            reported.add((use.path, key))
            others = sorted(set(others), key=lambda o: (o.path != use.path, o.path, o.line, o.text))
            scopes = sorted({_scope(use, o) for o in others})
            shown = use.text if part is use.pred else part.key
            evidence: list[Message | str] = [
                msg("duplicated-predicate.added", place=place(use.path, use.line), text=clip(use.text, 120))
            ]
            first = others[0]
            evidence.append(
                msg(
                    "duplicated-predicate.site",
                    scope=_SCOPES[_scope(use, first)],
                    place=place(first.path, first.line),
                    text=clip(first.text, 120),
                )
            )
            if len(others) > 1:
                by_scope: dict[str, list[str]] = {}
                for o in others[1:]:
                    by_scope.setdefault(_scope(use, o), []).append(place(o.path, o.line))
                evidence.append(
                    clauses(
                        [
                            msg("duplicated-predicate.sites", scope=_SCOPES[scope], places=listing(where, 3))
                            for scope, where in sorted(by_scope.items())
                        ]
                    )
                )
            title = msg(
                "duplicated-predicate.title",
                predicate=clip(shown, 70),
                count=len(others) + 1,
                scopes=[_SCOPES[sc] for sc in scopes],
            )
            finding = Finding.make(
                rule=id,
                severity=severity,
                path=use.path,
                line=use.line,
                title=title,
                anchor=key,
                evidence=evidence,
                suggestion=msg("duplicated-predicate.suggestion", example=_named(part, shown, use.lang)),
                extra=(("predicate", part.key), ("occurrences", str(len(others) + 1))),
            )
            yield finding.with_(title=clip(finding.title, MAX_TITLE))  # English clipped as before
            break  # the largest duplicated part of a condition is enough
