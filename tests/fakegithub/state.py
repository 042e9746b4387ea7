"""The fake's world: users, tokens, apps, repositories, pull requests and what was posted to them.

Plain records behind one lock. Handlers read and change them; tests seed them through
`FakeGitHub` and inspect them afterwards (what was created, edited, annotated).
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "User",
    "Token",
    "App",
    "Installation",
    "Repo",
    "Pull",
    "IssueComment",
    "Review",
    "ReviewComment",
    "CheckRun",
    "RateWindow",
    "World",
    "iso",
]


def iso(ts: float | None = None) -> str:
    """GitHub's timestamp format: ISO 8601 in UTC with a Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if ts is None else ts))


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User" | "Bot" | "Organization"


@dataclass
class Token:
    value: str
    login: str  # the user the token acts as
    kind: str = "pat"  # "pat" | "installation"
    installation_id: int | None = None
    expires_at: float | None = None  # epoch seconds; None = never


@dataclass
class App:
    id: int
    slug: str
    name: str
    owner: str
    public_key_pem: str  # JWTs must be signed with the matching private key (RS256)


@dataclass
class Installation:
    id: int
    app_id: int
    account: str
    repositories: set[str] = field(default_factory=set)  # full names
    # The permissions the installation was granted (GitHub: set in the App, accepted per installation);
    # only `checks` is enforced (create and update check runs need "write").
    permissions: dict[str, str] = field(default_factory=lambda: {"checks": "write"})


@dataclass
class Repo:
    full_name: str
    id: int
    bare_path: Path | None  # the git repository served as clone_url (file://)
    default_branch: str = "main"
    private: bool = False
    fork_of: str | None = None
    clone_url_override: str | None = None  # e.g. an unreachable URL, to make fetches fail
    # login -> role (admin, maintain, write, triage, read): GET collaborators/{user}/permission
    collaborators: dict[str, str] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]

    @property
    def clone_url(self) -> str:
        if self.clone_url_override is not None:
            return self.clone_url_override
        return self.bare_path.resolve().as_uri() if self.bare_path else ""


@dataclass
class Pull:
    repo: str
    number: int
    id: int
    title: str
    body: str
    user: str
    author_association: str
    base_ref: str
    base_sha: str
    head_ref: str
    head_sha: str
    head_repo: str  # full name; differs from `repo` for a fork
    draft: bool = False
    state: str = "open"
    created_at: str = field(default_factory=iso)
    updated_at: str = field(default_factory=iso)


@dataclass
class IssueComment:
    id: int
    repo: str
    issue_number: int
    user: str
    body: str
    author_association: str = "NONE"
    created_at: str = field(default_factory=iso)
    updated_at: str = field(default_factory=iso)
    via_app: int | None = None


@dataclass
class Review:
    id: int
    repo: str
    number: int
    user: str
    body: str
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | PENDING
    commit_id: str
    submitted_at: str | None = field(default_factory=iso)
    author_association: str = "NONE"


@dataclass
class ReviewComment:
    id: int
    review_id: int
    repo: str
    number: int
    user: str
    path: str
    body: str
    commit_id: str
    diff_hunk: str
    line: int | None
    side: str | None
    start_line: int | None = None
    start_side: str | None = None
    position: int | None = None
    author_association: str = "NONE"
    created_at: str = field(default_factory=iso)


@dataclass
class CheckRun:
    id: int
    repo: str
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    app_id: int | None
    started_at: str
    completed_at: str | None = None
    external_id: str = ""
    details_url: str = ""
    output: dict[str, Any] = field(default_factory=dict)  # title, summary, text
    annotations: list[dict[str, Any]] = field(default_factory=list)
    updates: int = 0  # PATCH calls received


@dataclass
class RateWindow:
    """The primary rate limit of one token: `limit` requests per window ending at `reset`."""

    limit: int = 5000
    used: int = 0
    reset: float = field(default_factory=lambda: time.time() + 3600)

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    def roll(self, now: float) -> None:
        if now >= self.reset:
            self.used = 0
            self.reset = now + 3600


class World:
    """Everything the fake knows. Callers hold `lock` while they read-modify-write."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._ids = itertools.count(1001)
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.repos: dict[str, Repo] = {}
        self.pulls: dict[tuple[str, int], Pull] = {}
        self.comments: dict[int, IssueComment] = {}
        self.reviews: dict[int, Review] = {}
        self.review_comments: dict[int, ReviewComment] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.rates: dict[str, RateWindow] = {}  # by token value ("" = anonymous)

    def next_id(self) -> int:
        return next(self._ids)

    def user(self, login: str) -> User:
        if login not in self.users:
            bot = login.endswith("[bot]")
            self.users[login] = User(login, self.next_id(), "Bot" if bot else "User")
        return self.users[login]

    def reinstall(self, installation_id: int) -> int:
        """The App uninstalled and installed again (callers hold `lock`): the installation and its
        tokens are gone, a new one with a new id covers the same repositories; returns its id."""
        old = self.installations.pop(installation_id)
        for value in [v for v, t in self.tokens.items() if t.installation_id == installation_id]:
            del self.tokens[value]
        inst = Installation(
            self.next_id(), old.app_id, old.account, set(old.repositories), dict(old.permissions)
        )
        self.installations[inst.id] = inst
        return inst.id

    def repo_of_installation(self, token: Token, full_name: str) -> bool:
        if token.kind != "installation" or token.installation_id is None:
            return True
        inst = self.installations.get(token.installation_id)
        return inst is not None and full_name in inst.repositories

    def issue_comments(self, repo: str, number: int) -> list[IssueComment]:
        return sorted(
            (c for c in self.comments.values() if c.repo == repo and c.issue_number == number),
            key=lambda c: c.id,
        )

    def pull_reviews(self, repo: str, number: int) -> list[Review]:
        return sorted(
            (r for r in self.reviews.values() if r.repo == repo and r.number == number), key=lambda r: r.id
        )

    def pull_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        return sorted(
            (c for c in self.review_comments.values() if c.repo == repo and c.number == number),
            key=lambda c: c.id,
        )

    def repo_check_runs(self, repo: str, head_sha: str | None = None) -> list[CheckRun]:
        return sorted(
            (
                c
                for c in self.check_runs.values()
                if c.repo == repo and (head_sha is None or c.head_sha == head_sha)
            ),
            key=lambda c: c.id,
        )
