"""The analysis core: ChangeSet in, Review out. No git, no GitHub, no network.

change -> facts (tree-sitter) -> index (one per round) -> checks -> findings -> checklist -> Review.
The same function serves the CLI, the rounds runner and the GitHub App worker.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.names import interesting_names
from reviewbot.analysis.reach.configs import describe_reach
from reviewbot.analysis.tables.truthtable import build_truth_tables
from reviewbot.checks.base import Check, CheckContext
from reviewbot.checks.registry import CHECKS, EXECUTION_RULES, KNOWN_RULES, active
from reviewbot.lang.cache import FactsCache, use
from reviewbot.lang.cpp.macros import declared
from reviewbot.lang.index import RepoIndex
from reviewbot.model.budget import DEFAULT_BUDGET, RoundBudget
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.executed import ExecutedTable
from reviewbot.model.finding import Finding
from reviewbot.model.kpi import executed_counts
from reviewbot.model.messages import Message, msg
from reviewbot.model.review import ChecklistResult, Review, RuleReach, Status
from reviewbot.model.tests import ExecutionResults, TestSummary
from reviewbot.model.truthtable import TruthTable
from reviewbot.review.budget import (
    ROUND_DEADLINE,
    Meter,
    for_mutants,
    limit_files,
    skipped_checks,
    within_terms,
)
from reviewbot.review.checklist import (
    Checklist,
    evaluate,
    load_checklist,
    parse_checklist,
    with_checklist_refs,
)
from reviewbot.review.progress import Progress, StageClock
from reviewbot.review.stages import changed_only_index, index_stage, parse_stage
from reviewbot.review.strengths import strengths
from reviewbot.review.suppress import apply_suppressions
from reviewbot.review.verdict import kpi_stage, verdict_stage

__all__ = [
    "ReviewSettings",
    "Execution",
    "review_change",
    "interesting_names",
    "parse_stage",
    "index_stage",
    "check_stage",
    "checklist_stage",
    "verdict_stage",
    "kpi_stage",
]

log = logging.getLogger(__name__)


class Execution(Protocol):
    """What the test-execution stage returns (see reviewbot.execution.execute)."""

    summary: TestSummary
    notes: list[Note]

    def results(self) -> ExecutionResults: ...


@dataclass
class ReviewSettings:
    lang: str = "en"
    checklists: Sequence[str] = ("general",)
    checklist_texts: dict[str, str] = field(default_factory=dict)  # repository YAML files: path -> text
    disabled_rules: frozenset[str] = frozenset()
    enabled_rules: frozenset[str] = frozenset()  # opt-in rules turned on (checks.registry.OPT_IN)
    now: Callable[[], datetime] = field(default=lambda: datetime.now(timezone.utc))
    # Hooks for later stages, kept as callables so the core never imports them.
    execute: Callable[[ChangeSet, list[ChangedDerivation]], Execution | None] | None = None
    truth_tables: Callable[[CheckContext], list[TruthTable]] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)  # stages run before the core (change, fetch)
    extra_checks: Sequence[Any] = ()
    exclude: tuple[str, ...] = ()  # `[review] exclude` of .reviewbot.toml: globs of paths never searched
    cpp_macros: tuple[str, ...] = ()  # `[cpp] macros`: the repository's attribute-like C++ macros
    notes: tuple[Note, ...] = ()  # said by the stages before the core (e.g. a bad .reviewbot.toml)
    facts_cache: FactsCache | None = None  # parsed facts kept between rounds (lang/cache.py)
    progress: Progress | None = None  # stage progress (review/progress.py: a terminal's stderr)
    budget: RoundBudget = DEFAULT_BUDGET  # the round's bounds (model/budget.py, review/budget.py)


def _dedupe(findings: list[Finding]) -> tuple[list[Finding], int]:
    """Collapse findings with one fingerprint into the first; return how many were merged."""
    seen: dict[str, Finding] = {}
    merged = 0
    for f in findings:
        if f.fingerprint in seen:
            merged += 1
            continue
        seen[f.fingerprint] = f
    ordered = sorted(seen.values(), key=lambda f: (f.severity.rank, f.path, f.line, f.rule))
    return ordered, merged


def _reach_of(derivations: list[ChangedDerivation], index: RepoIndex) -> list[RuleReach]:
    """How far each changed guarded rule reaches, for the JSON report (the sentence is also evidence)."""
    out: list[RuleReach] = []
    for d in derivations:
        reach = describe_reach(d.head.guard, index)
        if reach is None or not reach.sentence:
            continue
        a = d.head
        out.append(RuleReach(a.target, a.path, a.line, reach.sentence, reach.fires_at_default, reach.models))
    return out


def tables_for_context(ctx: CheckContext) -> list[TruthTable]:
    """The `ReviewSettings.truth_tables` hook: tables of the round's changed derivations."""
    return build_truth_tables(ctx.derivations, ctx.head_facts, ctx.index)


@dataclass(frozen=True)
class Checked:
    """Stage `check`: the findings of every rule that ran, and the rules that crashed."""

    findings: list[Finding]
    merged: int
    ran: int
    crashed: tuple[str, ...]
    notes: tuple[Note, ...]
    # Rules that judged nothing for a reason the checklist should say (rule id -> why), e.g.
    # missing-tests where the repository tests none of the changed logic.
    abstained: tuple[tuple[str, Message], ...] = ()


def check_stage(ctx: CheckContext, settings: ReviewSettings, meter: Meter | None = None) -> Checked:
    """Every registered rule (static and execution-stage alike) through `run(ctx)`; past the
    round's time or memory budget (`meter`), the rules not run yet are named in a note instead."""
    raw: list[Finding] = []
    crashed: list[str] = []
    abstained: list[tuple[str, Message]] = []
    notes: list[Note] = []
    running = active(settings.disabled_rules, settings.enabled_rules)
    checks = [m for rid, m in CHECKS.items() if rid in running] + list(settings.extra_checks)
    for n, check in enumerate(checks):
        if settings.progress is not None:  # a terminal's progress line: `checks… (12/40 rules)`
            settings.progress("checks", f"{n}/{len(checks)} rules")
        why = meter.over() if meter is not None else None
        if why is not None and meter is not None:
            notes.append(meter.note(why, skipped_checks([c.id for c in checks[n:]])))
            break
        try:
            raw.extend(check.run(ctx))
            why = abstention(check, ctx)
            if why is not None:
                abstained.append((check.id, why))
        except Exception as exc:  # a crashing check must not sink the round; it is reported instead
            log.exception("check %s crashed", check.id)
            crashed.append(check.id)
            notes.append(
                Note.of(
                    SkipReason.CHECK_CRASHED,
                    msg("note.check-crashed", id=check.id, error=f"{type(exc).__name__}: {exc}"),
                )
            )
    findings, merged = _dedupe(raw)
    return Checked(findings, merged, len(checks), tuple(crashed), tuple(notes), tuple(abstained))


def abstention(check: Check, ctx: CheckContext) -> Message | None:
    """A rule's own reason for judging nothing (its optional `abstention(ctx)`), or None."""
    ask = getattr(check, "abstention", None)
    return ask(ctx) if callable(ask) else None


def rules_off(settings: ReviewSettings) -> frozenset[str]:
    """The registered rules this round does not run: disabled, or opt-in and not enabled."""
    return KNOWN_RULES - active(settings.disabled_rules, settings.enabled_rules)


def checklist_stage(
    findings: list[Finding],
    settings: ReviewSettings,
    ran_tests: bool,
    abstained: Sequence[tuple[str, Message]] = (),
) -> tuple[ChecklistResult, list[Finding]]:
    known_rules = set(KNOWN_RULES) | {getattr(c, "id", "") for c in settings.extra_checks}
    lists: list[Checklist] = [
        parse_checklist(settings.checklist_texts[name], name, known_rules)
        if name in settings.checklist_texts
        else load_checklist(name, known_rules)
        for name in settings.checklists
    ]
    # A rule that did not run (disabled, or opt-in and not enabled) leaves its items unevaluated, not
    # passed, and says why.
    off = rules_off(settings)
    not_run = off if ran_tests else off | EXECUTION_RULES
    why = {rule: m.render(settings.lang) for rule, m in abstained}
    for rule in sorted(off):
        key = "checklist.rule-disabled" if rule in settings.disabled_rules else "checklist.rule-opt-in"
        why[rule] = msg(key, rule=rule).render(settings.lang)
    checklist = evaluate(lists, findings, settings.lang, not_run, why)
    return checklist, with_checklist_refs(findings, checklist)


def _execute_tables(
    execution: Execution | None, ctx: CheckContext, meter: Meter, notes: list[Note]
) -> list[ExecutedTable]:
    """Run the truth tables against the code (the test stage's `tables` hook, execution/tables.py)
    and hand the rules what ran; [] when the tests did not run or there is no table."""
    hook = getattr(execution, "tables", None)
    if hook is None or not ctx.truth_tables or ctx.execution is None or meter.over() is not None:
        return []
    token = ROUND_DEADLINE.set(meter.deadline)
    try:
        runs = hook(ctx.change, ctx.truth_tables, ctx.head_facts, ctx.index)
    finally:
        ROUND_DEADLINE.reset(token)
    notes.extend(runs.notes)
    ctx.execution = replace(ctx.execution, tables=tuple(runs.tables))
    return list(runs.tables)


def review_change(change: ChangeSet, settings: ReviewSettings | None = None) -> Review:
    """The stages in order: parse, index, analyse, execute, check, checklist, verdict, KPI.

    With `settings.facts_cache`, every parse of the round looks there first (same results either
    way: the cache is keyed by path, text, focus and analyser version)."""
    settings = settings or ReviewSettings()
    store = settings.facts_cache
    hits, misses = (store.hits, store.misses) if store is not None else (0, 0)
    with use(store), declared(settings.cpp_macros):
        review = _review_change(change, settings)
    if store is not None:
        review.kpi["facts_cache"] = {"hits": store.hits - hits, "misses": store.misses - misses}
    return review


def _review_change(change: ChangeSet, settings: ReviewSettings) -> Review:
    timings: dict[str, float] = dict(settings.timings_ms)
    clock = StageClock(timings, settings.progress)
    notes: list[Note] = [*settings.notes, *change.notes]
    meter = Meter(settings.budget)
    notes.extend(limit_files(change, settings.budget))

    parsed = parse_stage(change, settings.exclude, meter)
    notes.extend(parsed.notes)
    # A guard with more terms than the budget is not analysed: truth tables, test sketches and
    # mutants grow with its terms (3,000 terms: 159 MB of one suggestion; 20,000: a crash).
    kept, term_notes = within_terms(parsed.derivations, settings.budget)
    parsed = replace(parsed, derivations=kept)
    notes.extend(term_notes)
    clock.lap("parse", "index", f"{len(change.files)} changed files parsed")
    why = meter.over()
    if why is None:
        indexed = index_stage(change, parsed, settings.exclude)
    else:
        indexed = changed_only_index(parsed, meter.note(why, msg("note.budget.skipped.index")))
    notes.extend(indexed.notes)
    index = indexed.index
    testing = settings.execute is not None and bool(parsed.derivations)
    read = f"{index.scanned_files} files read, {index.parsed_files} parsed"
    clock.lap("index", "tests" if testing else "checks", read)

    ctx = CheckContext(
        change=change,
        base_facts=parsed.base_facts,
        head_facts=parsed.head_facts,
        index=indexed.index,
        derivations=parsed.derivations,
        added_predicates=parsed.predicates,
        test_files=indexed.test_files,
        calls=indexed.calls,
        docs=indexed.docs,
    )
    execution: Execution | None = None
    if settings.execute is not None and parsed.derivations:
        why = meter.over()
        if why is not None:
            notes.append(meter.note(why, msg("note.budget.skipped.tests")))
        else:
            mutated, mutant_notes = for_mutants(parsed.derivations, settings.budget)
            notes.extend(mutant_notes)
            # The test stage ends by the round's deadline too (execution/execute.py reads it).
            token = ROUND_DEADLINE.set(meter.deadline)
            try:
                execution = settings.execute(change, mutated)
            finally:
                ROUND_DEADLINE.reset(token)
        if execution is not None:
            ctx.execution = execution.results()
            notes.extend(execution.notes)
        clock.lap("tests", "checks", read)
    why = meter.over()
    if why is None:
        ctx.truth_tables = (settings.truth_tables or tables_for_context)(ctx)
    else:
        notes.append(meter.note(why, msg("note.budget.skipped.tables")))
    executed_tables = _execute_tables(execution, ctx, meter, notes)

    checked = check_stage(ctx, settings, meter)
    notes.extend(checked.notes)
    # `reviewbot: ignore[rule] reason` comments take their findings out before anything counts them.
    unsuppressed, suppressed = apply_suppressions(change, checked.findings)
    checked = replace(checked, findings=unsuppressed)
    ran_tests = ctx.execution is not None and ctx.execution.ran
    verdict = verdict_stage(change, checked, notes)
    if verdict.status is Status.NO_CHANGE:
        # Nothing changed: no checklist either (17 ticked items would read as a clean review).
        checklist, findings = ChecklistResult(), checked.findings
    else:
        checklist, findings = checklist_stage(checked.findings, settings, ran_tests, checked.abstained)
    clock.lap("checks")
    clock.done()
    kpi = kpi_stage(change, parsed, indexed, checked, verdict)
    kpi["suppressed"] = len(suppressed)
    if suppressed:
        kpi["suppressed_findings"] = [s.to_json() for s in suppressed]
    if execution is not None:
        kpi["tests"] = execution.summary
    if executed_tables:
        kpi["executed_tables"] = executed_counts(executed_tables)
    review = Review(
        status=verdict.status,
        base_sha=change.base_sha,
        head_sha=change.head_sha,
        merge_base=change.merge_base,
        reviewed_at=settings.now().astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        findings=findings,
        checklist=checklist,
        strengths=[] if verdict.status is Status.NO_CHANGE else list(strengths(ctx, findings)),
        notes=notes,
        kpi=kpi,
        truth_tables=ctx.truth_tables,
        executed_tables=executed_tables,
        rules_off=tuple(sorted(rules_off(settings))),
        reach=_reach_of(parsed.derivations, indexed.index),
        tests=execution.summary if execution is not None else None,
        budget=settings.budget,
    )
    kpi["timings_ms"] = {k: round(v, 1) for k, v in timings.items()}
    return review
