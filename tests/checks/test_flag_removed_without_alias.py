"""flag-removed-without-alias: severities, the field a finding names, the replacement it cites, and the
spelling-fix distance (the fixture cases hold which lines fire)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.analysis.removals.flags import within_two_edits
from reviewbot.model.finding import Finding
from tests.checks.fixtures import FIXTURES, review_case

CASES = FIXTURES / "flag-removed-without-alias"


def _ours(case: str, tmp_path: Path) -> dict[str, Finding]:
    findings = review_case(CASES / case, tmp_path / "repo")
    return {f"{f.path}:{f.line}": f for f in findings if f.rule == "flag-removed-without-alias"}


@pytest.mark.parametrize(
    ("a", "b", "close"),
    [
        ("--merge-up-gate-expsrts", "--merge-up-gate-experts", True),  # one letter
        ("--ctx-sise", "--ctx-size", True),
        ("--flash-attn", "--flash-attention", False),  # a rename
        ("--tp", "--pp-size", False),
        ("--x", "--x", True),
    ],
)
def test_within_two_edits(a: str, b: str, close: bool) -> None:
    assert within_two_edits(a, b) is close
    assert within_two_edits(b, a) is close


def test_python_flags_name_the_dest_and_the_replacement(tmp_path: Path) -> None:
    found = _ours("py-removed", tmp_path)
    assert sorted(found) == ["benchmarks/throughput.py:5", "engine/cli.py:17", "engine/cli.py:9"]
    renamed = found["engine/cli.py:17"]
    assert renamed.severity.value == "P3"  # a note: on probation (see the rule's doc)
    assert dict(renamed.extra)["field"] == "cache_dtype"  # the explicit dest=, not the flag's words
    assert dict(renamed.extra)["replacement"] == "--cache-dtype"
    assert 'add_argument("--cache-dtype", "--kv-dtype", ...)' in renamed.suggestion
    assert found["benchmarks/throughput.py:5"].severity.value == "P3"


def test_cpp_flags_name_the_member_the_handler_sets(tmp_path: Path) -> None:
    found = _ours("cpp-removed", tmp_path)
    numa = found["common/arg.cpp:32"]
    assert dict(numa.extra)["field"] == "numa"
    assert dict(numa.extra)["flag"] == "--numa-interleave"
    assert 'arg == "--numa" || arg == "--numa-interleave"' in numa.suggestion
    assert numa.evidence[0] == 'Base definition common/arg.cpp:27: `if (arg == "--numa-interleave") {`.'


def test_flags_one_removed_block_registered_are_one_finding(tmp_path: Path) -> None:
    found = _ours("py-block-removed", tmp_path)
    assert list(found) == ["engine/args.py:8"]  # one decision of the change, read once
    block = found["engine/args.py:8"]
    assert block.severity.value == "P3"  # a note: on probation (see the rule's doc)
    assert dict(block.extra)["flag"] == "--draft-max-len, --draft-model, --num-draft-tokens"  # by name
    assert dict(block.extra)["field"] == "draft_max_len, draft_model, num_draft_tokens"
    assert block.title.startswith(
        "`--draft-max-len`, `--draft-model`, `--num-draft-tokens` are no longer accepted"
    )
    assert block.evidence[1] == "Removed at the same place: `--draft-model`, `--num-draft-tokens`."
    assert "个" in block.localized("zh").title


def test_opt_in_off_unless_the_repository_enables_it(tmp_path: Path) -> None:
    # Off by default (checks.registry.OPT_IN): the same change reviewed as a repository without
    # `[review] enabled` reports nothing of it, and its checklist items are not evaluated rather than passed.
    from reviewbot.change.diff import load_change
    from reviewbot.checks.registry import OPT_IN
    from reviewbot.review.pipeline import ReviewSettings, review_change
    from tests.checks.fixtures import build_case

    assert "flag-removed-without-alias" in OPT_IN
    repo, base, head = build_case(CASES / "py-removed", tmp_path / "repo")
    change = load_change(repo.path, base, head)
    default = review_change(change, ReviewSettings(checklists=("general",)))
    enabled = review_change(
        change,
        ReviewSettings(checklists=("general",), enabled_rules=frozenset({"flag-removed-without-alias"})),
    )
    assert not [f for f in default.findings if f.rule == "flag-removed-without-alias"]
    assert sorted(
        f"{f.path}:{f.line}" for f in enabled.findings if f.rule == "flag-removed-without-alias"
    ) == [
        "benchmarks/throughput.py:5",
        "engine/cli.py:17",
        "engine/cli.py:9",
    ]
