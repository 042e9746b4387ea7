"""The bundled example end to end: real git, real front ends, the real pipeline, tests really run.

Round 1 adds the branch without a test: its mutant survives (untested-branch). Round 2 adds a C++
truth-table test that kills the mutant and a Python smoke test that does not (ineffective-test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reviewbot.change.diff import load_change
from reviewbot.example import ExampleRepo, build_example
from reviewbot.execution.execute import ExecSettings, Execution, execute
from reviewbot.model.review import Review
from reviewbot.review.pipeline import ReviewSettings, review_change, tables_for_context
from tests.execution.probe import stage_findings

CC = "rtp_llm/cpp/config/ModelConfig.cc"
SMOKE = "rtp_llm/test/test_bert_smoke.py"
STYLE, KV, INPUT = "config.rope_config.style", "use_kvcache", "attn_config.need_rope_kv_cache"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def _review(example: ExampleRepo, head: str) -> tuple[Review, Execution]:
    runs: list[Execution] = []

    def run(change: Any, derivations: Any) -> Execution:
        runs.append(execute(change, example.path, derivations, ExecSettings(time_budget_s=120)))
        return runs[-1]

    change = load_change(example.path, example.base, head)
    settings = ReviewSettings(execute=run, truth_tables=tables_for_context)
    review = review_change(change, settings)
    assert len(runs) == 1
    return review, runs[0]


@pytest.fixture(scope="module")
def round1(example: ExampleRepo) -> tuple[Review, Execution]:
    return _review(example, example.round1)


@pytest.fixture(scope="module")
def round2(example: ExampleRepo) -> tuple[Review, Execution]:
    return _review(example, example.round2)


def _rules(review: Review) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for f in review.findings:
        out.setdefault(f.rule, []).append((f.path, f.line))
    return out


def test_round1_branch_survives_its_mutant(round1: tuple[Review, Execution]) -> None:
    review, ex = round1
    assert review.tests is not None and review.tests["sandbox"] == ex.summary["sandbox"]
    assert (review.tests["mutants"], review.tests["survived"], review.tests["killed"]) == (1, 1, 0)
    assert review.tests["ran"] == 2 and review.tests["failed"] == 0
    # With no test mentioning the branch, the surviving mutant is folded into missing-tests as its proof.
    assert "untested-branch" not in _rules(review)
    assert stage_findings(ex)[0].rule == "untested-branch" and (
        stage_findings(ex)[0].path,
        stage_findings(ex)[0].line,
    ) == (CC, 20)
    (missing,) = [f for f in review.findings if f.rule == "missing-tests"]
    assert any("mutant m1" in e and "the mutant survives" in e for e in missing.evidence)
    (mutant,) = ex.mutants
    assert mutant.mutant.covers == ((CC, 21),) and mutant.killed_by == ()


def test_round2_truth_table_test_kills_the_mutant_and_smoke_test_is_flagged(
    round2: tuple[Review, Execution],
) -> None:
    review, ex = round2
    rules = _rules(review)
    assert "untested-branch" not in rules
    assert "missing-tests" not in rules  # some test kills the branch's mutant
    assert rules["ineffective-test"] == [(SMOKE, 7)]
    (mutant,) = ex.mutants
    assert mutant.status == "killed"
    assert mutant.killed_by == ("cpp::attention_configs_test",)
    assert (review.tests or {})["killed"] == 1 and (review.tests or {})["ran"] == 4
    smoke = next(f for f in review.findings if f.rule == "ineffective-test")
    assert "`test_bert_embedding_forward`" in smoke.title
    assert any("m1" in e and "need_rope_kv_cache = false" in e for e in smoke.evidence)


def test_seed_truth_table_changes_exactly_in_the_embedding_row(round1: tuple[Review, Execution]) -> None:
    review, _ = round1
    (table,) = [t for t in review.truth_tables if t.target == "config.need_rope_kv_cache"]
    assert (table.path, table.line, table.truncated) == (CC, 20, False)
    assert [r.inputs for r in table.rows if r.changed] == [{STYLE: "No", KV: False, INPUT: True}]
    (default,) = [r for r in table.rows if r.default]
    assert default.inputs == {STYLE: "No", KV: True, INPUT: True} and not default.changed
    assert len(table.rows) == 8


def test_tests_not_run_for_an_untrusted_author_are_said_so(example: ExampleRepo, tmp_path: Path) -> None:
    change = load_change(example.path, example.base, example.round2)

    def run(change: Any, derivations: Any) -> Execution:
        return execute(change, example.path, derivations, ExecSettings(trusted=False))

    review = review_change(change, ReviewSettings(execute=run))
    assert review.tests is not None and review.tests["ran"] == 0
    assert "not trusted" in review.tests["reason_if_not_run"]
    assert any(n.message.startswith("Tests were not run") for n in review.notes)
    assert "untested-branch" not in _rules(review) and "ineffective-test" not in _rules(review)
