"""Pull request reviews: inline comments must sit on lines of the diff, as on GitHub."""

from __future__ import annotations

from typing import Any

from tests.fakegithub import gitdiff
from tests.fakegithub.handlers_base import BODY_LIMIT, HandlerBase, Problem, Reply, Request
from tests.fakegithub.state import Review, ReviewComment, iso

__all__ = ["ReviewHandlers"]


class ReviewHandlers(HandlerBase):
    def list_reviews(self, req: Request) -> Reply:
        pr = self._pull(req)
        return Reply(
            200, [self.urls.review(r) for r in self.world.pull_reviews(pr.repo, pr.number)], paginate=True
        )

    def list_review_comments(self, req: Request) -> Reply:
        pr = self._pull(req)
        items = [self.urls.review_comment(c) for c in self.world.pull_review_comments(pr.repo, pr.number)]
        return Reply(200, items, paginate=True)

    def create_review(self, req: Request) -> Reply:
        pr = self._pull(req)
        data = self._body(req)
        event = data.get("event")
        body = data.get("body") or ""
        if event in ("REQUEST_CHANGES", "COMMENT") and not body:
            raise Problem(422, "Unprocessable Entity", [f"Body is required when using {event}"])
        if len(body) > BODY_LIMIT:
            raise Problem(422, "Unprocessable Entity", ["Body is too long (maximum is 65536 characters)"])
        if event is not None and event not in ("APPROVE", "REQUEST_CHANGES", "COMMENT"):
            raise Problem(422, "Unprocessable Entity", [f"Unknown event {event}"])
        commit = data.get("commit_id")
        if commit and commit != pr.head_sha and not self._in_history(pr, str(commit)):
            # GitHub's answer for a commit a force-push took out of the PR (the review is refused).
            raise Problem(422, "Unprocessable Entity", ["Commit is not part of the pull request"])
        login = self._actor(req)
        if event in ("APPROVE", "REQUEST_CHANGES") and login == pr.user:
            raise Problem(
                422, "Unprocessable Entity", ["Can not approve or request changes on your own pull request"]
            )
        files = {f.filename: f for f in self._files(pr)}
        planned = [self._placed(c, files) for c in data.get("comments") or []]
        state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}.get(
            event or "", "PENDING"
        )
        assoc = self._association(pr.repo, login)
        rv = Review(
            self.world.next_id(),
            pr.repo,
            pr.number,
            login,
            body,
            state,
            data.get("commit_id") or pr.head_sha,
            None if state == "PENDING" else iso(),
            assoc,
        )
        self.world.reviews[rv.id] = rv
        for path, line, side, start_line, start_side, position, text, hunk in planned:
            rc = ReviewComment(
                self.world.next_id(),
                rv.id,
                pr.repo,
                pr.number,
                login,
                path,
                text,
                rv.commit_id,
                hunk,
                line,
                side,
                start_line,
                start_side,
                position,
                assoc,
            )
            self.world.review_comments[rc.id] = rc
        return Reply(200, self.urls.review(rv))

    def _placed(self, c: Any, files: dict[str, gitdiff.FileDiff]) -> tuple[Any, ...]:
        if not isinstance(c, dict) or "path" not in c or "body" not in c:
            raise Problem(422, "Unprocessable Entity", ["Review comments need a path and a body"])
        f = files.get(c["path"])
        if f is None:
            raise Problem(422, "Unprocessable Entity", ["Path could not be resolved"])
        right, left, positions = gitdiff.diff_lines(f.patch)
        lines = (f.patch or "").split("\n")
        if "position" in c and "line" not in c:
            pos = c["position"]
            if not isinstance(pos, int) or not 1 <= pos < len(lines):
                raise Problem(422, "Unprocessable Entity", ["Position could not be resolved"])
            line = next((n for n, p in positions.items() if p == pos), None)
            return c["path"], line, "RIGHT", None, None, pos, c["body"], "\n".join(lines[: pos + 1])
        line, side = c.get("line"), c.get("side", "RIGHT")
        allowed = right if side == "RIGHT" else left
        if not isinstance(line, int) or line not in allowed:
            raise Problem(
                422, "Unprocessable Entity", ["Pull request review thread line must be part of the diff"]
            )
        start, start_side = c.get("start_line"), c.get("start_side", side)
        if start is not None:
            start_allowed = right if start_side == "RIGHT" else left
            if (
                not isinstance(start, int)
                or start not in start_allowed
                or (start_side == side and start >= line)
            ):
                raise Problem(
                    422,
                    "Unprocessable Entity",
                    ["Pull request review thread start line must be part of the same hunk"],
                )
        pos = positions.get(line) if side == "RIGHT" else None
        hunk = "\n".join(lines[: (pos or 0) + 1])
        return c["path"], line, side, start, start_side if start is not None else None, pos, c["body"], hunk
