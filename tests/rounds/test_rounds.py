"""review.rounds on real git changes with hand-built findings: states, recheck, KPI, history."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.change.diff import load_change
from reviewbot.model.change import ChangeSet, Note, SkipReason
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import Review, Status
from reviewbot.review.rounds import PreviousRound, apply_round, delta_of
from tests.gitrepo import Repo
from tests.rounds.records import CONFIG, finding, review_of

BASE_CONFIG = """\
void derive(Config& c) {
    c.fuse = !(c.style == No && !c.kv);
}
"""
ROUND1_CONFIG = """\
void derive(Config& c) {
    c.fuse = !(c.style == No && !c.kv);
    if (c.style == No && !c.kv) {
        c.need_rope = false;
    }
}
"""
OTHER = "src/other.cc"

MISSING = finding("missing-tests", "if (c.style == No && !c.kv) {", 3, Severity.P1)
DUPLICATE = finding("duplicated-predicate", "c.style == No && !c.kv", 3, Severity.P3)
OVERRIDE = finding("unconditional-override", "c.need_rope = false;", 4, Severity.P2)
HELPER = finding("duplicated-predicate", "return flag_a && flag_b;", 1, Severity.P3, path=OTHER)
NOISE = finding("formatting-noise", "", 1, Severity.P3, path="tests/config_test.cc")


class PR:
    """A repository with a base commit and a PR branch; `push` adds a head and returns its sha."""

    def __init__(self, path: Path) -> None:
        self.repo = Repo(path)
        self.base = self.repo.commit({CONFIG: BASE_CONFIG, "README": "x\n"}, "base")
        self.repo.checkout("pr", create=True)
        self._open: list[ChangeSet] = []

    def push(self, files: dict[str, str | bytes | None]) -> str:
        return self.repo.commit(files, "push")

    def change(self, head: str, base: str | None = None) -> ChangeSet:
        change = load_change(self.repo.path, base or self.base, head)
        self._open.append(change)
        return change

    def close(self) -> None:
        for c in self._open:
            c.close()


@pytest.fixture
def pr(tmp_path: Path) -> Iterator[PR]:
    p = PR(tmp_path / "repo")
    yield p
    p.close()


def first_round(pr: PR, findings: list[Finding]) -> tuple[str, Review]:
    head = pr.push({CONFIG: ROUND1_CONFIG, OTHER: "int helper() { return flag_a && flag_b; }\n"})
    change = pr.change(head)
    return head, apply_round(review_of(change, findings), change, None, repository="acme/x", pr=7)


def next_round(
    pr: PR,
    previous: Review,
    head: str,
    findings: list[Finding],
    notes: list[Note] | None = None,
    status: Status | None = None,
) -> Review:
    change = pr.change(head)
    since = delta_of(pr.change(head, base=previous.head_sha))
    return apply_round(
        review_of(change, findings, notes, status),
        change,
        PreviousRound.of(previous),
        previous_is_ancestor=True,
        since_previous=since,
        repository="acme/x",
        pr=7,
    )


def by_rule_path(findings: list[Finding]) -> dict[tuple[str, str], str]:
    return {(f.rule, f.path): f.state for f in findings}


def test_first_round_is_a_full_review_with_every_finding_new(pr: PR) -> None:
    head, r1 = first_round(pr, [MISSING, DUPLICATE, OVERRIDE, HELPER])
    assert [f.state for f in r1.findings] == ["new"] * 4
    assert r1.status is Status.BLOCKING
    assert (r1.round.round_index, r1.round.full_review, r1.round.force_pushed) == (1, True, False)
    assert r1.round.previous_head is None
    k = r1.kpi
    assert (k["round_index"], k["new_findings"], k["full_files"], k["delta_files"]) == (1, 4, 2, 2)
    assert k["recheck"] == {"fixed": 0, "still_open": 0, "cannot_substantiate": 0, "fail": 0}
    assert k["blocking"] == 1 and k["blocking_on_unchanged"] == 0  # line 3 is added by the PR
    assert [h.round for h in r1.round.history] == [1]
    assert r1.round.history[0].head_sha == head and r1.round.history[0].status == "BLOCKING"


def test_second_round_fixes_by_anchor_gone_and_by_rule_silent(pr: PR) -> None:
    _, r1 = first_round(pr, [MISSING, DUPLICATE, OVERRIDE, HELPER])
    head2 = pr.push(
        {OTHER: "int helper() { return flag_a; }\n", "tests/config_test.cc": "// pins derive()\n"}
    )
    r2 = next_round(pr, r1, head2, [DUPLICATE, OVERRIDE, NOISE])

    assert by_rule_path(r2.findings) == {
        ("duplicated-predicate", CONFIG): "still_open",
        ("unconditional-override", CONFIG): "still_open",
        ("formatting-noise", "tests/config_test.cc"): "new",
    }
    fixed = {f.rule + "@" + f.path: f for f in r2.round.fixed}
    # missing-tests: its anchor is still in the file but the rule no longer fires on it;
    # the helper's predicate: its anchor is gone from other.cc.
    assert set(fixed) == {"missing-tests@" + CONFIG, "duplicated-predicate@" + OTHER}
    assert all(f.state == "fixed" and f.fixed_in == head2 for f in fixed.values())
    assert r2.status is Status.LGTM
    assert (
        r2.round.round_index == 2 and r2.round.full_review is False and r2.round.previous_head == r1.head_sha
    )
    k = r2.kpi
    assert k["recheck"] == {"fixed": 2, "still_open": 2, "cannot_substantiate": 0, "fail": 0}
    assert (k["new_findings"], k["round_index"], k["blocking"]) == (1, 2, 0)
    assert (k["delta_files"], k["full_files"]) == (2, 3)  # other.cc and the test, of config/other/test
    rows = r2.round.history
    assert [(h.round, h.status, h.fixed, h.still_open) for h in rows] == [
        (1, "BLOCKING", 0, 0),
        (2, "LGTM", 2, 2),
    ]


def test_blocking_finding_on_a_line_the_round_did_not_touch(pr: PR) -> None:
    _, r1 = first_round(pr, [MISSING, OVERRIDE])
    head2 = pr.push({"notes.txt": "unrelated\n"})
    r2 = next_round(pr, r1, head2, [MISSING, OVERRIDE])
    assert r2.status is Status.BLOCKING
    assert r2.kpi["blocking"] == 1 and r2.kpi["blocking_on_unchanged"] == 1
    assert r2.kpi["delta_files"] == 1 and r2.kpi["new_findings"] == 0

    # Touching the blocking line makes it "changed this round".
    head3 = pr.push(
        {CONFIG: ROUND1_CONFIG.replace("if (c.style == No && !c.kv) {", "if (c.style == No &&  !c.kv) {")}
    )
    r3 = next_round(pr, r2, head3, [MISSING, OVERRIDE])
    assert r3.kpi["blocking_on_unchanged"] == 0
    assert [f.state for f in r3.findings] == ["still_open", "still_open"]  # whitespace keeps the fingerprint
    assert [h.round for h in r3.round.history] == [1, 2, 3]


def test_force_push_is_a_full_review_and_still_matches_by_fingerprint(pr: PR) -> None:
    _, r1 = first_round(pr, [MISSING, OVERRIDE])
    pr.repo.checkout(pr.base)
    pr.repo.checkout("rewritten", create=True)
    head2 = pr.push({CONFIG: ROUND1_CONFIG})  # same code, different history: round 1's head is gone
    change = pr.change(head2)
    r2 = apply_round(
        review_of(change, [OVERRIDE]),
        change,
        PreviousRound.of(r1),
        previous_is_ancestor=False,
        since_previous=None,
        repository="acme/x",
        pr=7,
    )
    assert r2.round.full_review is True and r2.round.force_pushed is True
    assert r2.kpi["delta_files"] == r2.kpi["full_files"] == 1
    assert [f.state for f in r2.findings] == ["still_open"]
    assert [f.rule for f in r2.round.fixed] == ["missing-tests"]
    assert [h.force_pushed for h in r2.round.history] == [False, True]


def test_deleted_file_cannot_be_substantiated_and_a_renamed_one_carries_over(pr: PR) -> None:
    a = finding("duplicated-predicate", "x = compute(a && b);", 1, path="src/a.cc")
    b = finding("duplicated-predicate", "y = a && b;", 1, path="src/b.cc")
    head1 = pr.push({"src/a.cc": "x = compute(a && b);\n", "src/b.cc": "y = a && b;\n"})
    change1 = pr.change(head1)
    r1 = apply_round(review_of(change1, [a, b]), change1, None)
    head2 = pr.push({"src/a.cc": None, "lib/a2.cc": "x = compute(a && b);\n", "src/b.cc": None})
    moved = a.with_(path="lib/a2.cc")
    r2 = next_round(pr, r1, head2, [moved])
    assert [(f.path, f.state) for f in r2.findings] == [("lib/a2.cc", "still_open")]
    assert [(f.path, f.state) for f in r2.round.cannot_substantiate] == [("src/b.cc", "cannot_substantiate")]
    assert r2.kpi["recheck"] == {"fixed": 0, "still_open": 1, "cannot_substantiate": 1, "fail": 0}
    assert r2.kpi["new_findings"] == 0 and r2.kpi["moved"] == 1


def test_unreadable_file_is_a_recheck_failure_that_stays_open(pr: PR) -> None:
    data = finding("unconditional-override", "flag = true;", 1, path="src/data.cc")
    head1 = pr.push({"src/data.cc": "flag = true;\n"})
    change1 = pr.change(head1)
    r1 = apply_round(review_of(change1, [data]), change1, None)
    head2 = pr.push({"src/data.cc": b"flag = true;\0binary now\n"})
    r2 = next_round(pr, r1, head2, [])
    assert r2.kpi["recheck"] == {"fixed": 0, "still_open": 0, "cannot_substantiate": 0, "fail": 1}
    assert [(f.path, f.state, dict(f.extra).get("recheck")) for f in r2.findings] == [
        ("src/data.cc", "still_open", "failed")
    ]
    assert r2.status is Status.INCOMPLETE  # nothing blocks, but one finding could not be checked
    assert r2.round.fixed == []


def test_anchor_present_in_a_file_the_analysis_skipped_is_not_called_fixed(pr: PR) -> None:
    _, r1 = first_round(pr, [MISSING, OVERRIDE])
    head2 = pr.push({"notes.txt": "x\n"})
    skipped = Note(SkipReason.UNPARSABLE_CODE, f"{CONFIG}: 1 syntax error(s)", CONFIG)
    r2 = next_round(pr, r1, head2, [OVERRIDE], notes=[skipped], status=Status.LGTM)
    assert r2.kpi["recheck"]["fail"] == 1 and r2.round.fixed == []
    assert r2.status is Status.BLOCKING  # the unverified missing-tests still blocks
    assert {f.rule for f in r2.findings} == {"missing-tests", "unconditional-override"}


def test_a_crashed_rule_cannot_close_its_findings(pr: PR) -> None:
    _, r1 = first_round(pr, [OVERRIDE])
    head2 = pr.push({"notes.txt": "x\n"})
    crash = Note(SkipReason.CHECK_CRASHED, "check `unconditional-override` crashed: KeyError: 'x'")
    r2 = next_round(pr, r1, head2, [], notes=[crash], status=Status.INCOMPLETE)
    assert r2.kpi["recheck"]["fail"] == 1 and r2.status is Status.INCOMPLETE


def test_duplicate_fingerprints_are_merged_and_counted(pr: PR) -> None:
    twin = OVERRIDE.with_(line=5, evidence=("another place",))
    _, r1 = first_round(pr, [OVERRIDE, twin, DUPLICATE])
    assert len(r1.findings) == 2 and r1.kpi["merged"] == 1
    assert r1.findings[0].line == OVERRIDE.line


def test_a_returning_finding_after_a_fix_is_new_again(pr: PR) -> None:
    _, r1 = first_round(pr, [OVERRIDE])
    head2 = pr.push({CONFIG: BASE_CONFIG})
    r2 = next_round(pr, r1, head2, [])
    assert [f.rule for f in r2.round.fixed] == ["unconditional-override"]
    head3 = pr.push({CONFIG: ROUND1_CONFIG})
    r3 = next_round(pr, r2, head3, [OVERRIDE])
    assert [f.state for f in r3.findings] == ["new"]
    assert r3.kpi["recheck"]["fixed"] == 0 and r3.kpi["new_findings"] == 1


def test_merging_the_base_branch_in_is_not_counted_as_the_rounds_work(pr: PR) -> None:
    _, r1 = first_round(pr, [OVERRIDE])
    pr.repo.checkout("main")
    new_base = pr.repo.commit({"README": "moved on\n"}, "main moves")
    pr.repo.checkout("pr")
    pr.repo.git("merge", "-q", "--no-edit", "main")
    head2 = pr.repo.git("rev-parse", "HEAD")
    change = pr.change(head2, base=new_base)
    since = delta_of(pr.change(head2, base=r1.head_sha))
    assert since.files == {"README"}
    r2 = apply_round(review_of(change, [OVERRIDE]), change, PreviousRound.of(r1), previous_is_ancestor=True,
                     since_previous=since)  # fmt: skip
    assert r2.kpi["delta_files"] == 0 and r2.kpi["full_files"] == 2 and not r2.round.full_review


def test_a_finding_whose_rule_no_longer_runs_is_not_called_fixed(pr: PR) -> None:
    # The repository disabled the rule (or it became opt-in) between rounds: nothing re-checked the
    # finding, so it is closed as not substantiated, never reported as fixed, and blocks nothing.
    _, r1 = first_round(pr, [OVERRIDE])
    head2 = pr.push({"notes.txt": "x\n"})
    change = pr.change(head2)
    review = dataclasses.replace(review_of(change, [], None, None), rules_off=("unconditional-override",))
    r2 = apply_round(
        review, change, PreviousRound.of(r1), previous_is_ancestor=True, repository="acme/x", pr=7
    )
    assert r2.kpi["recheck"]["fixed"] == 0 and r2.kpi["recheck"]["cannot_substantiate"] == 1
    assert not r2.round.fixed and r2.status is not Status.BLOCKING
