"""The REST operations a round uses, with GitHub's JSON turned into small records at the boundary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reviewbot.github.client import GitHubClient

__all__ = ["PullRequestInfo", "IssueComment", "ReviewInfo", "PullFile", "RestApi"]


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
    def from_json(cls, repo: str, data: dict[str, Any]) -> PullRequestInfo:
        head, base = data["head"], data["base"]
        head_repo = head.get("repo") or None
        return cls(
            repo=repo,
            number=int(data["number"]),
            title=str(data.get("title") or ""),
            state=str(data.get("state") or "open"),
            draft=bool(data.get("draft")),
            user=str((data.get("user") or {}).get("login") or ""),
            author_association=str(data.get("author_association") or "NONE"),
            head_sha=str(head["sha"]),
            head_ref=str(head.get("ref") or ""),
            head_repo=str(head_repo["full_name"]) if head_repo else None,
            base_sha=str(base["sha"]),
            base_ref=str(base.get("ref") or ""),
            clone_url=str((base.get("repo") or {}).get("clone_url") or ""),
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
    def from_json(cls, data: dict[str, Any]) -> IssueComment:
        return cls(
            int(data["id"]),
            str((data.get("user") or {}).get("login") or ""),
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
    def from_json(cls, data: dict[str, Any]) -> ReviewInfo:
        return cls(
            int(data["id"]),
            str((data.get("user") or {}).get("login") or ""),
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
    def from_json(cls, data: dict[str, Any]) -> PullFile:
        return cls(
            str(data["filename"]),
            data.get("previous_filename"),
            str(data.get("status") or "modified"),
            int(data.get("additions") or 0),
            int(data.get("deletions") or 0),
            data.get("patch"),
        )


class RestApi:
    """Typed calls over a GitHubClient; every method is one request (lists: one per page)."""

    def __init__(self, client: GitHubClient) -> None:
        self.client = client

    def get_pull(self, repo: str, number: int) -> PullRequestInfo:
        _, data = self.client.request("GET", f"/repos/{repo}/pulls/{number}", label="GET pulls/{n}")
        return PullRequestInfo.from_json(repo, data)

    def list_pull_files(self, repo: str, number: int) -> list[PullFile]:
        items = self.client.paginate(f"/repos/{repo}/pulls/{number}/files", label="GET pulls/{n}/files")
        return [PullFile.from_json(i) for i in items]

    def list_issue_comments(self, repo: str, number: int) -> list[IssueComment]:
        items = self.client.paginate(
            f"/repos/{repo}/issues/{number}/comments", label="GET issues/{n}/comments"
        )
        return [IssueComment.from_json(i) for i in items]

    def create_issue_comment(
        self, repo: str, number: int, body: str, *, reconcile: Callable[[], IssueComment | None] | None = None
    ) -> IssueComment:
        found = _wrap(reconcile)
        _, data = self.client.request(
            "POST",
            f"/repos/{repo}/issues/{number}/comments",
            label="POST issues/{n}/comments",
            body={"body": body},
            reconcile=found,
        )
        return data if isinstance(data, IssueComment) else IssueComment.from_json(data)

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> IssueComment:
        # Sending the same body twice leaves the same comment, but an unanswered PATCH that lands
        # after a later one would put an older body back: it is looked for before it is sent again.
        def landed() -> IssueComment | None:
            _, data = self.client.request(
                "GET", f"/repos/{repo}/issues/comments/{comment_id}", label="GET issues/comments/{id}"
            )
            found = IssueComment.from_json(data)
            return found if found.body == body else None

        _, data = self.client.request(
            "PATCH",
            f"/repos/{repo}/issues/comments/{comment_id}",
            label="PATCH issues/comments/{id}",
            body={"body": body},
            reconcile=_wrap(landed),
        )
        return data if isinstance(data, IssueComment) else IssueComment.from_json(data)

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        items = self.client.paginate(f"/repos/{repo}/pulls/{number}/reviews", label="GET pulls/{n}/reviews")
        return [ReviewInfo.from_json(i) for i in items]

    def create_review(
        self,
        repo: str,
        number: int,
        payload: dict[str, Any],
        *,
        reconcile: Callable[[], ReviewInfo | None] | None = None,
    ) -> ReviewInfo:
        _, data = self.client.request(
            "POST",
            f"/repos/{repo}/pulls/{number}/reviews",
            label="POST pulls/{n}/reviews",
            body=payload,
            reconcile=_wrap(reconcile),
        )
        return data if isinstance(data, ReviewInfo) else ReviewInfo.from_json(data)

    def create_check_run(
        self,
        repo: str,
        payload: dict[str, Any],
        *,
        reconcile: Callable[[], dict[str, Any] | None] | None = None,
    ) -> dict[str, Any]:
        _, data = self.client.request(
            "POST",
            f"/repos/{repo}/check-runs",
            label="POST check-runs",
            body=payload,
            reconcile=_wrap(reconcile),
        )
        return dict(data)

    def get_check_run(self, repo: str, run_id: int) -> dict[str, Any]:
        _, data = self.client.request(
            "GET", f"/repos/{repo}/check-runs/{run_id}", label="GET check-runs/{id}"
        )
        return dict(data)

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[dict[str, Any]]:
        """The check runs named `name` on commit `head_sha` (the first 100: a head has a handful)."""
        _, data = self.client.request(
            "GET",
            f"/repos/{repo}/commits/{head_sha}/check-runs",
            label="GET commits/{sha}/check-runs",
            params={"check_name": name, "filter": "all", "per_page": 100},
        )
        runs = data.get("check_runs") if isinstance(data, dict) else None
        return [dict(r) for r in runs or () if isinstance(r, dict)]

    def update_check_run(
        self,
        repo: str,
        run_id: int,
        payload: dict[str, Any],
        *,
        reconcile: Callable[[], dict[str, Any] | None] | None = None,
    ) -> dict[str, Any]:
        """PATCH a check run. Idempotent unless it carries annotations (GitHub appends them): then
        pass `reconcile`, which tells whether an unanswered PATCH landed after all."""
        _, data = self.client.request(
            "PATCH",
            f"/repos/{repo}/check-runs/{run_id}",
            label="PATCH check-runs/{id}",
            body=payload,
            reconcile=_wrap(reconcile),
        )
        return dict(data)


def _wrap(
    reconcile: Callable[[], Any | None] | None,
) -> Callable[[], tuple[dict[str, Any], Any] | None] | None:
    """Adapt a record-returning reconcile function to the client's (headers, data) shape."""
    if reconcile is None:
        return None

    def run() -> tuple[dict[str, Any], Any] | None:
        found = reconcile()
        return None if found is None else ({}, found)

    return run
