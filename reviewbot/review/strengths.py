"""Strengths: deterministic statements of what the change does well, each backed by a fact."""

from __future__ import annotations

from reviewbot.analysis.reach import describe_reach
from reviewbot.checks.base import CheckContext
from reviewbot.lang.facts import lang_for_path
from reviewbot.lang.index import is_test_path
from reviewbot.lang.predicate import loose_key
from reviewbot.model.finding import Finding

__all__ = ["strengths"]


def strengths(ctx: CheckContext, findings: list[Finding], lang: str = "en") -> list[str]:
    zh = lang == "zh"
    out: list[str] = []
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
        out.append(
            f"变更局限在一个函数内（`{name}`），影响面清晰。"
            if zh
            else f"The logic change is confined to one function (`{name}`)."
        )
    tests = [f for f in change.files if is_test_path(f.path) and f.skipped is None]
    if tests and ctx.derivations:
        names = {d.head.field for d in ctx.derivations}
        mentioned = [f.path for f in tests if any(n in (f.head_text or "") for n in names)]
        if mentioned:
            out.append(
                f"为变更的派生逻辑补充了测试：{', '.join(mentioned)}。"
                if zh
                else f"Tests were added for the changed derivation: {', '.join(mentioned)}."
            )
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
            out.append(
                f"判定口径复用函数内既有约定（{p.path}:{p.line}），未引入新的判据。"
                if zh
                else f"The new guard reuses the convention already used in the same function ({p.path}:{p.line})."
            )
        reach = describe_reach(a.guard, ctx.index)
        if reach is not None and reach.fires_at_default is False:
            out.append(
                "安全默认：各条件取默认值时该规则不会生效。"
                if zh
                else "Safe default: with every guard input at its default, the rule does not fire."
            )
    ex = ctx.execution
    if ex is not None and ex.ran and ctx.derivations:
        killed = [d for d in ctx.derivations if ex.killed_by(d.head.path, d.head.line)]
        if killed and len(killed) == len(ctx.derivations):
            out.append(
                "每个变更分支的变异体都被测试杀死：测试确实固定了这次变更。"
                if zh
                else "Every changed branch's mutant is killed by a test: the tests pin this change."
            )
    if change.files and change.coverage >= 1.0 and not change.diff_truncated:
        out.append(
            "所有变更文件均被完整分析（coverage 1.0）。" if zh else "Every changed file was analysed in full."
        )
    return list(dict.fromkeys(out))
