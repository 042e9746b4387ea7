"""A worker killed (SIGKILL) while a write of its round is on its way to GitHub (issue 15, fault matrix).

The whole App on loopback: the fake GitHub, the webhook server, workers as processes authenticating
as the App. The fake holds the write 3 s before handling it, the worker is killed meanwhile, and
the write lands after its death. A second worker recovers the job (its owner is dead), waits until a
write of the dead attempt can no longer land (the late-write window: the client's timeout plus
GitHub's limit on a request, scaled down here), and runs the round again: it
finds what landed and publishes the rest. Exactly one summary comment, one review and one check run
for the head; the job `done` at attempt 2.

Also here: a round whose check run GitHub refuses for want of `checks: write` records that on its job.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from reviewbot.settings import Settings
from tests.service.e2e import PR, REPO, app_stack
from tests.service.helpers import wait_for

# The workers' late-write window, scaled down: a 3 s client timeout plus a 1 s request limit for GitHub.
TIMEOUT, LIMIT = 3.0, 1.0
# The fake holds the write this long before handling it: longer than a new worker takes to start and
# recover the job (about 2 s here), so that a round that does not wait would look before it lands.
HOLD = 3.0


@pytest.mark.parametrize(
    "operation", ["issues/create-comment", "pulls/create-review", "checks/create", "issues/update-comment"]
)
def test_a_worker_killed_mid_write_leaves_one_comment_review_and_check_run(
    settings: Settings, tmp_path: Path, operation: str
) -> None:
    with app_stack(
        settings.with_(github_timeout_seconds=TIMEOUT, github_request_limit_seconds=LIMIT),
        tmp_path,
        as_app=True,
    ) as stack:
        head = stack.remote.round1
        worker = stack.start_worker()
        if operation == "issues/update-comment":  # round 2 edits the summary comment of round 1
            assert stack.push(head, action="opened") == "queued"
            stack.wait_settled(timeout=60)
            head = stack.remote.round2
        hold = stack.fake.inject(kind="delay", operation=operation, delay=HOLD, when="before")
        assert stack.push(head, action="opened" if head == stack.remote.round1 else "synchronize") == "queued"
        wait_for(lambda: hold.total_fired == 1, timeout=60, what=f"the round to send {operation}")
        os.kill(worker.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        worker.wait()
        stack.start_worker()
        jobs = stack.wait_settled(timeout=90)
        recovered = time.monotonic() - killed_at

        # The dead worker's write lands in any case; the state is read once it has.
        wait_for(lambda: any(r.fault for r in stack.fake.calls(operation)), timeout=10, what="the late write")
        assert all(j.state == "done" for j in jobs), [(j.state, j.reason) for j in jobs]
        last = max(jobs, key=lambda j: j.id)
        assert last.attempts == 2 and last.result_head == head, last
        landed = [r for r in stack.fake.calls(operation) if 200 <= r.status < 300]
        assert len(stack.bot_comments()) == 1 and len(stack.fake.comments(REPO, PR)) == 1
        assert len(stack.fake.reviews(REPO, PR)) == 1
        assert len(stack.fake.check_runs(REPO, head)) == 1
        assert landed[0].fault == "delay"  # the dead worker's write landed, and was the one kept
        if operation != "issues/update-comment":  # a PATCH of the same body may be sent again
            assert len(landed) == 1
        print(f"\nSIGKILL during {operation}: done {recovered:.1f}s after the kill, {len(landed)} landed")


def test_a_round_without_checks_write_says_so_on_its_job(settings: Settings, tmp_path: Path) -> None:
    with app_stack(settings, tmp_path, as_app=True) as stack:
        (inst,) = stack.fake.world.installations
        stack.fake.set_installation_permission(inst, "checks", "read")
        stack.start_worker()
        assert stack.push(stack.remote.round1, action="opened") == "queued"
        (job,) = stack.wait_settled(timeout=60)
        assert job.state == "done" and job.reason is not None
        assert "NO CHECK RUN" in job.reason and "`checks: write`" in job.reason
        assert stack.fake.check_runs(REPO) == []
        (comment,) = stack.bot_comments()
        assert comment.body.startswith("> reviewbot could not create the check run")
        assert "check run `reviewbot` not created: GitHub refused it" in stack.worker_log(0)
