"""Who may do what on a repository: GitHub's own answer, asked once per user per round.

`author_association` in webhook payloads is computed without a viewer, so members of an
organisation with private membership, or users with write access through a team, arrive as
`CONTRIBUTOR`. reviewbot therefore asks
`GET /repos/{owner}/{repo}/collaborators/{username}/permission` for the `/reviewbot` commands and
for the trusted-author test policy. The answer's `permission` is GitHub's legacy level (admin,
write, read, none: maintain reads as write, triage as read) and `role_name` the role (admin,
maintain, write, triage, read, or a custom role); a user may act when either says write or more.
"""

from __future__ import annotations

import logging
import urllib.parse

from reviewbot.github.client import ApiError, GitHubClient
from reviewbot.github.payloads import PermissionJson, answer

__all__ = ["Permissions", "WRITE_ROLES"]

log = logging.getLogger(__name__)

WRITE_ROLES = frozenset({"admin", "maintain", "write"})


class Permissions:
    """The permissions of users on one repository, each asked at most once (one per round)."""

    def __init__(self, client: GitHubClient, repo: str) -> None:
        self.client = client
        self.repo = repo
        self._roles: dict[str, str] = {}

    def role(self, user: str) -> str:
        """The user's role on the repository: admin, maintain, write, triage, read or none.

        "none" also when GitHub does not know the user (404) or will not say (403): only a
        permission GitHub confirms lets anyone run commands or tests."""
        if user not in self._roles:
            self._roles[user] = self._ask(user)
        return self._roles[user]

    def can_write(self, user: str) -> bool:
        return self.role(user) in WRITE_ROLES

    def _ask(self, user: str) -> str:
        path = f"/repos/{self.repo}/collaborators/{urllib.parse.quote(user, safe='')}/permission"
        try:
            _, data = self.client.request("GET", path, label="GET collaborators/{user}/permission")
        except ApiError as exc:
            if exc.status not in (403, 404):
                raise
            log.info("%s: the permission of %s is unknown (%s); treated as none", self.repo, user, exc.status)
            return "none"
        found = answer(data or {}, PermissionJson, "a collaborator's permission")
        legacy = str(found.get("permission") or "none")
        role = str(found.get("role_name") or legacy)
        # A custom role carries its base level in `permission`: the higher of the two decides.
        return role if role in WRITE_ROLES or legacy not in WRITE_ROLES else legacy
