"""untested-branch (P2): the project's tests still pass with a new or changed derivation branch reverted.

## What it does
Runs the repository's own tests (the `[tests]` command of `.reviewbot.toml`, read from the base revision)
on the pull request's head, then once more per new or changed derivation branch on a copy of the head
where that branch is reverted: the guarded write dropped, or the base condition or value restored. When
every test passes on such a mutant as well, the branch is reported: nothing in the test suite depends on
it. The evidence names the mutant, the command and the sandbox it ran in.

## Why is this bad?
A derivation branch that the tests do not notice being removed is not tested, whatever the tests mention.
The next edit of its condition — a typo, a wrong default, a swapped atom — goes through green CI and only
shows as wrong behaviour downstream (a skipped kernel, a skipped cache write).

## Example
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;   // deleting this line leaves every test green
}
```

## Use instead
A focused test that pins the row where the branch changes the outcome, so deleting the branch fails it:
```cpp
expect(derive(RopeStyle::No, /*use_kvcache=*/false, /*need_rope_kv_cache=*/true).need_rope_kv_cache == false);
expect(derive(RopeStyle::No, /*use_kvcache=*/true, /*need_rope_kv_cache=*/true).need_rope_kv_cache == true);
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reviewbot.checks import missing_tests
from reviewbot.checks.base import CheckContext
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.tests import MutantResult, TestRun

__all__ = ["id", "severity", "summary", "run", "findings"]

id = "untested-branch"
severity = Severity.P2
summary = "The tests still pass with a new or changed derivation branch reverted."


def run(ctx: CheckContext) -> Iterable[Finding]:
    """Surviving mutants of branches that some test mentions; where none does, missing-tests already
    says so (with the surviving mutant as its proof), so the branch is one finding, not two."""
    ex = ctx.execution
    if ex is None or not ex.ran or ex.head is None:
        return []
    # missing-tests reports one finding per branch: `assignments` lists every write of it.
    untested = {w for f in missing_tests.run(ctx) for w in dict(f.extra).get("assignments", "").split(", ")}
    judged = [
        r
        for r in ex.mutants
        if not all(f"{p}:{n}" in untested for p, n in r.mutant.covers) or not r.mutant.covers
    ]
    return findings(judged, ex.head, ex.command, ex.sandbox)


def findings(results: Sequence[MutantResult], head: TestRun, command: str, sandbox: str) -> list[Finding]:
    """One finding per surviving mutant (pure: execution records in, findings out)."""
    out: list[Finding] = []
    for r in results:
        if r.status != "survived":
            continue
        m = r.mutant
        run = r.run
        what = m.reverted or "this branch reverted"
        passed = len(run.passed) if run is not None and run.cases else None
        ran = (
            f"{passed} test(s) passed, none of those passing on the head failed"
            if passed is not None
            else f"the command exited with status {run.exit_code if run else '?'}"
        )
        out.append(
            Finding(
                rule=id,
                severity=severity,
                path=m.path,
                line=m.line,
                title=f"The tests still pass with {what}: no test exercises this branch.",
                anchor=m.anchor or m.description,
                evidence=(
                    f"mutant {m.id}: {m.description}",
                    f"ran `{command}` on the head with the mutant applied ({sandbox} sandbox, "
                    f"{r.seconds:.1f} s): {ran}.",
                    f"on the unmodified head: {len(head.passed)} passed, {len(head.failed)} failed.",
                ),
                suggestion=(
                    "Add a focused test that fails when this branch is removed: pin a row of the truth table "
                    "where the outcome changes, and a neighbouring row where it does not."
                ),
                extra=(("mutant", m.id), ("covers", ", ".join(f"{p}:{n}" for p, n in m.covers))),
            )
        )
    return out
