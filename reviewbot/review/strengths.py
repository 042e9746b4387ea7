"""Strengths: deterministic statements of what the change does well, each backed by a fact."""

from __future__ import annotations

from reviewbot.analysis.reach.configs import describe_reach
from reviewbot.checks.base import CheckContext
from reviewbot.lang.facts import Assignment, lang_for_path
from reviewbot.lang.index import is_test_path
from reviewbot.lang.predicate import loose_key
from reviewbot.model.finding import Finding
from reviewbot.model.messages import Message, msg

__all__ = ["strengths"]


def strengths(ctx: CheckContext, findings: list[Finding]) -> list[Message]:
    """Catalogue messages: the report renders them in its language."""
    out = [*_confined(ctx), *_tests_added(ctx)]
    for d in ctx.derivations:
        out.extend(_guard_strengths(d.head, ctx))
    ex = ctx.execution
    if ex is not None and ex.ran and ctx.derivations:
        killed = [d for d in ctx.derivations if ex.killed_by(d.head.path, d.head.line)]
        if killed and len(killed) == len(ctx.derivations):
            out.append(msg("strength.mutants-killed"))
    change = ctx.change
    if change.files and change.coverage >= 1.0 and not change.diff_truncated:
        out.append(msg("strength.full-coverage"))
    return list(dict.fromkeys(out))


def _confined(ctx: CheckContext) -> list[Message]:
    """The change's logic sits in one function of one source file."""
    source = [f for f in ctx.change.files if lang_for_path(f.path) and not is_test_path(f.path)]
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
        return [msg("strength.one-function", name=name)]
    return []


def _tests_added(ctx: CheckContext) -> list[Message]:
    """Test files of the change that name a changed derivation."""
    tests = [f for f in ctx.change.files if is_test_path(f.path) and f.skipped is None]
    if not tests or not ctx.derivations:
        return []
    names = {d.head.field for d in ctx.derivations}
    mentioned = [f.path for f in tests if any(n in (f.head_text or "") for n in names)]
    return [msg("strength.tests-added", paths=mentioned)] if mentioned else []


def _guard_strengths(a: Assignment, ctx: CheckContext) -> list[Message]:
    """A changed derivation's guard reuses one of its function's, or does not fire at the defaults."""
    if a.guard is None:
        return []
    out: list[Message] = []
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
    return out
