"""When reviewbot cannot finish a round, it must not block the merge: a bot's own failure is
not a reason to stop a team's work.

`report_failure` publishes what a failed round can still say: a check run concluding `neutral`
with the reason (never `failure`: the PR is not at fault), and one line in the PR's conversation.
The line goes at the top of the bot's summary comment when there is one (the next round rewrites
that comment, which removes the line), else in a comment of its own, found again by its marker
and edited rather than repeated. Each part is best effort: a missing `checks:write` permission
still leaves the comment, and the line then says the check run could not be created.
"""

from __future__ import annotations

import logging
import re

from reviewbot.github.api import IssueComment, RestApi
from reviewbot.github.auth import connect
from reviewbot.github.client import ApiCounter, ApiError
from reviewbot.github.plan import COMMENT_LIMIT, fit_body
from reviewbot.github.publish import find_bot_comment
from reviewbot.github.settings import GitHubSettings
from reviewbot.report import sanitize

__all__ = ["report_failure", "FAILURE_MARKER", "failure_line", "gate_line", "with_line"]

log = logging.getLogger(__name__)

FAILURE_MARKER = "<!-- reviewbot:round-failed -->"
_LINE = re.compile(r"^> reviewbot could not .*" + re.escape(FAILURE_MARKER) + r"\n*", re.MULTILINE)
_REASON_CHARS = 300


def failure_line(head_sha: str | None, reason: str, check_note: str = "") -> str:
    """The one line the PR shows (markdown, reason sanitised and cut)."""
    head = f" for {sanitize.code_span(head_sha[:12])}" if head_sha else ""
    why = sanitize.inline(" ".join(reason.split()), _REASON_CHARS)
    gate = check_note or "the check run is neutral, so it does not block the merge"
    return (
        f"> reviewbot could not finish the round{head}: {why} — {gate}; comment `/reviewbot review` to retry. "
        f"{FAILURE_MARKER}"
    )


def gate_line(check_name: str, head_sha: str, reason: str) -> str:
    """The line a published round puts at the top of its summary comment when GitHub refused its
    check run (`reason`: why, and what to grant): the report is there, the gate is not."""
    why = sanitize.inline(" ".join(reason.split()), _REASON_CHARS * 2)
    return (
        f"> reviewbot could not create the check run {sanitize.code_span(check_name)} for "
        f"{sanitize.code_span(head_sha[:12])}, so this PR has no reviewbot gate: {why}; then comment "
        f"`/reviewbot review`. {FAILURE_MARKER}"
    )


def with_line(body: str, line: str) -> str:
    """`body` (the bot's summary comment) with `line` on top, replacing an earlier such line."""
    # Cut in the report, never at the end: the state marker there is how the comment is found.
    text, _ = fit_body(line + "\n\n" + _LINE.sub("", body), COMMENT_LIMIT, "({n} characters left out)")
    return text


def report_failure(
    settings: GitHubSettings, repo: str, pr: int, head_sha: str | None, reason: str
) -> list[str]:
    """Publish the neutral check run and the one-line note for a round of PR `pr` that failed for
    good with `reason`; returns what was done (for the job's log)."""
    done: list[str] = []
    conn = connect(settings, repo, ApiCounter())
    try:
        api = RestApi(conn.client)
        if head_sha is None:
            head_sha = api.get_pull(repo, pr).head_sha
        check_note = ""
        try:
            run = api.create_check_run(
                repo,
                {
                    "name": settings.check_name,
                    "head_sha": head_sha,
                    "status": "completed",
                    "conclusion": "neutral",
                    "external_id": f"{repo}#{pr}@{head_sha}",
                    "output": {
                        "title": "reviewbot could not finish this round",
                        "summary": reason[:60_000],
                    },
                },
            )
            done.append(f"check run {run.get('id')} neutral")
        except ApiError as exc:
            log.error("%s #%d: the neutral check run could not be created: %s", repo, pr, exc)
            check_note = f"the check run could not be created either ({exc.status or 'no answer'})"
        line = failure_line(head_sha, reason, check_note)
        comments = api.list_issue_comments(repo, pr)
        summary = find_bot_comment(comments, conn.bot_login)
        if summary is not None:
            api.update_issue_comment(repo, summary.id, with_line(summary.body, line))
            done.append(f"note added to comment {summary.id}")
        else:
            mine = next(
                (
                    c
                    for c in comments
                    if c.user.lower() == conn.bot_login.lower() and FAILURE_MARKER in c.body
                ),
                None,
            )
            if mine is not None:
                api.update_issue_comment(repo, mine.id, line)
                done.append(f"note comment {mine.id} updated")
            else:
                bot = conn.bot_login.lower()

                def landed() -> IssueComment | None:  # an unanswered POST may land late
                    return next(
                        (
                            c
                            for c in api.list_issue_comments(repo, pr)
                            if c.user.lower() == bot and c.body == line
                        ),
                        None,
                    )

                done.append(
                    f"note comment {api.create_issue_comment(repo, pr, line, reconcile=landed).id} created"
                )
    finally:
        conn.close()
    return done
