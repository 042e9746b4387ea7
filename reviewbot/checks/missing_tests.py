"""missing-tests (P1; P2 for one named model's rows; P3 only when a test run proved an opt-in's row unpinned; silent outside config code, in code no test mentions, and on an opt-in's rows nothing ran): a new or changed derivation branch no test pins.

## What it does
A changed truth-table row can only be pinned by a test that changed in the same change (an unchanged
test that asserted the row would have failed before or after it), or by an executed test that kills the
branch's mutant. So, for every derivation the change adds or alters:
- when the tests ran and the branch's mutant has a verdict, it decides (a survivor proves it unpinned);
- otherwise, the branch is untested when no test file **changed by this change** mentions the derived
  field, its function (when its name is distinctive) or the guard's inputs — in its added lines or in
  the test functions that hold them. Older tests that mention them do not count. An end-to-end test
  mentions them too when it launches with a guard input's option (`"--enable-deepep-moe"`) or loads a
  checkpoint of the guard's model (`"moonshotai/Kimi-Linear-48B-A3B-Instruct"` for
  `KimiLinearForCausalLM`): it runs the row (the 3 wrong findings of dev-scan sample 8 had such tests).
Not flagged: a write with nothing to tell apart (an unguarded literal, `model_config.async_mode =
True`; a plain copy; a construction or allocation; an unguarded test of whether one input is given,
`self.moe_enabled = config.moe is not None`: a test could only restate the input; dev-scan sample 13
judged three such P1s of a refactor wrong), and a write moved verbatim from another function
or changed file (`self.x = int(os.environ.get("X", 3))` from `Scheduler` into `Strategy`), and a write
the base made whose guard only gained platform tests (`if is_sm100_supported():` becoming `if is_cuda()
and is_sm100_supported():`): the rows that change are another platform's, which a test run on one
machine cannot pin (dev-scan sample 13 judged such a P2 a nit).

The severity is who reaches a changed row (`analysis.reach.untested`, from the branch's truth table
and its guard's reach), and the first evidence line names that population:
- **P1**: configurations that ship reach it: the changed row is the one every configuration gets at the
  declared defaults; a model config builder sets the guard's fields so that it holds; a guard atom is
  derived from a population (`use_kvcache` is `task_type == LANGUAGE_MODEL`: every embedding or reranker
  model); or an unguarded formula every configuration runs through replaced an older value.
- **P2**: the guard names a model family its deployments reach at the other defaults (`model_arch ==
  "DeepseekV3ForCausalLM"`): one model's own rows, worth a test, not a merge blocker (as P1, both such
  findings of a dev-scan sample were judged wrong: a model-support change's own adjustments).
- **P3** (a note), only when a test run left the branch's mutant alive: an opt-in (only who sets an env
  variable or flips a switch away from a default keeping the old behaviour reaches it, and nothing here
  sets it), or a branch in a file the change adds (a new backend or model: no configuration ran it
  before). Without that proof these rows are **not reported**: as P2 such findings were wrong on all 8
  test findings, and as P3 notes on 0 of 24 train and 0 of 12 test findings did a blind labeller see a
  problem (the rest were unlabelled or on allowed places).
- **not reported**: code outside config code (`analysis.scope`: a loader's scratch size), code no test
  mentions (field, function, guard inputs) unless a test run showed it untested (the checklist says
  "not evaluated" and why; as P3 nits these were wrong on all 18 train findings; P3 from a diff alone,
  where tests cannot be searched), and nothing new to pin: every row equals the old one (a rewritten
  condition); a rename (`n_ctx / params.n_parallel` -> `n_ctx / params_base.n_parallel`); a
  pass-through (an unguarded call that reads or parses an input, `self.x = get_x(param_dict)`,
  `params.cache_type_k = kv_cache_type_from_str(value)`); an argument parser's branch that maps an
  option's text to its field (`if (value == "none") params.rope_scaling_type = NONE;`); a decision the
  change moved (its guard's names and its value were on a removed line); a branch reached only through
  a switch this change introduces, off by default (nobody reaches it before opting in); a new
  unguarded formula for a field the base never wrote there; a destructor's teardown; the base's
  decision stored in another field (`self.mp_world_size = ...` -> `config.tensor_parallel.tp_size =
  ...` under the same guard); an option branch that also checks the text passed (`arg ==
  "-ctk-first"` and `p.size() == 2`); runtime state rather than a setting: a value no test can
  reproduce (`f"{id}-{random_uuid()}"`, the clock), a private handle left empty (`self._endpoint =
  None`); a plain read of a declared environment setting (`self.level = envs.TOOL_STRICT_LEVEL.get()`:
  the registry holds its default and parsing); a type normalisation of one input (`if isinstance(p, str): cfg.p = (p,) else: cfg.p = p`);
  a fallback that fills an unset field from another setting (`if (dft.n_gpu_layers < 0)
  dft.n_gpu_layers = base.n_gpu_layers;`). A maintainer asked "what would this test pin?" has no
  answer for these: the row is what the user typed, what the base already did, or not reproducible.
The suggestion lists the rows a focused test must pin; when the truth table was executed in the sandbox
and its generated test passes on the head and fails on the base (verified), that test is the code to
paste. No unexecuted sketch is offered: one nobody ran may call a helper the project does not have.

## Why is this bad?
A derived flag that is wrong produces no error, only wrong behaviour somewhere downstream (a skipped
kernel, a skipped cache write). Without a test that fixes the truth table, the next edit of the condition
goes unnoticed until production; how soon depends on who takes the row, which is why the severity does.

## Example
```cpp
// P1: `use_kvcache` is `task_type == TaskType::LANGUAGE_MODEL`, so every embedding model takes the row
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;   // the change adds no test; an old kernel test mentions the field
}
```
```python
# not reported unless a test run leaves its mutant alive (then a P3 note): only deployments that set
# FAST_PATH=1 take the row
if os.environ.get("FAST_PATH") == "1":
    self.block_size = 64
```

## Use instead
A focused test of the truth table in the same change: the row where the rule fires, each row where
exactly one guard atom is flipped (the input is kept), and the row where the input already has the
forced value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.configs import shared
from reviewbot.analysis.reach.untested import Population, population, table_of
from reviewbot.analysis.scope import in_config_code
from reviewbot.checks.base import CheckContext
from reviewbot.checks.missing_tests_search import (
    ChangedTest,
    changed_tests,
    definitions,
    has_rows,
    new_file,
    platform_narrowed,
    practice,
    searched,
    severity_for,
    tested_by_change,
)
from reviewbot.checks.pinning import pin_table
from reviewbot.checks.util import (
    MAX_TITLE,
    assignment_anchor,
    clip,
    moved_from_elsewhere,
    moved_unchanged,
    moved_writes,
    short_function,
    statement,
)
from reviewbot.lang.facts import Assignment
from reviewbot.lang.index import RepoIndex
from reviewbot.model.executed import verified_for
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, listing, msg
from reviewbot.model.tests import ExecutionResults

id = "missing-tests"
severity = Severity.P1
summary = "A new or changed derivation branch has no test that pins it."


def rows_to_pin(d: ChangedDerivation, index: RepoIndex) -> tuple[list[str], list[tuple[list[str], str]]]:
    """Columns and rows (inputs -> expected) a focused test must pin for this branch, as text."""
    table = pin_table(d, index)
    cols = [c.label for c in table.columns]
    rows = [
        ([v.text for v in r.inputs], f"{r.expected.text} (kept)" if r.kept else r.expected.text)
        for r in table.rows
    ]
    return cols, rows


def _survived(ex: ExecutionResults, path: str, line: int) -> Message:
    """The proof that no test pins the branch: its mutant ran and every test still passed."""
    r = ex.mutant_for(path, line)
    what = (
        msg("missing-tests.mutant", id=r.mutant.id, description=r.mutant.description)
        if r is not None
        else msg("missing-tests.reverted")
    )
    return msg("missing-tests.survived", command=ex.command, what=what, sandbox=ex.sandbox)


def _offer(
    ctx: CheckContext, a: Assignment, rows_text: str
) -> tuple[Message, tuple[str, str], tuple[tuple[str, str], ...]]:
    """The suggestion, its code and the `verified` extra: the executed truth table's own test when it
    ran in the sandbox and passes on the head and fails on the base (model.executed); else the rows to
    pin in prose and no code (a sketch nobody ran may call a helper the project does not have)."""
    ex = ctx.execution
    proven = verified_for(ex.tables, a.path, a.function, a.target) if ex is not None else None
    if ex is None or proven is None:
        return msg("missing-tests.suggestion", rows=rows_text), ("", ""), ()
    failing = ", ".join(str(r) for r in proven.fails_on_base)
    said = msg("missing-tests.suggestion.verified", rows=rows_text, sandbox=ex.sandbox, failing=failing)
    lang = "cpp" if proven.harness is not None and proven.harness.kind == "cpp" else "python"
    return said, (proven.test_code, lang), (("verified", "passes on head, fails on base"),)


def _verdict(ctx: CheckContext, d: ChangedDerivation) -> list[str] | None:
    """Tests that kill the branch's mutant; [] when it survived; None when there is no verdict."""
    ex = ctx.execution
    if ex is None or not ex.ran:
        return None
    return ex.killed_by(d.head.path, d.head.line)


@dataclass(frozen=True)
class _Untested:
    """One function's branches that no test pins, and what was searched to say so."""

    function: str
    branches: list[ChangedDerivation]  # in guard/line order; the first is the finding's anchor
    survived: bool  # the verdict came from executed tests (a surviving mutant)
    names: list[str]  # what the changed tests were searched for
    own: list[str]  # the fields and (distinctive) function name
    tests: list[ChangedTest]
    severity: Severity  # from who reaches the changed rows of the anchor (the first branch)
    population: Population  # the anchor's
    opt_in: bool = False  # only an opt-in (or a file the change adds) reaches it and nothing ran: not asked


def reached(ctx: CheckContext) -> dict[tuple[str, int, str, str], Population]:
    """Who reaches the changed rows of every derivation that has rows to pin and did not only move
    (`untested_reach.population`), by `_key`; shared with untested-branch."""
    moved = moved_writes(ctx.base_facts, ctx.head_facts)
    out: dict[tuple[str, int, str, str], Population] = {}
    added = {f.path: set(f.added_lines) for f in ctx.change.files if f.skipped is None}
    removed = tuple(t for f in ctx.change.files if f.skipped is None for t in f.removed_lines.values())
    before = "\n".join(f.base_text for f in ctx.change.files if f.skipped is None and f.base_text)
    fresh = "\n".join(t for f in ctx.change.files if f.skipped is None for t in f.added_lines.values())
    for d in ctx.derivations:
        old = ctx.change.file(d.head.path)
        base = ctx.base_facts.get((old.old_path or old.path) if old is not None else d.head.path)
        if not has_rows(d) or moved_unchanged(d.head, base, old) or moved_from_elsewhere(d.head, moved):
            continue
        out[_key(d)] = population(
            d,
            table_of(d, ctx.truth_tables),
            ctx.index,
            ctx.head_facts.get(d.head.path),
            base,
            old,
            added,
            removed,
            before,
            fresh,
        )
    return out


def nothing_new(ctx: CheckContext) -> set[str]:
    """`path:line` of the changed writes with nothing new to pin: a rename, a pass-through, a moved
    decision, rows equal to the old ones (untested-branch leaves their surviving mutants alone)."""
    who = reached(ctx)
    return {
        f"{d.head.path}:{d.head.line}"
        for d in ctx.derivations
        if (p := who.get(_key(d))) is not None and p.kind == "none"
    }


def _untested(ctx: CheckContext) -> Iterator[_Untested]:
    return (u for u, practiced in _judged(ctx) if practiced)  # what is reported (untested-branch asks)


def abstention(ctx: CheckContext) -> Message | None:
    """Why it judged nothing where there is config logic to pin: the checklist says it, not a pass."""
    judged = [u for u, ok in _judged(ctx) if not ok]
    left = dict.fromkeys(f"`{u.function or u.branches[0].head.path}`" for u in judged if not u.opt_in)
    if left:
        return msg("missing-tests.abstained", where=listing(list(left), 3))
    opt_in = dict.fromkeys(f"`{u.function or u.branches[0].head.path}`" for u in judged)
    return msg("missing-tests.abstained-opt-in", where=listing(list(opt_in), 3)) if opt_in else None


def _judged(ctx: CheckContext) -> tuple[tuple[_Untested, bool], ...]:
    """Each function's untested branches in config code, and whether the project tests it (once a round)."""
    return shared("missing-tests", ctx.index, (ctx.derivations, ctx.execution), lambda: tuple(_judge(ctx)))


def _judge(ctx: CheckContext) -> Iterator[tuple[_Untested, bool]]:
    if not ctx.derivations:
        return
    defined = definitions(ctx)
    tests = changed_tests(ctx)
    who_reaches = reached(ctx)
    functions = _by_function(ctx, who_reaches)
    for key in sorted(functions):
        group = functions[key]
        verdicts = [_verdict(ctx, d) for d in group]
        survivors = [d for d, v in zip(group, verdicts, strict=True) if v == []]
        # Killed mutants are pinned; without a verdict, a new or edited test that mentions them decides.
        open_ = [d for d, v in zip(group, verdicts, strict=True) if v is None]
        if not survivors and not open_:
            continue
        fn = short_function(key[1])
        own, names = searched(open_, fn, defined)
        if open_ and tested_by_change(tests, names, open_):
            open_ = []
        # The branch that reaches the most configurations leads (its rows, its population).
        untested = sorted(
            survivors + open_,
            key=lambda g: (
                _RANK[who_reaches[_key(g)].kind],
                g.head.guard_line or g.head.via_line or g.head.line,
                g.head.line,
            ),
        )
        if untested:
            who = who_reaches[_key(untested[0])]
            sev = severity_for(who.kind, who.reason, new_file(ctx, untested[0]))
            config = bool(survivors) or in_config_code(untested[0].head)
            sev, practiced = practice(ctx, bool(survivors), names, sev)
            # An opt-in's or a new file's rows with no run to prove them unpinned: judged, nothing to
            # ask (as P3 notes, 0 of 24 train and 0 of 12 test findings were labelled a problem).
            quiet = sev is Severity.P3 and not survivors and ctx.change.head_tree is not None
            if config:  # outside config code there is no setting to pin: judged, nothing to ask
                u = _Untested(fn, untested, bool(survivors), names, own, tests, sev, who, quiet)
                yield u, practiced and not quiet


_RANK = {"production": 0, "opt-in": 1, "none": 2}


def _by_function(
    ctx: CheckContext, who_reaches: dict[tuple[str, int, str, str], Population]
) -> dict[tuple[str, str], list[ChangedDerivation]]:
    """The derivations with something new to pin, by (path, function), in guard/line order: one
    finding per function, as its new and changed branches are one request for a focused test."""
    functions: dict[tuple[str, str], list[ChangedDerivation]] = {}
    for d in ctx.derivations:
        who = who_reaches.get(_key(d))
        if who is None or who.kind == "none":
            continue  # nothing new to pin: a rename, a pass-through, rows equal to the old ones
        if platform_narrowed(d):
            continue  # rows that differ only on another platform: a CI run on one cannot pin them
        functions.setdefault((d.head.path, d.head.function or ""), []).append(d)
    for group in functions.values():
        group.sort(
            key=lambda d: (d.head.guard_line or d.head.via_line or d.head.line, d.head.line, d.head.target)
        )
    return functions


def _key(d: ChangedDerivation) -> tuple[str, int, str, str]:
    return d.head.path, d.head.line, d.head.target, d.head.value


def untested_writes(ctx: CheckContext) -> set[str]:
    """`path:line` of every write this rule reports as untested."""
    return {f"{d.head.path}:{d.head.line}" for u in _untested(ctx) for d in u.branches}


def _evidence(ctx: CheckContext, u: _Untested) -> list[Message | str]:
    """The surviving mutant (or the tests searched), who reaches the changed rows, and older tests that
    mention the names but did not change."""
    a = u.branches[0].head
    evidence: list[Message | str] = []
    if u.survived and ctx.execution is not None:
        evidence.append(_survived(ctx.execution, a.path, a.line))
    if not u.survived:
        listed = listing([f"`{n}`" for n in u.names], 6)
        evidence.append(
            msg("missing-tests.searched", count=len(u.tests), names=listed)
            if u.tests
            else msg("missing-tests.searched-none", names=listed)
        )
    if u.population.evidence:
        evidence.append(u.population.evidence)  # who reaches the changed rows: the severity's ground
    older = [r for r in ctx.index.tests_mentioning(u.own) if r.path not in {t.path for t in u.tests}]
    if older:
        at = listing(sorted(dict.fromkeys(f"{r.path}:{r.line}" for r in older)), 2)
        evidence.append(msg("missing-tests.unchanged", places=at))
    return evidence


def run(ctx: CheckContext) -> Iterable[Finding]:
    for u in _untested(ctx):
        survived, untested, fn = u.survived, u.branches, u.function
        a = (d := untested[0]).head
        evidence = _evidence(ctx, u)
        table = pin_table(d, ctx.index)
        (_, rows), cols = rows_to_pin(d, ctx.index), [c.label for c in table.columns]
        rows_text = "; ".join(
            "(" + ", ".join(f"{c}={v}" for c, v in zip(cols, inp, strict=True)) + f") -> {exp}"
            for inp, exp in rows
        )
        suggestion, (code, code_lang), verified = _offer(ctx, a, rows_text)
        more: Message | str = msg("missing-tests.more", count=len(untested) - 1) if len(untested) > 1 else ""
        title = msg(
            "missing-tests.title." + ("new" if d.new_branch else "changed"),
            statement=statement(a),
            where=fn or a.path,
            more=more,
        )
        finding = Finding.make(
            rule=id,
            severity=u.severity,
            path=a.path,
            line=a.guard_line or a.via_line or a.line,
            title=title,
            anchor=assignment_anchor(a),
            evidence=evidence[:3],
            suggestion=suggestion,
            suggestion_code=code,
            suggestion_lang=code_lang,
            extra=(
                ("field", a.field),
                ("function", a.function or ""),
                ("assignment", f"{a.path}:{a.line}"),
                ("assignments", ", ".join(f"{g.head.path}:{g.head.line}" for g in untested)),
                *verified,
            ),
        )
        # English clipped as before (the report caps other languages)
        english = list(finding.evidence)
        if survived and ctx.execution is not None:
            english[0] = clip(english[0], 400)
        yield finding.with_(title=clip(finding.title, MAX_TITLE), evidence=tuple(english))
