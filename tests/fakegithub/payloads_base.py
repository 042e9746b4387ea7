"""JSON bodies shaped like GitHub's: users, apps, installations, repositories, contents.

Every builder fills the fields the official schema marks as required (see
tests/github/test_fake_openapi.py, which validates them), with URLs that point back at the fake
so PyGithub can follow them.
"""

from __future__ import annotations

import base64
from typing import Any

from tests.fakegithub.state import (
    App,
    Installation,
    Repo,
    User,
    World,
    iso,
)

__all__ = ["BasePayloads", "EPOCH", "node_id"]

EPOCH = "2026-01-01T00:00:00Z"


def node_id(kind: str, ident: int | str) -> str:
    return base64.b64encode(f"{kind}:{ident}".encode()).decode()


class BasePayloads:
    """Builds the fake's payloads; `api` is the REST root, `web` the HTML root."""

    def __init__(self, api: str, web: str, world: World) -> None:
        self.api = api.rstrip("/")
        self.web = web.rstrip("/")
        self.world = world

    # --- users, apps --------------------------------------------------------------------------
    def user(self, login: str) -> dict[str, Any]:
        u: User = self.world.user(login)
        base = f"{self.api}/users/{u.login}"
        return {
            "login": u.login,
            "id": u.id,
            "node_id": node_id("User", u.id),
            "avatar_url": f"{self.web}/avatars/{u.id}",
            "gravatar_id": "",
            "url": base,
            "html_url": f"{self.web}/{u.login}",
            "followers_url": f"{base}/followers",
            "following_url": f"{base}/following{{/other_user}}",
            "gists_url": f"{base}/gists{{/gist_id}}",
            "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{base}/subscriptions",
            "organizations_url": f"{base}/orgs",
            "repos_url": f"{base}/repos",
            "events_url": f"{base}/events{{/privacy}}",
            "received_events_url": f"{base}/received_events",
            "type": u.type,
            "site_admin": False,
        }

    def private_user(self, login: str) -> dict[str, Any]:
        body = self.user(login)
        body.update(
            name=login,
            company=None,
            blog="",
            location=None,
            email=None,
            hireable=None,
            bio=None,
            public_repos=0,
            public_gists=0,
            followers=0,
            following=0,
            created_at=EPOCH,
            updated_at=EPOCH,
        )
        return body

    def app(self, app: App) -> dict[str, Any]:
        return {
            "id": app.id,
            "slug": app.slug,
            "node_id": node_id("App", app.id),
            "client_id": f"Iv1.{app.id:016x}",
            "owner": self.user(app.owner),
            "name": app.name,
            "description": "reviewbot fake app",
            "external_url": f"{self.web}/apps/{app.slug}",
            "html_url": f"{self.web}/apps/{app.slug}",
            "created_at": EPOCH,
            "updated_at": EPOCH,
            "permissions": {
                "checks": "write",
                "contents": "read",
                "issues": "write",
                "pull_requests": "write",
            },
            "events": ["pull_request", "issue_comment", "check_run"],
            "installations_count": len([i for i in self.world.installations.values() if i.app_id == app.id]),
        }

    def installation(self, inst: Installation) -> dict[str, Any]:
        app = self.world.apps[inst.app_id]
        account = self.user(inst.account)
        return {
            "id": inst.id,
            "account": account,
            "repository_selection": "selected",
            "access_tokens_url": f"{self.api}/app/installations/{inst.id}/access_tokens",
            "repositories_url": f"{self.api}/installation/repositories",
            "html_url": f"{self.web}/settings/installations/{inst.id}",
            "app_id": app.id,
            "app_slug": app.slug,
            "target_id": account["id"],
            "target_type": "Organization" if self.world.user(inst.account).type == "Organization" else "User",
            "permissions": {
                "checks": "write",
                "contents": "read",
                "issues": "write",
                "pull_requests": "write",
            },
            "events": ["pull_request", "issue_comment"],
            "created_at": EPOCH,
            "updated_at": EPOCH,
            "single_file_name": None,
            "suspended_by": None,
            "suspended_at": None,
        }

    # --- repositories -------------------------------------------------------------------------
    def repository(self, repo: Repo, full: bool = False) -> dict[str, Any]:
        r = f"{self.api}/repos/{repo.full_name}"
        body: dict[str, Any] = {
            "id": repo.id,
            "node_id": node_id("Repository", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "owner": self.user(repo.owner),
            "private": repo.private,
            "html_url": f"{self.web}/{repo.full_name}",
            "description": None,
            "fork": repo.fork_of is not None,
            "url": r,
            "archive_url": f"{r}/{{archive_format}}{{/ref}}",
            "assignees_url": f"{r}/assignees{{/user}}",
            "blobs_url": f"{r}/git/blobs{{/sha}}",
            "branches_url": f"{r}/branches{{/branch}}",
            "collaborators_url": f"{r}/collaborators{{/collaborator}}",
            "comments_url": f"{r}/comments{{/number}}",
            "commits_url": f"{r}/commits{{/sha}}",
            "compare_url": f"{r}/compare/{{base}}...{{head}}",
            "contents_url": f"{r}/contents/{{+path}}",
            "contributors_url": f"{r}/contributors",
            "deployments_url": f"{r}/deployments",
            "downloads_url": f"{r}/downloads",
            "events_url": f"{r}/events",
            "forks_url": f"{r}/forks",
            "git_commits_url": f"{r}/git/commits{{/sha}}",
            "git_refs_url": f"{r}/git/refs{{/sha}}",
            "git_tags_url": f"{r}/git/tags{{/sha}}",
            "git_url": f"git://fake/{repo.full_name}.git",
            "issue_comment_url": f"{r}/issues/comments{{/number}}",
            "issue_events_url": f"{r}/issues/events{{/number}}",
            "issues_url": f"{r}/issues{{/number}}",
            "keys_url": f"{r}/keys{{/key_id}}",
            "labels_url": f"{r}/labels{{/name}}",
            "languages_url": f"{r}/languages",
            "merges_url": f"{r}/merges",
            "milestones_url": f"{r}/milestones{{/number}}",
            "notifications_url": f"{r}/notifications{{?since,all,participating}}",
            "pulls_url": f"{r}/pulls{{/number}}",
            "releases_url": f"{r}/releases{{/id}}",
            "ssh_url": f"git@fake:{repo.full_name}.git",
            "stargazers_url": f"{r}/stargazers",
            "statuses_url": f"{r}/statuses/{{sha}}",
            "subscribers_url": f"{r}/subscribers",
            "subscription_url": f"{r}/subscription",
            "tags_url": f"{r}/tags",
            "teams_url": f"{r}/teams",
            "trees_url": f"{r}/git/trees{{/sha}}",
            "clone_url": repo.clone_url,
            "mirror_url": None,
            "hooks_url": f"{r}/hooks",
            "svn_url": f"{self.web}/{repo.full_name}",
            "homepage": None,
            "language": None,
            "forks_count": 0,
            "forks": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "watchers": 0,
            "size": 0,
            "default_branch": repo.default_branch,
            "open_issues_count": 0,
            "open_issues": 0,
            "has_issues": True,
            "has_projects": False,
            "has_wiki": False,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": False,
            "archived": False,
            "disabled": False,
            "visibility": "private" if repo.private else "public",
            "license": None,
            "pushed_at": EPOCH,
            "created_at": EPOCH,
            "updated_at": EPOCH,
            "allow_forking": True,
        }
        if full:
            body.update(network_count=0, subscribers_count=0)
            if repo.fork_of and repo.fork_of in self.world.repos:
                body["parent"] = body["source"] = self.repository(self.world.repos[repo.fork_of])
        return body

    def content_file(self, repo: str, ref: str, path: str, data: bytes, sha: str) -> dict[str, Any]:
        url = f"{self.api}/repos/{repo}/contents/{path}?ref={ref}"
        git = f"{self.api}/repos/{repo}/git/blobs/{sha}"
        html = f"{self.web}/{repo}/blob/{ref}/{path}"
        return {
            "type": "file",
            "encoding": "base64",
            "size": len(data),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "content": base64.encodebytes(data).decode(),
            "sha": sha,
            "url": url,
            "git_url": git,
            "html_url": html,
            "download_url": f"{self.web}/{repo}/raw/{ref}/{path}",
            "_links": {"git": git, "html": html, "self": url},
        }

    def rate_limit(self, limit: int, remaining: int, reset: int, used: int) -> dict[str, Any]:
        core = {"limit": limit, "remaining": remaining, "reset": reset, "used": used}
        search = {"limit": 30, "remaining": 30, "reset": reset, "used": 0}
        return {"resources": {"core": core, "search": search}, "rate": core}

    def installation_token(self, token: str, expires_at: float, repos: list[Repo]) -> dict[str, Any]:
        return {
            "token": token,
            "expires_at": iso(expires_at),
            "permissions": {
                "checks": "write",
                "contents": "read",
                "issues": "write",
                "pull_requests": "write",
            },
            "repository_selection": "selected",
            "repositories": [self.repository(r) for r in repos],
        }
