"""The endpoints: each handler reads the request and the world and returns a Reply.

Behaviour follows GitHub where it matters to a review bot: comments are authored by the token's
user, a body over 65,536 characters is refused with 422, review comments must sit on lines of
the diff, check runs accept at most 50 annotations per call and `completed` needs a
conclusion, installation tokens cannot call `GET /user`, and only Apps create check runs.
"""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Callable

from tests.fakegithub import gitdiff
from tests.fakegithub.checkruns import CheckRunHandlers
from tests.fakegithub.handlers_base import BODY_LIMIT, Problem, Reply, Request, too_long
from tests.fakegithub.permissions import PermissionHandlers
from tests.fakegithub.reviews import ReviewHandlers
from tests.fakegithub.state import IssueComment, Token, iso

__all__ = ["Handlers"]


class Handlers(ReviewHandlers, CheckRunHandlers, PermissionHandlers):
    """Endpoint logic over one World; `urls` builds payloads, `options` holds fake-wide switches."""

    # --- users, apps -----------------------------------------------------------------------
    def get_user(self, req: Request) -> Reply:
        if req.token is None:
            raise Problem(401, "Requires authentication")
        if req.token.kind == "installation":
            raise Problem(403, "Resource not accessible by integration")
        return Reply(200, self.urls.private_user(req.token.login))

    def get_app(self, req: Request) -> Reply:
        assert req.app_id is not None
        return Reply(200, self.urls.app(self.world.apps[req.app_id]))

    def get_repo_installation(self, req: Request) -> Reply:
        full = f"{req.params['owner']}/{req.params['repo']}"
        for inst in self.world.installations.values():
            if inst.app_id == req.app_id and full in inst.repositories:
                return Reply(200, self.urls.installation(inst))
        raise Problem(404, "Not Found")

    def create_access_token(self, req: Request) -> Reply:
        inst = self.world.installations.get(int(req.params["installation_id"]))
        if inst is None or inst.app_id != req.app_id:
            raise Problem(404, "Not Found")
        app = self.world.apps[inst.app_id]
        value = f"ghs_{secrets.token_hex(18)}"
        expires = time.time() + self.options.installation_token_ttl
        login = f"{app.slug}[bot]"
        self.world.user(login)
        self.world.tokens[value] = Token(value, login, "installation", inst.id, expires)
        repos = [self.world.repos[r] for r in sorted(inst.repositories) if r in self.world.repos]
        return Reply(201, self.urls.installation_token(value, expires, repos))

    def get_rate_limit(self, req: Request) -> Reply:
        window = self.world.rates.setdefault(req.token.value if req.token else "", self.options.new_rate())
        return Reply(
            200, self.urls.rate_limit(window.limit, window.remaining, int(window.reset), window.used)
        )

    # --- repositories, pulls ---------------------------------------------------------------
    def get_repo(self, req: Request) -> Reply:
        return Reply(200, self.urls.repository(self.world.repos[self._repo(req)], full=True))

    def get_pull(self, req: Request) -> Reply:
        pr = self._pull(req)
        accept = req.headers.get("accept", "")
        bare = self.world.repos[pr.repo].bare_path
        if "diff" in accept or "patch" in accept:
            if bare is None:
                raise Problem(406, "Sorry, the diff is unavailable")
            mb = gitdiff.merge_base(bare, pr.base_sha, pr.head_sha)
            text = gitdiff._git(bare, "diff", "--no-color", "-M", mb, pr.head_sha)
            return Reply(200, text, content_type="application/vnd.github.diff; charset=utf-8")
        files = self._files(pr)
        commits = len(gitdiff.commits_between(bare, pr.base_sha, pr.head_sha)) if bare else 0
        return Reply(200, self.urls.pull(pr, files, commits))

    def list_files(self, req: Request) -> Reply:
        pr = self._pull(req)
        entries = [self.urls.diff_entry(pr.repo, pr.head_sha, f) for f in self._files(pr)][:3000]
        return Reply(200, entries, paginate=True)

    def list_commits(self, req: Request) -> Reply:
        pr = self._pull(req)
        bare = self.world.repos[pr.repo].bare_path
        commits = gitdiff.commits_between(bare, pr.base_sha, pr.head_sha) if bare else []
        return Reply(200, [self.urls.commit(pr.repo, c) for c in commits][:250], paginate=True)

    def compare(self, req: Request) -> Reply:
        full = self._repo(req)
        bare = self.world.repos[full].bare_path
        base, sep, head = req.params["basehead"].partition("...")
        if not sep or bare is None:
            raise Problem(404, "Not Found")
        try:
            mb = gitdiff.merge_base(bare, base, head)
            ahead = gitdiff.commits_between(bare, base, head)
            behind = gitdiff.commits_between(bare, head, base)
            base_commit, mb_commit = gitdiff.commit_info(bare, base), gitdiff.commit_info(bare, mb)
        except subprocess.CalledProcessError as exc:
            raise Problem(404, "Not Found") from exc
        files = gitdiff.pr_files(bare, base, head, self.options.patch_limit)
        status = (
            "identical"
            if not ahead and not behind
            else "ahead"
            if not behind
            else "behind"
            if not ahead
            else "diverged"
        )
        url = f"{self.urls.api}/repos/{full}/compare/{base}...{head}"
        html = f"{self.urls.web}/{full}/compare/{base}...{head}"
        body = {
            "url": url,
            "html_url": html,
            "permalink_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "base_commit": self.urls.commit(full, base_commit),
            "merge_base_commit": self.urls.commit(full, mb_commit),
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": len(behind),
            "total_commits": len(ahead),
            "commits": [self.urls.commit(full, c) for c in ahead][:250],
            "files": [self.urls.diff_entry(full, head, f) for f in files][:300],
        }
        return Reply(200, body)

    def get_content(self, req: Request) -> Reply:
        full = self._repo(req)
        repo = self.world.repos[full]
        ref = req.query.get("ref") or repo.default_branch
        path = req.params["path"]
        data = gitdiff.show(repo.bare_path, ref, path) if repo.bare_path else None
        if data is None or repo.bare_path is None:
            raise Problem(404, "Not Found")
        sha = gitdiff.blob_sha(repo.bare_path, ref, path)
        return Reply(200, self.urls.content_file(full, ref, path, data, sha))

    # --- issue comments ----------------------------------------------------------------------
    def list_comments(self, req: Request) -> Reply:
        pr = self._pull(req)
        return Reply(
            200,
            [self.urls.issue_comment(c) for c in self.world.issue_comments(pr.repo, pr.number)],
            paginate=True,
        )

    def create_comment(self, req: Request) -> Reply:
        pr = self._pull(req)
        body = self._body(req).get("body")
        if not isinstance(body, str) or not body:
            raise Problem(
                422,
                "Validation Failed",
                [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
            )
        if len(body) > BODY_LIMIT:
            raise too_long("IssueComment")
        login = self._actor(req)
        c = IssueComment(
            self.world.next_id(),
            pr.repo,
            pr.number,
            login,
            body,
            self._association(pr.repo, login),
            via_app=self._app_of(req),
        )
        self.world.comments[c.id] = c
        payload = self.urls.issue_comment(c)
        return Reply(201, payload, headers={"Location": payload["url"]})

    def update_comment(self, req: Request) -> Reply:
        full = self._repo(req)
        c = self.world.comments.get(int(req.params["comment_id"]))
        if c is None or c.repo != full:
            raise Problem(404, "Not Found")
        body = self._body(req).get("body")
        if not isinstance(body, str):
            raise Problem(
                422,
                "Validation Failed",
                [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
            )
        if len(body) > BODY_LIMIT:
            raise too_long("IssueComment")
        # Collaborators may edit anyone's comment on GitHub; the bot must not rely on a refusal here.
        c.body = body
        c.updated_at = iso()
        return Reply(200, self.urls.issue_comment(c))

    def get_comment(self, req: Request) -> Reply:
        """`GET /repos/{o}/{r}/issues/comments/{id}` (operation `issues/get-comment`; not in the
        OpenAPI subset: it answers the same issue-comment object as `issues/update-comment`)."""
        full = self._repo(req)
        c = self.world.comments.get(int(req.params["comment_id"]))
        if c is None or c.repo != full:
            raise Problem(404, "Not Found")
        return Reply(200, self.urls.issue_comment(c))

    def delete_comment(self, req: Request) -> Reply:
        full = self._repo(req)
        c = self.world.comments.get(int(req.params["comment_id"]))
        if c is None or c.repo != full:
            raise Problem(404, "Not Found")
        del self.world.comments[c.id]
        return Reply(204)

    def routes(self) -> list[tuple[str, str, str, Callable[[Request], Reply], str]]:
        """(method, path template, operation id, handler, auth) — auth is "token", "jwt" or "any"."""
        R = "/repos/{owner}/{repo}"
        return [
            ("GET", "/user", "users/get-authenticated", self.get_user, "token"),
            ("GET", "/rate_limit", "rate-limit/get", self.get_rate_limit, "any"),
            ("GET", "/app", "apps/get-authenticated", self.get_app, "jwt"),
            (
                "POST",
                "/app/installations/{installation_id}/access_tokens",
                "apps/create-installation-access-token",
                self.create_access_token,
                "jwt",
            ),
            ("GET", f"{R}/installation", "apps/get-repo-installation", self.get_repo_installation, "jwt"),
            ("GET", R, "repos/get", self.get_repo, "token"),
            (  # not in the OpenAPI subset: see tests/fakegithub/permissions.py
                "GET",
                f"{R}/collaborators/{{username}}/permission",
                "repos/get-collaborator-permission-level",
                self.get_collaborator_permission,
                "token",
            ),
            ("GET", f"{R}/pulls/{{number}}", "pulls/get", self.get_pull, "token"),
            ("GET", f"{R}/pulls/{{number}}/files", "pulls/list-files", self.list_files, "token"),
            ("GET", f"{R}/pulls/{{number}}/commits", "pulls/list-commits", self.list_commits, "token"),
            ("GET", f"{R}/pulls/{{number}}/reviews", "pulls/list-reviews", self.list_reviews, "token"),
            ("POST", f"{R}/pulls/{{number}}/reviews", "pulls/create-review", self.create_review, "token"),
            (
                "GET",
                f"{R}/pulls/{{number}}/comments",
                "pulls/list-review-comments",
                self.list_review_comments,
                "token",
            ),
            ("GET", f"{R}/compare/{{basehead}}", "repos/compare-commits", self.compare, "token"),
            ("GET", f"{R}/contents/{{path+}}", "repos/get-content", self.get_content, "token"),
            ("GET", f"{R}/issues/{{number}}/comments", "issues/list-comments", self.list_comments, "token"),
            (
                "POST",
                f"{R}/issues/{{number}}/comments",
                "issues/create-comment",
                self.create_comment,
                "token",
            ),
            (
                "PATCH",
                f"{R}/issues/comments/{{comment_id}}",
                "issues/update-comment",
                self.update_comment,
                "token",
            ),
            ("GET", f"{R}/issues/comments/{{comment_id}}", "issues/get-comment", self.get_comment, "token"),
            (
                "DELETE",
                f"{R}/issues/comments/{{comment_id}}",
                "issues/delete-comment",
                self.delete_comment,
                "token",
            ),
            ("POST", f"{R}/check-runs", "checks/create", self.create_check_run, "token"),
            ("PATCH", f"{R}/check-runs/{{check_run_id}}", "checks/update", self.update_check_run, "token"),
            ("GET", f"{R}/check-runs/{{check_run_id}}", "checks/get", self.get_check_run, "token"),
            (  # not in the OpenAPI subset; the answer is GitHub's documented shape
                "GET",
                f"{R}/commits/{{ref}}/check-runs",
                "checks/list-for-ref",
                self.list_check_runs_for_ref,
                "token",
            ),
            (
                "GET",
                f"{R}/check-runs/{{check_run_id}}/annotations",
                "checks/list-annotations",
                self.list_annotations,
                "token",
            ),
        ]
