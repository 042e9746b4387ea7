"""missing-tests sizes its severity by who reaches a changed row (issue 23 item 4): the fixtures' lines are
checked by test_fixtures; here, the severity and the population the evidence names."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.analysis.reach.untested import is_formula
from reviewbot.change.diff import load_change
from reviewbot.lang.facts import Assignment, Lang
from reviewbot.model.finding import Severity
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.checks.fixtures import FIXTURES, build_case, review_case

CASES = FIXTURES / "missing-tests"


def _missing(case: str, tmp_path: Path) -> list[tuple[Severity, str, int, str]]:
    found = review_case(CASES / case, tmp_path / "repo")
    return [
        (f.severity, f.path, f.line, " ".join(str(e) for e in f.evidence))
        for f in found
        if f.rule == "missing-tests"
    ]


@pytest.mark.parametrize(
    ("case", "path", "line", "says"),
    [
        ("cpp-default-row", "cpp/Cache.cc", 5, "`reuse_cache` = `True` (cpp/Cache.h:2)"),
        ("py-default-row", "pkg/cache.py", 13, "`reuse_cache` = `True` (pkg/cache.py:6)"),
    ],
)
def test_default_row_is_p1_and_names_the_default(
    case: str, path: str, line: int, says: str, tmp_path: Path
) -> None:
    [(severity, at, n, evidence)] = _missing(case, tmp_path)
    assert (severity, at, n) == (Severity.P1, path, line)
    assert says in evidence and "the changed row is the default one" in evidence


@pytest.mark.parametrize(
    ("case", "function"),
    [
        # The same default row as py-default-row, in a file the change adds: no deployment ran it before.
        ("py-new-module", "update"),
        # Rows only an opt-in reaches: an existing switch off by default, an environment switch.
        ("cpp-opt-in", "update"),
        ("py-opt-in", "__post_init__"),
    ],
)
def test_rows_only_an_opt_in_reaches_are_not_asked_for(case: str, function: str, tmp_path: Path) -> None:
    # As P3 notes, blind labellers counted none of these a problem (0 of 24 train, 0 of 12 test
    # findings): with no test run showing the branch unpinned, the rule asks nothing, and the
    # checklist says why it did not evaluate instead of ticking the item.
    assert _missing(case, tmp_path / "found") == []
    repo, base, head = build_case(CASES / case, tmp_path / "repo")
    review = review_change(load_change(repo.path, base, head), ReviewSettings())
    item = next(i for i in review.checklist.items if i.id.endswith("tests-focused"))
    assert (item.failed, item.evaluated) == (False, False)
    assert item.reason.startswith(f"not evaluated: only an opt-in reaches the changed rows in `{function}`")


@pytest.mark.parametrize("case", ["cpp-task-population", "py-task-population"])
def test_seed_like_population_is_p1(case: str, tmp_path: Path) -> None:
    # A guard derived from a population (`use_kvcache` is `task_type == TaskType::LANGUAGE_MODEL`) is
    # reached by every non-LM task model: production, and the evidence says which.
    [(severity, _, _, evidence)] = _missing(case, tmp_path)
    assert severity is Severity.P1
    assert "every task_type other than LANGUAGE_MODEL" in evidence


@pytest.mark.parametrize("case", ["py-outside-config", "cpp-outside-config"])
def test_outside_config_code_is_not_reported(case: str, tmp_path: Path) -> None:
    # A loader's own state in loader code: nothing there says configuration, nothing is read from
    # configuration or the environment, and no test run proved the branch untested. An older test
    # mentions the field, so it is the scope, not the missing practice, that keeps it silent.
    assert _missing(case, tmp_path) == []


@pytest.mark.parametrize(
    ("value", "formula"),
    [
        ("ratio*blocks()/100", True),
        ("a and not b", True),
        ("x if c else y", True),
        ("get_communication_data_type(param_dict)", False),
        ("std.min(a-4,b)", False),
        ("static_cast<int>(x)", False),
        ('f"{a}-{b}"', False),
        ("args.x", False),
    ],
)
def test_is_formula(value: str, formula: bool) -> None:
    a = Assignment(
        target="cfg.x",
        field="x",
        value=value,
        guard=None,
        path="p.py",
        line=1,
        function="f",
        lang=Lang.PYTHON,
    )
    assert is_formula(a) is formula


@pytest.mark.parametrize("case", ["py-no-tests", "cpp-no-tests"])
def test_code_the_repository_does_not_test_is_not_reported(case: str, tmp_path: Path) -> None:
    # The same default row as *-default-row (reported P1 there), in a repository whose tests mention
    # neither the field nor the function: no practice to follow and no test run proving it untested.
    assert _missing(case, tmp_path) == []


def test_where_nothing_tests_the_changed_logic_the_checklist_says_so(tmp_path: Path) -> None:
    # Silence is not a pass: the test items of the checklist read "not evaluated" with the reason,
    # not ticked, when missing-tests judged the code unpracticed; with a test of the code they pass.
    def items(case: str, dest: Path) -> dict[str, tuple[bool, bool, str]]:
        repo, base, head = build_case(CASES / case, dest)
        review = review_change(load_change(repo.path, base, head), ReviewSettings())
        return {i.id.split("/")[-1]: (i.failed, i.evaluated, i.reason) for i in review.checklist.items}

    silent = items("py-no-tests", tmp_path / "none")
    failed, evaluated, reason = silent["tests-focused"]
    assert (failed, evaluated) == (False, False)
    assert reason == (
        "not evaluated: no test of the repository covers the changed logic in `update`,"
        " so reviewbot does not ask for one"
    )
    assert silent["tests-edges"][1] is False
    tested = items("py-default-row", tmp_path / "tested")
    assert tested["tests-focused"][:2] == (True, True)  # reported there: the item fails


def test_a_named_model_family_is_p2_and_named(tmp_path: Path) -> None:
    # `model_arch == "DeepseekV3ForCausalLM"`: every deployment of that model family takes the row. One
    # model's rows are worth a test but do not block a merge (P2, not P1: the population is one model).
    [(severity, at, n, evidence)] = _missing("py-model-family", tmp_path)
    assert (severity, at, n) == (Severity.P2, "pkg/server_args.py", 19)
    assert "`DeepseekV3ForCausalLM`" in evidence and "a model family that ships" in evidence


@pytest.mark.parametrize("case", ["py-model-family-env", "py-model-family-switch"])
def test_a_model_family_behind_an_opt_in_is_not_asked_for(case: str, tmp_path: Path) -> None:
    # The family's deployments reach the row only after opting in (an env, a new switch off by
    # default): not the P2 of a family that ships, and with no test run, nothing asked.
    assert _missing(case, tmp_path) == []
