"""The REST operations a round uses, with GitHub's JSON turned into small records at the boundary."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from reviewbot.github.client import GitHubClient
from reviewbot.github.payloads import (
    CheckRunCreateBody,
    CheckRunJson,
    CheckRunListJson,
    CheckRunUpdateBody,
    CommentBody,
    DiffEntryJson,
    IssueCommentJson,
    PullRequestJson,
    ReviewBody,
    ReviewJson,
    UserJson,
    answer,
)
from reviewbot.model.jsonvalue import JSONValue

__all__ = ["PullRequestInfo", "IssueComment", "ReviewInfo", "PullFile", "RestApi"]

T = TypeVar("T")


def _login(user: UserJson | None) -> str:
    return str(user.get("login") or "") if user else ""  # "": a deleted account


@dataclass(frozen=True)
class PullRequestInfo:
    repo: str  # OWNER/NAME of the base repository
    number: int
    title: str
    state: str  # open | closed
    draft: bool
    user: str
    author_association: str
    head_sha: str
    head_ref: str
    head_repo: str | None  # OWNER/NAME of the head repository; None when it was deleted
    base_sha: str
    base_ref: str
    clone_url: str  # of the base repository: `pull/N/head` is fetched from there, forks included
    html_url: str
    changed_files: int

    @property
    def fork(self) -> bool:
        return self.head_repo != self.repo

    @classmethod
    def from_json(cls, repo: str, data: PullRequestJson) -> PullRequestInfo:
        head, base = data["head"], data["base"]
        head_repo, base_repo = head.get("repo") or None, base.get("repo") or None
        return cls(
            repo=repo,
            number=int(data["number"]),
            title=str(data.get("title") or ""),
            state=str(data.get("state") or "open"),
            draft=bool(data.get("draft")),
            user=_login(data.get("user")),
            author_association=str(data.get("author_association") or "NONE"),
            head_sha=str(head["sha"]),
            head_ref=str(head.get("ref") or ""),
            head_repo=str(head_repo["full_name"]) if head_repo else None,
            base_sha=str(base["sha"]),
            base_ref=str(base.get("ref") or ""),
            clone_url=str(base_repo.get("clone_url") or "") if base_repo else "",
            html_url=str(data.get("html_url") or ""),
            changed_files=int(data.get("changed_files") or 0),
        )


@dataclass(frozen=True)
class IssueComment:
    id: int
    user: str
    body: str
    html_url: str
    created_at: str = ""  # ISO 8601 (UTC, with a Z), as GitHub gives it

    @classmethod
    def from_json(cls, data: IssueCommentJson) -> IssueComment:
        return cls(
            int(data["id"]),
            _login(data.get("user")),
            str(data.get("body") or ""),
            str(data.get("html_url") or ""),
            str(data.get("created_at") or ""),
        )


@dataclass(frozen=True)
class ReviewInfo:
    id: int
    user: str
    body: str
    commit_id: str
    state: str

    @classmethod
    def from_json(cls, data: ReviewJson) -> ReviewInfo:
        return cls(
            int(data["id"]),
            _login(data.get("user")),
            str(data.get("body") or ""),
            str(data.get("commit_id") or ""),
            str(data.get("state") or ""),
        )


@dataclass(frozen=True)
class PullFile:
    filename: str
    previous_filename: str | None
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    additions: int
    deletions: int
    patch: str | None  # None: binary, or too large for GitHub to send

    @classmethod
    def from_json(cls, data: DiffEntryJson) -> PullFile:
        return cls(
            str(data["filename"]),
            data.get("previous_filename"),
            str(data.get("status") or "modified"),
            int(data.get("additions") or 0),
            int(data.get("deletions") or 0),
            data.get("patch"),
        )


def _comment(data: JSONValue) -> IssueComment:
    return IssueComment.from_json(answer(data, IssueCommentJson, "an issue comment"))


def _review(data: JSONValue) -> ReviewInfo:
    return ReviewInfo.from_json(answer(data, ReviewJson, "a review"))


def _check_run(data: JSONValue) -> CheckRunJson:
    return answer(data, CheckRunJson, "a check run")


class RestApi:
    """Typed calls over a GitHubClient; every method is one request (lists: one per page)."""

    def __init__(self, client: GitHubClient) -> None:
        self.client = client

    def _write(
        self,
        method: str,
        path: str,
        label: str,
        body: Mapping[str, object],
        parse: Callable[[JSONValue], T],
        reconcile: Callable[[], T | None] | None,
    ) -> T:
        """One write, its answer read by `parse`; `reconcile` finds it when its answer got lost."""
        return self.client.call(
            method, label, lambda: parse(self.client.send(method, path, body=body)[1]), reconcile=reconcile
        )

    def get_pull(self, repo: str, number: int) -> PullRequestInfo:
        _, data = self.client.request("GET", f"/repos/{repo}/pulls/{number}", label="GET pulls/{n}")
        return PullRequestInfo.from_json(repo, answer(data, PullRequestJson, "a pull request"))

    def list_pull_files(self, repo: str, number: int) -> list[PullFile]:
        items = self.client.paginate(f"/repos/{repo}/pulls/{number}/files", label="GET pulls/{n}/files")
        return [PullFile.from_json(answer(i, DiffEntryJson, "a pull request's file")) for i in items]

    def list_issue_comments(self, repo: str, number: int) -> list[IssueComment]:
        items = self.client.paginate(
            f"/repos/{repo}/issues/{number}/comments", label="GET issues/{n}/comments"
        )
        return [_comment(i) for i in items]

    def create_issue_comment(
        self, repo: str, number: int, body: str, *, reconcile: Callable[[], IssueComment | None] | None = None
    ) -> IssueComment:
        path, payload = f"/repos/{repo}/issues/{number}/comments", CommentBody(body=body)
        return self._write("POST", path, "POST issues/{n}/comments", payload, _comment, reconcile)

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> IssueComment:
        # Sending the same body twice leaves the same comment, but an unanswered PATCH that lands
        # after a later one would put an older body back: it is looked for before it is sent again.
        def landed() -> IssueComment | None:
            _, data = self.client.request(
                "GET", f"/repos/{repo}/issues/comments/{comment_id}", label="GET issues/comments/{id}"
            )
            found = _comment(data)
            return found if found.body == body else None

        path, payload = f"/repos/{repo}/issues/comments/{comment_id}", CommentBody(body=body)
        return self._write("PATCH", path, "PATCH issues/comments/{id}", payload, _comment, landed)

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        items = self.client.paginate(f"/repos/{repo}/pulls/{number}/reviews", label="GET pulls/{n}/reviews")
        return [_review(i) for i in items]

    def create_review(
        self,
        repo: str,
        number: int,
        payload: ReviewBody,
        *,
        reconcile: Callable[[], ReviewInfo | None] | None = None,
    ) -> ReviewInfo:
        path = f"/repos/{repo}/pulls/{number}/reviews"
        return self._write("POST", path, "POST pulls/{n}/reviews", payload, _review, reconcile)

    def create_check_run(
        self,
        repo: str,
        payload: CheckRunCreateBody,
        *,
        reconcile: Callable[[], CheckRunJson | None] | None = None,
    ) -> CheckRunJson:
        path = f"/repos/{repo}/check-runs"
        return self._write("POST", path, "POST check-runs", payload, _check_run, reconcile)

    def get_check_run(self, repo: str, run_id: int) -> CheckRunJson:
        _, data = self.client.request(
            "GET", f"/repos/{repo}/check-runs/{run_id}", label="GET check-runs/{id}"
        )
        return _check_run(data)

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunJson]:
        """The check runs named `name` on commit `head_sha` (the first 100: a head has a handful)."""
        _, data = self.client.request(
            "GET",
            f"/repos/{repo}/commits/{head_sha}/check-runs",
            label="GET commits/{sha}/check-runs",
            params={"check_name": name, "filter": "all", "per_page": 100},
        )
        found = answer(data, CheckRunListJson, "a list of check runs") if isinstance(data, dict) else None
        runs = found.get("check_runs") if found else None
        return [r for r in runs or () if isinstance(r, dict)]

    def update_check_run(
        self,
        repo: str,
        run_id: int,
        payload: CheckRunUpdateBody,
        *,
        reconcile: Callable[[], CheckRunJson | None] | None = None,
    ) -> CheckRunJson:
        """PATCH a check run. Idempotent unless it carries annotations (GitHub appends them): then
        pass `reconcile`, which tells whether an unanswered PATCH landed after all."""
        path = f"/repos/{repo}/check-runs/{run_id}"
        return self._write("PATCH", path, "PATCH check-runs/{id}", payload, _check_run, reconcile)
