"""The fault matrix of issue 15 against the fake GitHub: each fault on every write endpoint of a round.

Every case runs a real round (`run_pr_round`, App credentials) over HTTP on loopback with one fault
injected on one write endpoint, then reads the fake's state: exactly one summary comment, one review
and one check run for the head, and no annotation twice. The client's timeout is 1 s and GitHub's
limit on a request 1.5 s (scaled down from 30 s and 10 s), so a write that was not answered is looked
for until 2.5 s after it was sent (`late_write_window`, their sum), and a write that lands 1.5 s late
(the `late` fault: the fake sleeps before handling it) is found, not sent again.

Endpoints: the summary comment (POST in round 1, PATCH in round 2), the review, the check run (POST),
its annotation batches (PATCH; one annotation per batch here, so that a round has several), and the
resolution of a fixed finding's review thread (GraphQL, round 2). `docs/reliability.md` holds the
table these cases fill.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from reviewbot.github import checkrun as checkrun_module
from reviewbot.github import publish as publish_module
from reviewbot.github import run_pr_round
from reviewbot.github.round import PrRoundOutcome
from tests.github.conftest import APP_SLUG, PR, REPO, Seeded, bot_comments, settings

BOT = f"{APP_SLUG}[bot]"
EXCHANGE = "apps/create-installation-access-token"
LOOKUP = "apps/get-repo-installation"

# (operation, the round the fault is injected in)
ENDPOINTS = {
    "create-comment": ("issues/create-comment", 1),
    "create-review": ("pulls/create-review", 1),
    "create-check-run": ("checks/create", 1),
    "annotation-batch": ("checks/update", 1),
    "update-comment": ("issues/update-comment", 2),
    "resolve-thread": ("graphql/mutation", 2),
}
FAULTS: dict[str, dict[str, Any]] = {
    "5xx": {"kind": "status", "status": 502},
    "dropped": {"kind": "disconnect"},
    "late": {"kind": "delay", "delay": 1.5, "when": "before"},  # lands 0.5 s after the client gave up
    "primary-rate-limit": {"kind": "primary_rate_limit", "reset_in": 1},
    "secondary-rate-limit": {"kind": "secondary_rate_limit", "retry_after": 1},
    "token-expiry": {"kind": "token_expiry"},
    "reinstall": {"kind": "reinstall"},
}


def _settings(seeded: Seeded, tmp_path: Path) -> Any:
    return settings(
        seeded,
        tmp_path,
        app=True,
        timeout=1.0,
        github_request_limit=1.5,  # with the 1 s timeout: a late-write window of 2.5 s
        reconcile_interval=0.25,
        rate_limit_wait=5.0,
    )


def _one_of_each(seeded: Seeded, head: str) -> None:
    assert len(bot_comments(seeded, BOT)) == 1 and len(seeded.fake.comments(REPO, PR)) == 1
    assert len(seeded.fake.reviews(REPO, PR)) == 1
    assert len(seeded.fake.check_runs(REPO, head)) == 1


def _annotations_once(seeded: Seeded, outcome: PrRoundOutcome, head: str) -> None:
    assert outcome.plan is not None
    (run,) = seeded.fake.check_runs(REPO, head)
    planned = [(a["path"], a["start_line"], a["title"]) for a in outcome.plan.check_run.annotations]
    assert [(a["path"], a["start_line"], a["title"]) for a in run.annotations] == planned


def _round(
    seeded: Seeded, tmp_path: Path, operation: str, index: int, fault: dict[str, Any]
) -> PrRoundOutcome:
    s = _settings(seeded, tmp_path)
    if index == 2:
        first = run_pr_round(s, REPO, PR, post=True)
        assert first.status == "published"
        seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.clear_log()
    rule = seeded.fake.inject(operation=operation, **fault)
    outcome = run_pr_round(s, REPO, PR, post=True)
    # A late write that was not waited for (an idempotent one sent again) lands after the round:
    # the state is read once it has, so that it counts too.
    deadline = time.monotonic() + 5
    while rule.total_fired and not any(r.fault for r in seeded.fake.calls(operation)):
        assert time.monotonic() < deadline, "the faulted request never reached the fake"
        time.sleep(0.1)
    return outcome


@pytest.fixture
def one_annotation_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub takes 50 annotations per request; one here, so that a round sends several batches."""
    monkeypatch.setattr(checkrun_module, "ANNOTATION_BATCH", 1)
    monkeypatch.setattr(publish_module, "ANNOTATION_BATCH", 1)


@pytest.mark.usefixtures("one_annotation_per_batch")
@pytest.mark.parametrize("fault", list(FAULTS), ids=str)
@pytest.mark.parametrize("endpoint", list(ENDPOINTS), ids=str)
def test_a_fault_on_a_write_still_publishes_exactly_once(
    seeded: Seeded, tmp_path: Path, endpoint: str, fault: str
) -> None:
    operation, index = ENDPOINTS[endpoint]
    started = time.monotonic()
    outcome = _round(seeded, tmp_path, operation, index, FAULTS[fault])
    took = time.monotonic() - started
    head = seeded.remote.round1 if index == 1 else seeded.remote.round2

    assert outcome.status == "published", outcome.reason
    sent = seeded.fake.calls(operation)
    faulted = [r for r in sent if r.fault]  # logged when handled: a late one after its resend
    assert faulted and faulted[0].fault == FAULTS[fault]["kind"], [(r.status, r.fault) for r in sent]
    _one_of_each(seeded, head)
    _annotations_once(seeded, outcome, head)
    landed = [r for r in sent if 200 <= r.status < 300]
    assert outcome.plan is not None
    if operation == "checks/update":  # one PATCH per annotation after the first, each landed once
        assert len(landed) == len(outcome.plan.check_run.annotations) - 1 >= 2
    elif operation != "graphql/mutation":  # resolving is idempotent: a second mutation is harmless
        assert len(landed) == 1
    if fault == "late":
        assert 200 <= faulted[0].status < 300  # it landed, late
        if operation not in ("checks/update", "graphql/mutation"):
            assert len(sent) == 1  # and was found, not sent again
    if fault == "reinstall":
        # The token's installation is gone: its exchange answers 404, the repository's installation
        # is looked up again (a new id) and the write sent once more with the new token.
        assert [r.status for r in seeded.fake.calls(EXCHANGE)][-2:] == [404, 201]
        assert [r.status for r in seeded.fake.calls(LOOKUP)] == [200] * (2 if index == 1 else 1)
    if fault in ("5xx", "dropped") and operation != "checks/update":
        assert (
            200 <= sent[1].status < 300 and len(sent) == 2
        )  # looked for until it could not land, then re-sent
    print(
        f"\n{endpoint} x {fault}: {len(sent)} sent, {took:.1f}s wall, notes {outcome.published and outcome.published.notes}"
    )


def test_a_check_run_github_refuses_for_want_of_checks_write_is_said_on_the_pr(
    seeded: Seeded, tmp_path: Path
) -> None:
    seeded.fake.set_installation_permission(seeded.installation_id, "checks", "read")
    outcome = run_pr_round(_settings(seeded, tmp_path), REPO, PR, post=True)
    assert outcome.status == "published" and seeded.fake.check_runs(REPO) == []
    assert [r.status for r in seeded.fake.calls("checks/create")] == [403]  # not retried
    assert "`checks: write`" in outcome.gate_refused and "Resource not accessible" in outcome.gate_refused
    (comment,) = seeded.fake.comments(REPO, PR)
    first = comment.body.splitlines()[0]
    assert (
        first.startswith("> reviewbot could not create the check run `reviewbot`")
        and "checks: write" in first
    )
    assert len(seeded.fake.reviews(REPO, PR)) == 1
    # Granted again: the next round's check run is created and its rewrite drops the line.
    seeded.fake.set_installation_permission(seeded.installation_id, "checks", "write")
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    second = run_pr_round(_settings(seeded, tmp_path), REPO, PR, post=True)
    assert second.gate_refused == "" and len(seeded.fake.check_runs(REPO, seeded.remote.round2)) == 1
    (comment,) = seeded.fake.comments(REPO, PR)
    assert "could not create the check run" not in comment.body


def test_a_reinstall_between_rounds_uses_the_installation_the_webhook_names(
    seeded: Seeded, tmp_path: Path
) -> None:
    s = _settings(seeded, tmp_path)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    new = seeded.fake.reinstall(seeded.installation_id)
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.clear_log()
    outcome = run_pr_round(s, REPO, PR, post=True, installation_id=new)
    assert outcome.status == "published"
    assert not [r for r in seeded.fake.log if r.status in (401, 404)]  # the stale id was never used
    assert [r.path.split("/")[-2] for r in seeded.fake.calls(EXCHANGE)] == [str(new)]
    _one_of_each(seeded, seeded.remote.round2)


def test_a_reinstall_between_rounds_without_a_hint_looks_the_installation_up_again(
    seeded: Seeded, tmp_path: Path
) -> None:
    s = _settings(seeded, tmp_path)
    run_pr_round(s, REPO, PR, post=True)
    seeded.fake.reinstall(seeded.installation_id)
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    seeded.fake.clear_log()
    outcome = run_pr_round(s, REPO, PR, post=True)  # the CLI: no webhook, the cached id is stale
    assert outcome.status == "published"
    assert [r.status for r in seeded.fake.calls(EXCHANGE)] == [404, 201]
    assert [r.status for r in seeded.fake.calls(LOOKUP)] == [200]
    _one_of_each(seeded, seeded.remote.round2)


# Issue 28 item 2, scaled by 1/30 (1 s here is 30 s there): the client's timeout 30 s -> 1 s, GitHub's
# limit 10 s -> 1/3 s, a POST that a stalling proxy lets land 35 s after it was sent -> 35/30 s.
SCALE = 1 / 30


def test_a_comment_post_that_lands_35s_after_it_was_sent_gives_one_comment(
    seeded: Seeded, tmp_path: Path
) -> None:
    s = settings(
        seeded,
        tmp_path,
        app=True,
        timeout=30 * SCALE,
        github_request_limit=10 * SCALE,
        reconcile_interval=0.05,
        rate_limit_wait=5.0,
    )
    # The window covers the timeout and GitHub's limit (40 s at full scale): the late POST is found.
    # The fixed 12 s window it replaces (0.4 s here) ended before the client had even given up, so
    # the comment was sent again and the PR got two (the probe's finding).
    assert s.late_write_window == pytest.approx(40 * SCALE)
    late = seeded.fake.inject(
        operation="issues/create-comment", kind="delay", delay=35 * SCALE, when="before"
    )
    outcome = run_pr_round(s, REPO, PR, post=True)
    assert outcome.status == "published", outcome.reason
    assert late.total_fired == 1
    sent = seeded.fake.calls("issues/create-comment")
    assert len(sent) == 1 and sent[0].fault == "delay" and 200 <= sent[0].status < 300
    _one_of_each(seeded, seeded.remote.round1)


def test_the_late_write_window_is_derived_from_the_timeout_and_githubs_limit() -> None:
    from reviewbot.github.settings import GitHubSettings
    from reviewbot.settings import Settings

    assert GitHubSettings().late_write_window == 40.0  # 30 s timeout + GitHub's 10 s
    assert GitHubSettings(timeout=0.2).late_write_window == 11.0  # PyGithub waits a whole second at least
    gh = GitHubSettings.from_settings(Settings(github_timeout_seconds=60, github_request_limit_seconds=20))
    assert (gh.timeout, gh.late_write_window) == (60, 80)
    with pytest.raises(TypeError):
        GitHubSettings(late_write_window=12.0)  # type: ignore[call-arg]  # not a setting of its own
