"""comment-guard-mismatch (P3): the comment above a guarded rule promises less than the rule does.

## What it does
Reads the comment directly above a new or changed guarded derivation and compares it with what the
code does. Two mismatches are reported:
- the comment names a narrower population than the guard reaches: it names some members of the
  population the guard's atoms are derived from (`embedding` of every `task_type` other than
  `LANGUAGE_MODEL`), or some of the model configs that reach the rule, but not the others;
- the comment says what the rule skips, and the code the forced flag turns off — followed through its
  read sites into the functions it calls — also runs behaviour the comment does not mention.

## Why is this bad?
Reviewers and later readers trust the comment's invariant ("only embedding models, only the rope
kernel") instead of the condition. The rule then reaches configurations nobody checked — a reranker,
a model with log-n scaling — and the comment hides it.

## Example
```cpp
// Skip rope+bias+transpose kernel entirely for embedding models (no RoPE, no KV cache).
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {   // fires for every non-LM task
    config.need_rope_kv_cache = false;   // also skips log-n scaling in FusedRopeKVCacheOp.forward
}
```

## Use instead
```cpp
// Non-LANGUAGE_MODEL tasks without a rotary embedding: skip the fused rope/log-n/KV-cache kernel.
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;
}
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.coupled.feasible import switch_words
from reviewbot.analysis.coupled.skipped import feasible_skipped
from reviewbot.analysis.coupled.switches import callees_of_skipped, coupled_fields
from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.configs import Reach, describe_reach
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.lang.calls import CallGraph, CallSite, split_callee
from reviewbot.lang.common import is_log_callee
from reviewbot.model.finding import Finding, Location, Severity
from reviewbot.model.messages import Message, clauses, listing, msg

id = "comment-guard-mismatch"
severity = Severity.P3
summary = "The comment above a guarded rule names a narrower population, or less skipped work, than the code."

_SKIP_VERBS = frozenset({"skip", "bypass", "avoid", "disable", "omit", "drop", "elide", "turn"})
# Words that name no behaviour of their own (verbs of every kernel call, container helpers, glue).
_GENERIC = frozenset(
    {
        *("apply", "write", "read", "run", "forward", "call", "get", "set", "compute", "do", "make", "init"),
        *("update", "op", "ops", "kernel", "fused", "fuse", "impl", "self", "the", "to", "and", "of", "std"),
        *("list", "int", "len", "extend", "append", "str", "dict", "tuple", "float", "bool", "unique"),
        *(
            "shared",
            "ptr",
            "new",
            "create",
            "build",
            "with",
            "for",
            "from",
            "in",
            "on",
            "a",
            "an",
            "is",
            "by",
        ),
        *("fn", "func", "helper", "process", "prepare", "input", "output", "data", "tensor", "torch"),
        *("empty", "zeros", "view", "reshape", "contiguous", "size", "shape", "copy", "clone", "item"),
        *("cuda", "cpu", "as", "at", "entire", "entirely"),
    }
)
_POPULATION_WORDS = frozenset({"model", "task", "type", "config", "mode"})
# Words of a switch's name too plain to say which behaviour it is (`use_logn_attn` is named by `logn`).
_PLAIN_WORDS = frozenset({"attn", "attention", "config", "flag", "op", "kernel"})
_COMMENT_CHARS = 120  # the comment as quoted in the evidence (the whole comment is in the code)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in ("ing", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def _tokens(identifier: str) -> list[str]:
    out: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", identifier):
        out.extend(_stem(t) for t in _CAMEL.findall(part))
    return [t for t in out if t]


def _comment_words(comment: str) -> tuple[list[str], set[str]]:
    """The comment's words in order (stemmed) and the set with adjacent pairs joined (`kv cache` -> `kvcache`)."""
    words = [_stem(w) for w in re.findall(r"[A-Za-z0-9]+", comment)]
    joined = {a + b for a, b in zip(words, words[1:], strict=False)}
    return words, set(words) | joined


def _phrase(comment: str, tokens: set[str]) -> str:
    """The words of the comment that name `tokens`, with a following `models`/`tasks`: `embedding models`."""
    found = [m for m in re.finditer(r"[A-Za-z0-9]+", comment) if _stem(m.group(0)) in tokens]
    if not found:
        return " ".join(sorted(tokens))
    start, end = found[0].start(), found[-1].end()
    tail = re.match(r"\s+(?:models?|tasks?)\b", comment[end:], re.IGNORECASE)
    return comment[start : end + (tail.end() if tail else 0)]


def _named_members(members: tuple[str, ...], words: set[str]) -> dict[str, set[str]]:
    """Members the comment names -> the words that name them. A member whose every word appears is
    named; so is one sharing a word with the comment that no fully named member explains
    (`dense embedding` names DENSE_EMBEDDING only, `embedding` names every *_EMBEDDING)."""
    tokens = {m: set(_tokens(m)) - _POPULATION_WORDS for m in members}
    full = {m for m, t in tokens.items() if t and t <= words}
    explained = set().union(*(tokens[m] for m in full)) if full else set()
    out: dict[str, set[str]] = {}
    for m, t in tokens.items():
        hit = t & words
        if m in full or (hit - explained):
            out[m] = hit
    return out


@dataclass(frozen=True)
class _Population:
    said: str  # what the comment names: `embedding models`
    others: tuple[str, ...]  # what the guard also reaches: task types or model configs
    population: Message | str  # the guard's population in words


def _population_mismatch(comment: str, reach: Reach) -> _Population | None:
    """What the comment names and what the guard also reaches, when the comment names only part of it."""
    _, words = _comment_words(comment)
    for a in reach.atoms:
        if not a.members:
            continue
        named = _named_members(a.members, words)
        if named and len(named) < len(a.members):
            others = tuple(m for m in a.members if m not in named)
            said = _phrase(comment, set().union(*named.values()))
            population = a.population_bare or msg("comment-guard-mismatch.wider")
            return _Population(said, others, population)
    reached = [m for m in reach.builders if not m.excluded]
    named_models = [m for m in reached if m.name.lower() in words or _stem(m.name) in words]
    if named_models and len(named_models) < len(reached):
        said = ", ".join(m.name for m in named_models)
        unnamed = tuple(f"{m.name} ({place(m.path, m.line)})" for m in reached if m not in named_models)
        return _Population(said, unnamed, reach.population_msg or msg("comment-guard-mismatch.wider"))
    return None


def _is_accessor(name: str) -> bool:
    """`get_fp8_dtype`, `isPaged`, `has_bias`: computes a value, names no behaviour of its own."""
    words = [w.lower() for w in _CAMEL.findall(name.split("_", 1)[0])] or [name.lower()]
    return words[0] in ("get", "is", "has")


def _unmentioned(ctx: CheckContext, d: ChangedDerivation, comment: str) -> list[tuple[str, str, int, str]]:
    """(callee, path, line, function) of skipped behaviour whose name the comment never mentions."""
    words, word_set = _comment_words(comment)
    if not _SKIP_VERBS & set(words):
        return []
    graph = ctx.calls
    if graph is None:
        return []
    skipped = [sk for sk, _ in feasible_skipped(d, ctx.index, graph)]
    # The skipped statements' own calls, and the calls inside the functions they run that resolve to
    # code of the repository (not macros, casts or library helpers: they name no behaviour).
    sites = [(s, False) for sk in skipped for s in graph.sites_in(sk.path, sk.function, sk.lines)]
    for _, fn, _ in callees_of_skipped(d, ctx.index, graph):
        sites.extend((s, True) for s in graph.sites_in(fn.path, fn.name))
    out: dict[str, tuple[str, str, int, str]] = {}
    for s, nested in sites:
        name = _unnamed_behaviour(s, nested, graph, word_set)
        if name is not None:
            out.setdefault(name, (name, s.path, s.line, s.function or ""))
    return list(out.values())


def _unnamed_behaviour(s: CallSite, nested: bool, graph: CallGraph, word_set: set[str]) -> str | None:
    """The callee of `s` when it names behaviour (a function of the repository, not a log call, a
    constant, a cast or an accessor) with a distinctive word the comment does not use."""
    parts = split_callee(s.callee)
    # Calls on a local value (`kv_cache.append(x)`) are plumbing; behaviour is a function, an own
    # method or a method of an object the graph knows.
    if is_log_callee(s.callee) or ((len(parts) > 1 or nested) and not graph.resolve(s)):
        return None
    if not parts or parts[-1].isupper() or parts[-1].endswith("_cast") or _is_accessor(parts[-1]):
        return None
    distinct = {t for p in parts for t in _tokens(p)} - _GENERIC
    distinct = {t for t in distinct if len(t) > 1 and not t.isdigit()}
    if not distinct or distinct & word_set:
        return None
    return ".".join(parts) or s.callee


def _lost_switches(
    ctx: CheckContext, d: ChangedDerivation, word_set: set[str]
) -> list[tuple[str, str, int, str]]:
    """(`applies x`, path, line, function) of the switches the skipped code alone applies (see
    guard-ignores-coupled-flag) that the comment does not name."""
    out: list[tuple[str, str, int, str]] = []
    for c in coupled_fields(d, ctx.index, ctx.calls):
        if not c.lost or any(w in word_set for w in switch_words(c.field) if w not in _PLAIN_WORDS):
            continue
        x = c.feasible[0]
        out.append((c.field, x.path, x.line, x.function or ""))
    return out


def _check(ctx: CheckContext, d: ChangedDerivation) -> Finding | None:
    a = d.head
    comment = a.comment_above.strip()
    if not comment or a.guard is None or a.comment_line is None:
        return None
    reach = describe_reach(a.guard, ctx.index)
    population = _population_mismatch(comment, reach) if reach is not None else None
    unmentioned = _unmentioned(ctx, d, comment)
    words, word_set = _comment_words(comment)
    switches = _lost_switches(ctx, d, word_set) if _SKIP_VERBS & set(words) else []
    if population is None and not unmentioned and not switches:
        return None
    parts: list[Message | str] = []
    evidence: list[Message | str] = [
        msg(
            "comment-guard-mismatch.comment",
            place=place(a.path, a.comment_line),
            text=clip(comment, _COMMENT_CHARS),
        )
    ]
    extra: list[tuple[str, str]] = [("comment_line", str(a.comment_line))]
    if population is not None:
        parts.append(
            msg(
                "comment-guard-mismatch.names",
                said=population.said,
                others=listing(list(population.others), 2),
            )
        )
        evidence.append(
            msg(
                "comment-guard-mismatch.guard",
                guard=a.guard_text or a.guard.key,
                population=population.population,
            )
        )
        extra.append(("also_reaches", ", ".join(population.others)))
        if reach is not None and reach.sentence:
            extra.append(("reach", reach.sentence))
    skipped: list[Message] = []
    if switches:
        skipped.append(
            msg("comment-guard-mismatch.applies", names=[f"`{name}`" for name, *_ in switches[:2]])
        )
    if unmentioned:
        skipped.append(
            msg("comment-guard-mismatch.runs", places=listing([f"`{u[0]}`" for u in unmentioned], 2))
        )
    if skipped:
        what: Message = skipped[0]
        for more in skipped[1:]:
            what = msg("comment-guard-mismatch.and", first=what, second=more)
        lead = "comment-guard-mismatch.also" if parts else "comment-guard-mismatch.says-also"
        parts.append(msg(lead, what=what))
        found = [*switches, *unmentioned]
        evidence.append(
            msg(
                "comment-guard-mismatch.skipped",
                places=listing(
                    [
                        msg("comment-guard-mismatch.at", name=name, place=place(path, line))
                        for name, path, line, _ in found
                    ],
                    2,
                ),
            )
        )
        extra.append(
            (
                "skipped_behaviour",
                "; ".join(
                    f"`{n}` at {place(p, ln)}" + (f" in `{fn}`" if fn else "") for n, p, ln, fn in found
                ),
            )
        )
    return Finding.make(
        rule=id,
        severity=severity,
        path=a.path,
        line=a.comment_line,
        title=msg("comment-guard-mismatch.title", parts=clauses(parts)),
        anchor=f"{a.function or ''}|{a.guard.key}|comment",
        evidence=evidence,
        suggestion=msg("comment-guard-mismatch.suggestion"),
        extra=tuple(extra),
        related=(Location(a.path, a.guard_line or a.line),),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    seen: set[tuple[str, int]] = set()
    for d in ctx.derivations:
        a = d.head
        if a.comment_line is None or (a.path, a.comment_line) in seen:
            continue
        finding = _check(ctx, d)
        if finding is not None:
            seen.add((a.path, a.comment_line))
            yield finding
