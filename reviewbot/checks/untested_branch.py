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
from reviewbot.model.messages import Message, msg
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
    untested = missing_tests.untested_writes(ctx)
    # A rename, a pass-through or a moved decision has no new row: its mutant surviving says nothing new.
    plumbing = missing_tests.nothing_new(ctx)
    judged = [
        r
        for r in ex.mutants
        if not r.mutant.covers
        or (
            not all(f"{p}:{n}" in untested for p, n in r.mutant.covers)
            and not all(f"{p}:{n}" in plumbing for p, n in r.mutant.covers)
        )
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
        what: str | Message = f"`{m.reverted}`" if m.reverted else msg("untested-branch.this-branch")
        passed = len(run.passed) if run is not None and run.cases else None
        ran = (
            msg("untested-branch.ran.cases", passed=passed)
            if passed is not None
            else msg("untested-branch.ran.exit", code=run.exit_code if run else "?")
        )
        out.append(
            Finding.make(
                rule=id,
                severity=severity,
                path=m.path,
                line=m.line,
                title=msg("untested-branch.title", what=what),
                anchor=m.anchor or m.description,
                evidence=(
                    msg("untested-branch.mutant", id=m.id, description=m.description),
                    msg(
                        "untested-branch.ran",
                        command=command,
                        sandbox=sandbox,
                        seconds=f"{r.seconds:.1f}",
                        ran=ran,
                    ),
                    msg("untested-branch.head", passed=len(head.passed), failed=len(head.failed)),
                ),
                suggestion=msg("untested-branch.suggestion"),
                extra=(("mutant", m.id), ("covers", ", ".join(f"{p}:{n}" for p, n in m.covers))),
            )
        )
    return out
