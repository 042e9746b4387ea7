"""`GET /repos/{owner}/{repo}/collaborators/{username}/permission` (operation
`repos/get-collaborator-permission-level`): a user's permission on a repository.

This operation is NOT in ../shared/github/openapi-subset.json (the subset has 18 other operations).
Its answers are therefore validated against `PERMISSION_SCHEMA` below, GitHub's documented
`repository-collaborator-permission` schema (with `nullable-collaborator`) transcribed from the
REST API description (github/rest-api-description, components/schemas): permission, role_name and
user are required; user carries the simple-user fields plus `permissions` and `role_name`.

Behaviour modelled: a collaborator's role (admin, maintain, write, triage, read; seeded with
`FakeGitHub.set_permission`) is `role_name`, and `permission` is GitHub's legacy level (maintain
reads as write, triage as read); the owner account of the repository is admin; anyone else gets
read on a public repository and none on a private one; an unknown user is 404.
"""

from __future__ import annotations

from typing import Any

from tests.fakegithub.handlers_base import HandlerBase, Problem, Reply, Request

__all__ = ["PermissionHandlers", "PERMISSION_SCHEMA", "LEGACY"]

LEGACY = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
_RANK = ["none", "read", "triage", "write", "maintain", "admin"]

_USER_FIELDS = [
    "login",
    "id",
    "node_id",
    "avatar_url",
    "gravatar_id",
    "url",
    "html_url",
    "followers_url",
    "following_url",
    "gists_url",
    "starred_url",
    "subscriptions_url",
    "organizations_url",
    "repos_url",
    "events_url",
    "received_events_url",
    "type",
    "site_admin",
]

PERMISSION_SCHEMA: dict[str, Any] = {
    "title": "Repository Collaborator Permission",
    "type": "object",
    "required": ["permission", "role_name", "user"],
    "properties": {
        "permission": {"type": "string"},
        "role_name": {"type": "string"},
        "user": {
            "title": "Collaborator",
            "type": "object",
            "nullable": True,
            "required": [*_USER_FIELDS, "role_name"],
            "properties": {
                **{
                    f: {"type": "string"}
                    for f in _USER_FIELDS
                    if f not in ("id", "site_admin", "gravatar_id")
                },
                "id": {"type": "integer", "format": "int64"},
                "gravatar_id": {"type": "string", "nullable": True},
                "site_admin": {"type": "boolean"},
                "email": {"type": "string", "nullable": True},
                "name": {"type": "string", "nullable": True},
                "role_name": {"type": "string"},
                "user_view_type": {"type": "string"},
                "permissions": {
                    "type": "object",
                    "required": ["pull", "push", "admin"],
                    "properties": {
                        k: {"type": "boolean"} for k in ("pull", "triage", "push", "maintain", "admin")
                    },
                },
            },
        },
    },
}


class PermissionHandlers(HandlerBase):
    """The permission endpoint, mixed into Handlers."""

    def role_of(self, full: str, login: str) -> str:
        repo = self.world.repos[full]
        if login in repo.collaborators:
            return str(repo.collaborators[login])
        if login == repo.owner:
            return "admin"
        return "none" if repo.private else "read"

    def get_collaborator_permission(self, req: Request) -> Reply:
        full = self._repo(req)
        login = req.params["username"]
        if login not in self.world.users:
            raise Problem(404, "Not Found")
        role = self.role_of(full, login)
        at = _RANK.index(role) if role in _RANK else _RANK.index(LEGACY.get(role, "read"))
        user = {
            **self.urls.user(login),
            "role_name": role,
            "permissions": {
                k: at >= _RANK.index(k2)
                for k, k2 in (
                    ("pull", "read"),
                    ("triage", "triage"),
                    ("push", "write"),
                    ("maintain", "maintain"),
                    ("admin", "admin"),
                )
            },
        }
        return Reply(200, {"permission": LEGACY.get(role, "read"), "role_name": role, "user": user})
