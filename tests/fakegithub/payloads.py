"""JSON bodies shaped like GitHub's, built from the fake's records: pulls, comments, reviews, check runs.

Every builder fills the fields the official schema marks as required (see
tests/github/test_fake_openapi.py, which validates them), with URLs that point back at the fake
so PyGithub can follow them.
"""

from __future__ import annotations

from typing import Any

from tests.fakegithub.gitdiff import CommitInfo, FileDiff
from tests.fakegithub.payloads_base import BasePayloads, node_id
from tests.fakegithub.state import CheckRun, IssueComment, Pull, Review, ReviewComment

__all__ = ["Urls"]


class Urls(BasePayloads):
    """Builds the fake's payloads; `api` is the REST root, `web` the HTML root."""

    # --- pull requests ------------------------------------------------------------------------
    def pull(self, pr: Pull, files: list[FileDiff] | None = None, commits: int = 0) -> dict[str, Any]:
        repo = self.world.repos[pr.repo]
        head_repo = self.world.repos[pr.head_repo]
        r = f"{self.api}/repos/{pr.repo}"
        url = f"{r}/pulls/{pr.number}"
        html = f"{self.web}/{pr.repo}/pull/{pr.number}"
        files = files or []
        return {
            "url": url,
            "id": pr.id,
            "node_id": node_id("PullRequest", pr.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": f"{r}/issues/{pr.number}",
            "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{r}/pulls/comments{{/number}}",
            "comments_url": f"{r}/issues/{pr.number}/comments",
            "statuses_url": f"{r}/statuses/{pr.head_sha}",
            "number": pr.number,
            "state": pr.state,
            "locked": False,
            "title": pr.title,
            "user": self.user(pr.user),
            "body": pr.body,
            "labels": [],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": pr.created_at,
            "updated_at": pr.updated_at,
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": {
                "label": f"{head_repo.owner}:{pr.head_ref}",
                "ref": pr.head_ref,
                "sha": pr.head_sha,
                "user": self.user(head_repo.owner),
                "repo": self.repository(head_repo),
            },
            "base": {
                "label": f"{repo.owner}:{pr.base_ref}",
                "ref": pr.base_ref,
                "sha": pr.base_sha,
                "user": self.user(repo.owner),
                "repo": self.repository(repo),
            },
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "issue": {"href": f"{r}/issues/{pr.number}"},
                "comments": {"href": f"{r}/issues/{pr.number}/comments"},
                "review_comments": {"href": f"{url}/comments"},
                "review_comment": {"href": f"{r}/pulls/comments{{/number}}"},
                "commits": {"href": f"{url}/commits"},
                "statuses": {"href": f"{r}/statuses/{pr.head_sha}"},
            },
            "author_association": pr.author_association,
            "auto_merge": None,
            "draft": pr.draft,
            "merged": False,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "draft" if pr.draft else "clean",
            "merged_by": None,
            "comments": len(self.world.issue_comments(pr.repo, pr.number)),
            "review_comments": len(self.world.pull_review_comments(pr.repo, pr.number)),
            "maintainer_can_modify": pr.head_repo != pr.repo,
            "commits": commits,
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
        }

    def diff_entry(self, repo: str, head: str, f: FileDiff) -> dict[str, Any]:
        body: dict[str, Any] = {
            "sha": f.sha,
            "filename": f.filename,
            "status": f.status,
            "additions": f.additions,
            "deletions": f.deletions,
            "changes": f.additions + f.deletions,
            "blob_url": f"{self.web}/{repo}/blob/{head}/{f.filename}",
            "raw_url": f"{self.web}/{repo}/raw/{head}/{f.filename}",
            "contents_url": f"{self.api}/repos/{repo}/contents/{f.filename}?ref={head}",
        }
        if f.patch is not None:
            body["patch"] = f.patch
        if f.previous_filename:
            body["previous_filename"] = f.previous_filename
        return body

    def commit(self, repo: str, c: CommitInfo) -> dict[str, Any]:
        url = f"{self.api}/repos/{repo}/commits/{c.sha}"

        def git_user(name: str, email: str, date: str) -> dict[str, Any]:
            return {"name": name, "email": email, "date": date}

        return {
            "url": url,
            "sha": c.sha,
            "node_id": node_id("Commit", c.sha),
            "html_url": f"{self.web}/{repo}/commit/{c.sha}",
            "comments_url": f"{url}/comments",
            "commit": {
                "url": f"{self.api}/repos/{repo}/git/commits/{c.sha}",
                "author": git_user(c.author_name, c.author_email, c.author_date),
                "committer": git_user(c.committer_name, c.committer_email, c.committer_date),
                "message": c.message,
                "comment_count": 0,
                "tree": {"sha": c.tree, "url": f"{self.api}/repos/{repo}/git/trees/{c.tree}"},
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "payload": None,
                    "signature": None,
                    "verified_at": None,
                },
            },
            # No account matches the example's e-mail addresses; `{}` is the spec's "no user".
            "author": {},
            "committer": {},
            "parents": [
                {
                    "sha": p,
                    "url": f"{self.api}/repos/{repo}/commits/{p}",
                    "html_url": f"{self.web}/{repo}/commit/{p}",
                }
                for p in c.parents
            ],
        }

    # --- comments, reviews, check runs --------------------------------------------------------
    def issue_comment(self, c: IssueComment) -> dict[str, Any]:
        r = f"{self.api}/repos/{c.repo}"
        body: dict[str, Any] = {
            "id": c.id,
            "node_id": node_id("IssueComment", c.id),
            "url": f"{r}/issues/comments/{c.id}",
            "html_url": f"{self.web}/{c.repo}/pull/{c.issue_number}#issuecomment-{c.id}",
            "body": c.body,
            "user": self.user(c.user),
            "created_at": c.created_at,
            "updated_at": c.updated_at,
            "issue_url": f"{r}/issues/{c.issue_number}",
            "author_association": c.author_association,
        }
        if c.via_app is not None and c.via_app in self.world.apps:
            body["performed_via_github_app"] = self.app(self.world.apps[c.via_app])
        return body

    def review(self, rv: Review) -> dict[str, Any]:
        pr_url = f"{self.api}/repos/{rv.repo}/pulls/{rv.number}"
        html = f"{self.web}/{rv.repo}/pull/{rv.number}#pullrequestreview-{rv.id}"
        body: dict[str, Any] = {
            "id": rv.id,
            "node_id": node_id("PullRequestReview", rv.id),
            "user": self.user(rv.user),
            "body": rv.body,
            "state": rv.state,
            "html_url": html,
            "pull_request_url": pr_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pr_url}},
            "commit_id": rv.commit_id,
            "author_association": rv.author_association,
        }
        if rv.submitted_at:
            body["submitted_at"] = rv.submitted_at
        return body

    def review_comment(self, c: ReviewComment) -> dict[str, Any]:
        r = f"{self.api}/repos/{c.repo}"
        url = f"{r}/pulls/comments/{c.id}"
        html = f"{self.web}/{c.repo}/pull/{c.number}#discussion_r{c.id}"
        pr_url = f"{r}/pulls/{c.number}"
        body: dict[str, Any] = {
            "url": url,
            "pull_request_review_id": c.review_id,
            "id": c.id,
            "node_id": node_id("PullRequestReviewComment", c.id),
            "diff_hunk": c.diff_hunk,
            "path": c.path,
            "position": c.position,
            "original_position": c.position,
            "commit_id": c.commit_id,
            "original_commit_id": c.commit_id,
            "user": self.user(c.user),
            "body": c.body,
            "created_at": c.created_at,
            "updated_at": c.created_at,
            "html_url": html,
            "pull_request_url": pr_url,
            "author_association": c.author_association,
            "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pr_url}},
            "line": c.line,
            "original_line": c.line,
            "side": c.side or "RIGHT",
            "subject_type": "line",
        }
        if c.start_line is not None:
            body.update(start_line=c.start_line, original_start_line=c.start_line, start_side=c.start_side)
        return body

    def check_run(self, run: CheckRun) -> dict[str, Any]:
        url = f"{self.api}/repos/{run.repo}/check-runs/{run.id}"
        repo = self.world.repos[run.repo]
        pulls = [
            p
            for p in self.world.pulls.values()
            if p.repo == run.repo and p.head_sha == run.head_sha and p.state == "open"
        ]
        app = self.world.apps.get(run.app_id) if run.app_id is not None else None
        return {
            "id": run.id,
            "head_sha": run.head_sha,
            "node_id": node_id("CheckRun", run.id),
            "external_id": run.external_id,
            "url": url,
            "html_url": f"{self.web}/{run.repo}/runs/{run.id}",
            "details_url": run.details_url or f"{self.web}/{run.repo}/runs/{run.id}",
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": run.started_at,
            "completed_at": run.completed_at,
            "output": {
                "title": run.output.get("title"),
                "summary": run.output.get("summary"),
                "text": run.output.get("text"),
                "annotations_count": len(run.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "name": run.name,
            "check_suite": {"id": run.id + 500_000},
            "app": self.app(app) if app else None,
            "pull_requests": [
                {
                    "id": p.id,
                    "number": p.number,
                    "url": f"{self.api}/repos/{p.repo}/pulls/{p.number}",
                    "head": {
                        "ref": p.head_ref,
                        "sha": p.head_sha,
                        "repo": {"id": repo.id, "url": f"{self.api}/repos/{p.repo}", "name": repo.name},
                    },
                    "base": {
                        "ref": p.base_ref,
                        "sha": p.base_sha,
                        "repo": {"id": repo.id, "url": f"{self.api}/repos/{p.repo}", "name": repo.name},
                    },
                }
                for p in pulls
            ],
        }
