"""Strengths: deterministic statements of what the change does well, each backed by a fact."""

from __future__ import annotations

from reviewbot.analysis.reach import describe_reach
from reviewbot.checks.base import CheckContext
from reviewbot.lang.facts import lang_for_path
from reviewbot.lang.index import is_test_path
from reviewbot.lang.predicate import loose_key
from reviewbot.model.finding import Finding
from reviewbot.model.messages import Message, msg

__all__ = ["strengths"]


def strengths(ctx: CheckContext, findings: list[Finding]) -> list[Message]:
    """Catalogue messages: the report renders them in its language."""
    out: list[Message] = []
    change = ctx.change
    source = [f for f in change.files if lang_for_path(f.path) and not is_test_path(f.path)]
    functions = set()
    for f in source:
        facts = ctx.head_facts.get(f.path)
        if facts is None:
            continue
        for line in f.added_lines:
            fn = facts.function_at(line)
            if fn is not None:
                functions.add(fn.name)
    if len(functions) == 1 and len(source) == 1:
        (name,) = functions
        out.append(msg("strength.one-function", name=name))
    tests = [f for f in change.files if is_test_path(f.path) and f.skipped is None]
    if tests and ctx.derivations:
        names = {d.head.field for d in ctx.derivations}
        mentioned = [f.path for f in tests if any(n in (f.head_text or "") for n in names)]
        if mentioned:
            out.append(msg("strength.tests-added", paths=mentioned))
    for d in ctx.derivations:
        a = d.head
        if a.guard is None:
            continue
        same_fn = [
            p
            for p in ctx.index.predicate_uses(loose_key(a.guard))
            if p.path == a.path and p.function == a.function and p.line != a.guard_line
        ]
        if same_fn:
            p = same_fn[0]
            out.append(msg("strength.reuses-guard", place=f"{p.path}:{p.line}"))
        reach = describe_reach(a.guard, ctx.index)
        if reach is not None and reach.fires_at_default is False:
            out.append(msg("strength.safe-default"))
    ex = ctx.execution
    if ex is not None and ex.ran and ctx.derivations:
        killed = [d for d in ctx.derivations if ex.killed_by(d.head.path, d.head.line)]
        if killed and len(killed) == len(ctx.derivations):
            out.append(msg("strength.mutants-killed"))
    if change.files and change.coverage >= 1.0 and not change.diff_truncated:
        out.append(msg("strength.full-coverage"))
    return list(dict.fromkeys(out))
