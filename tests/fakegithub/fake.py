"""`FakeGitHub`: start the server, seed the world, script faults, read what happened."""

from __future__ import annotations

import copy
import secrets
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.fakegithub.faults import Fault
from tests.fakegithub.payloads import Urls
from tests.fakegithub.server import Options, RequestRecord, Server
from tests.fakegithub.state import (
    App,
    CheckRun,
    Installation,
    IssueComment,
    Pull,
    Repo,
    Review,
    ReviewComment,
    Token,
    World,
    iso,
)

__all__ = ["FakeGitHub"]


class FakeGitHub:
    """A GitHub REST API on 127.0.0.1 with state, faults and a request log.

    Use as a context manager (or call `start`/`stop`). `api_url` is what a client passes as
    its base URL (`http://127.0.0.1:<port>/api/v3`).
    """

    def __init__(self, **options: Any) -> None:
        self.world = World()
        self.options = Options(**options)
        self.server = Server(self.world, lambda api, web: Urls(api, web, self.world), self.options)
        self.api_url = self.server.api_url
        self.web_url = self.server.web_url

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- seeding -------------------------------------------------------------------------------
    def add_user(self, login: str, *, token: str | None = None, type: str = "User") -> str:  # noqa: A002
        """Create a user; returns a personal access token acting as them."""
        with self.world.lock:
            self.world.user(login).type = type
            value = token or f"ghp_{secrets.token_hex(18)}"
            self.world.tokens[value] = Token(value, login, "pat")
        return value

    def add_app(self, app_id: int, slug: str, public_key_pem: str, *, owner: str = "acme") -> App:
        with self.world.lock:
            self.world.user(owner)
            app = App(app_id, slug, slug.replace("-", " ").title(), owner, public_key_pem)
            self.world.apps[app_id] = app
            self.world.user(f"{slug}[bot]")
        return app

    def add_installation(self, app_id: int, account: str, repos: list[str]) -> int:
        with self.world.lock:
            inst = Installation(self.world.next_id(), app_id, account, set(repos))
            self.world.installations[inst.id] = inst
        return inst.id

    def reinstall(self, installation_id: int) -> int:
        """The App uninstalled and installed again on the same account and repositories: the old
        installation and its tokens are gone (401 Bad credentials; 404 on its token exchange), the
        new one has a new id, which is returned."""
        with self.world.lock:
            return self.world.reinstall(installation_id)

    def set_installation_permission(self, installation_id: int, name: str, level: str) -> None:
        """E.g. ("checks", "read"): the installation may no longer create check runs (403)."""
        with self.world.lock:
            self.world.installations[installation_id].permissions[name] = level

    def add_repo(
        self,
        full_name: str,
        bare_path: Path | None = None,
        *,
        default_branch: str = "main",
        fork_of: str | None = None,
        private: bool = False,
        clone_url: str | None = None,
    ) -> Repo:
        with self.world.lock:
            self.world.user(full_name.split("/")[0])
            repo = Repo(
                full_name, self.world.next_id(), bare_path, default_branch, private, fork_of, clone_url
            )
            self.world.repos[full_name] = repo
        return repo

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        user: str,
        head_sha: str,
        base_sha: str | None = None,
        base_ref: str = "main",
        head_ref: str = "feature",
        head_repo: str | None = None,
        title: str = "A change",
        body: str = "",
        author_association: str = "CONTRIBUTOR",
        draft: bool = False,
    ) -> Pull:
        """Open a PR; `refs/pull/<n>/head` is set in the bare repository like GitHub does."""
        with self.world.lock:
            r = self.world.repos[repo]
            if base_sha is None:
                base_sha = self._git(r, "rev-parse", f"refs/heads/{base_ref}")
            self.world.user(user)
            pr = Pull(
                repo,
                number,
                self.world.next_id(),
                title,
                body,
                user,
                author_association,
                base_ref,
                base_sha,
                head_ref,
                head_sha,
                head_repo or repo,
                draft,
            )
            self.world.pulls[(repo, number)] = pr
            if author_association in ("OWNER", "MEMBER", "COLLABORATOR"):
                # What such an author usually has; tests of the permission rule seed it explicitly.
                r.collaborators.setdefault(user, "admin" if author_association == "OWNER" else "write")
            self._git(r, "update-ref", f"refs/pull/{number}/head", head_sha)
        return pr

    def set_head(self, repo: str, number: int, head_sha: str, base_sha: str | None = None) -> None:
        """A new push to the PR: move its head (and optionally its base)."""
        with self.world.lock:
            pr = self.world.pulls[(repo, number)]
            pr.head_sha = head_sha
            if base_sha is not None:
                pr.base_sha = base_sha
            pr.updated_at = iso()
            self._git(self.world.repos[repo], "update-ref", f"refs/pull/{number}/head", head_sha)

    def set_permission(self, repo: str, login: str, role: str) -> None:
        """Make `login` a collaborator of `repo` with `role` (admin, maintain, write, triage, read)."""
        with self.world.lock:
            self.world.user(login)
            self.world.repos[repo].collaborators[login] = role

    def add_comment(self, repo: str, number: int, user: str, body: str) -> int:
        with self.world.lock:
            c = IssueComment(self.world.next_id(), repo, number, user, body)
            self.world.comments[c.id] = c
        return c.id

    def exhaust_rate_limit(self, token: str, reset_in: float) -> None:
        """The primary limit of `token` is used up until `reset_in` seconds from now."""
        with self.world.lock:
            window = self.world.rates.setdefault(token, self.options.new_rate())
            window.used = window.limit
            window.reset = time.time() + reset_in

    def inject(self, **fault: Any) -> Fault:
        """Add a fault rule (see tests.fakegithub.faults.Fault for the fields)."""
        return self.server.faults.add(Fault(**fault))

    @property
    def faults(self) -> Any:
        return self.server.faults

    # --- inspection (snapshots: later requests do not change what a test already holds) ------
    def comments(self, repo: str, number: int) -> list[IssueComment]:
        with self.world.lock:
            return copy.deepcopy(self.world.issue_comments(repo, number))

    def reviews(self, repo: str, number: int) -> list[Review]:
        with self.world.lock:
            return copy.deepcopy(self.world.pull_reviews(repo, number))

    def review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        with self.world.lock:
            return copy.deepcopy(self.world.pull_review_comments(repo, number))

    def check_runs(self, repo: str, head_sha: str | None = None) -> list[CheckRun]:
        with self.world.lock:
            return copy.deepcopy(self.world.repo_check_runs(repo, head_sha))

    @property
    def log(self) -> list[RequestRecord]:
        return list(self.server.log)

    def calls(self, operation: str | None = None, method: str | None = None) -> list[RequestRecord]:
        return [
            r
            for r in self.server.log
            if (operation is None or r.operation == operation) and (method is None or r.method == method)
        ]

    def writes(self, *, auth: bool = True) -> list[RequestRecord]:
        """Non-GET requests; `auth=False` leaves out the App token exchange (it changes nothing on a repo)."""
        return [r for r in self.server.log if r.write and (auth or not r.operation.startswith("apps/"))]

    def reads(self) -> list[RequestRecord]:
        return [r for r in self.server.log if not r.write]

    def clear_log(self) -> None:
        self.server.log.clear()

    @staticmethod
    def _git(repo: Repo, *args: str) -> str:
        if repo.bare_path is None:
            return "0" * 40
        out = subprocess.run(["git", *args], cwd=repo.bare_path, capture_output=True, text=True, check=True)
        return out.stdout.strip()
