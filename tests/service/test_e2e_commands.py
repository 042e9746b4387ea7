"""`/reviewbot dismiss` end to end on loopback: webhook server -> queue -> worker process -> fake GitHub,
the App authenticating with its key. A reader's dismissal changes nothing but gets a one-line reply; a
writer's lifts BLOCKING from the next round and the check run, and holds on the next push."""

from __future__ import annotations

from pathlib import Path

from reviewbot.settings import Settings
from tests.fakegithub import push
from tests.gitrepo import git
from tests.service.e2e import PR, REPO, Stack, app_stack
from tests.service.helpers import comment_event, deliver


def _comment(stack: Stack, login: str, body: str, comment_id: int) -> str:
    event = comment_event(REPO, PR, body, login=login, association="CONTRIBUTOR", comment_id=comment_id)
    r = deliver(stack.server.url, "issue_comment", event)
    assert r.status_code in (200, 202), r.text
    return str(r.json()["outcome"])


def _commit_without_test(stack: Stack) -> str:
    path = stack.remote.example.path
    git(path, "checkout", "-q", "--detach", stack.remote.round1)
    (path / "NOTES.txt").write_text("still no test\n")
    git(path, "add", "NOTES.txt")
    git(path, "commit", "-q", "-m", "notes")
    head = git(path, "rev-parse", "HEAD")
    push(path, stack.remote.bare, head, "refs/heads/feature")
    return head


def test_dismissal_by_a_writer_and_by_a_reader(settings: Settings, tmp_path: Path) -> None:
    with app_stack(settings, tmp_path, as_app=True) as stack:
        fake = stack.fake
        stack.start_worker()
        assert stack.push(stack.remote.round1, action="opened") == "queued"
        (job,) = stack.wait_settled()
        assert job.state == "done", job.reason
        assert [r.conclusion for r in fake.check_runs(REPO)] == ["failure"]
        (summary,) = stack.bot_comments()
        line = next(x for x in summary.body.splitlines() if x.startswith("**F1 · [P1]"))
        prefix = line.split("· `")[-1].split("`")[0][:8]

        fake.add_user("reader")  # GitHub: read (a public repository); the payload says CONTRIBUTOR
        assert _comment(stack, "reader", f"/reviewbot dismiss {prefix} not for us", 11) == "queued"
        jobs = stack.wait_settled()
        assert jobs[0].state == "skipped" and "needs write permission" in (jobs[0].reason or "")
        reply = stack.bot_comments()[-1]
        assert reply.body.count("\n") == 0 and reply.body.startswith("@reader")
        assert len(stack.bot_comments()) == 2 and len(fake.check_runs(REPO)) == 1
        assert len(stack.rounds()) == 1

        fake.set_permission(REPO, "maint", "write")  # e.g. through a team: still CONTRIBUTOR in payloads
        reason = "covered by the embedding integration suite"
        assert _comment(stack, "maint", f"please\n/reviewbot dismiss {prefix} {reason}\n", 12) == "queued"
        jobs = stack.wait_settled()
        assert jobs[0].state == "done", jobs[0].reason
        assert fake.check_runs(REPO)[-1].conclusion != "failure"
        summary = next(c for c in stack.bot_comments() if "reviewbot:state" in c.body)
        blocking, _, dismissed = summary.body.partition("### Dismissed")
        assert "No blocking issues." in blocking and "dismissed by maint" in dismissed and reason in dismissed

        assert stack.push(_commit_without_test(stack)) == "queued"
        jobs = stack.wait_settled()
        assert jobs[0].state == "done", jobs[0].reason
        assert fake.check_runs(REPO)[-1].conclusion != "failure"
        latest = stack.rounds()[-1]
        assert latest.status != "BLOCKING"
        assert [(f.rule, f.data["dismissal"]["by"]) for f in latest.findings if f.data.get("dismissal")] == [
            ("missing-tests", "maint")
        ]
