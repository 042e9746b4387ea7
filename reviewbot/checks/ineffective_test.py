"""ineffective-test (P2): a test the pull request adds passes with every changed branch reverted.

## What it does
For each test case that comes from a test file the change adds or modifies (per-test results need JUnit
XML from the test command), checks its outcome on the head and on every mutant that reverts one of the
change's new or changed derivation branches. A new test that passes on the head and on every mutant does
not depend on anything the change did: it is reported at the test, with the mutants it survived. The
cases of one parametrized test (`test_rows[r0]`, `test_rows[r1]`) are one test: its rows pin a truth
table together (the neighbouring rows that keep the outcome on purpose), so it is reported only when no
case fails on any mutant.

## Why is this bad?
The test reads as coverage of the change — a reviewer sees "tests added" — but it would stay green if the
change were deleted. Typical causes: the inputs never reach the new branch (the smoke model's config sets
the flag itself before the derivation runs), or the assertion does not look at the derived value.

## Example
```python
def test_bert_embedding_forward() -> None:
    config = Bert._create_config({...})     # already sets need_rope_kv_cache = False
    impl = AiterPrefillImpl(config.attn_config)
    assert impl.forward([1, 2, 3], None, 3) == [1, 2, 3]
```

## Use instead
Enter the branch from the row where it changes the outcome (the incoming flag true, no RoPE, no KV cache)
and assert on the derived value itself, or keep the smoke test and add a focused truth-table test.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reviewbot.checks.base import CheckContext
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg
from reviewbot.model.tests import MutantResult, NewTest, TestRun

__all__ = ["id", "severity", "summary", "run", "findings"]

id = "ineffective-test"
severity = Severity.P2
summary = "A test added by the pull request passes with every changed derivation branch reverted."


def run(ctx: CheckContext) -> Iterable[Finding]:
    ex = ctx.execution
    if ex is None or not ex.ran or ex.head is None:
        return []
    return findings(ex.new_tests, ex.mutants, ex.head)


def _function(test_id: str) -> str:
    """The test function of a case id: `m::test_rows[r0]` -> `m::test_rows`."""
    return test_id.split("[", 1)[0]


def _fails_on_a_mutant(test_id: str, results: Sequence[MutantResult]) -> bool:
    cases = [r.run.cases.get(test_id) for r in results if r.run is not None]
    return any(c is not None and not c.passed for c in cases)


def findings(new_tests: Sequence[NewTest], results: Sequence[MutantResult], head: TestRun) -> list[Finding]:
    """Findings for new tests that no mutant makes fail (pure; needs a verdict on every mutant)."""
    if not results or any(not r.has_verdict or r.run is None for r in results):
        return []
    out: list[Finding] = []
    pinning = {_function(t.id) for t in new_tests if _fails_on_a_mutant(t.id, results)}
    for t in new_tests:
        at_head = head.cases.get(t.id)
        if at_head is None or not at_head.passed or _function(t.id) in pinning:
            continue
        on_mutants = [r.run.cases.get(t.id) for r in results if r.run is not None]
        if not all(c is not None and c.passed for c in on_mutants):
            continue
        name = t.id.rsplit("::", 1)[-1]
        out.append(
            Finding.make(
                rule=id,
                severity=severity,
                path=t.path,
                line=t.line,
                title=msg("ineffective-test.title", name=name),
                anchor=t.text or t.id,
                evidence=[
                    msg("ineffective-test.passes", id=r.mutant.id, description=r.mutant.description)
                    for r in results
                ],
                suggestion=msg("ineffective-test.suggestion"),
                extra=(("test", t.id), ("mutants", ", ".join(r.mutant.id for r in results))),
            )
        )
    return out
