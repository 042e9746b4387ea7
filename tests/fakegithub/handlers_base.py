"""What every handler shares: the request and reply records, GitHub-shaped errors, lookups.

Behaviour follows GitHub where it matters to a review bot: comments are authored by the token's
user, a body over 65,536 characters is refused with 422, review comments must sit on lines of
the diff, check runs accept at most 50 annotations per call and `completed` needs a
conclusion, installation tokens cannot call `GET /user`, and only Apps create check runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fakegithub import gitdiff
from tests.fakegithub.state import Token, World

__all__ = ["Request", "Reply", "Problem", "HandlerBase", "BODY_LIMIT", "too_long"]

BODY_LIMIT = 65536
DOCS = "https://docs.github.com/rest"


@dataclass
class Request:
    method: str
    operation: str
    params: dict[str, str]
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    token: Token | None = None
    app_id: int | None = None  # set when authenticated with a valid App JWT


@dataclass
class Reply:
    status: int
    body: Any = None  # dict / list -> JSON, str -> text, None -> empty
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"
    paginate: bool = False  # body is the whole list; the server pages it


class Problem(Exception):
    """An error answer in GitHub's shape."""

    def __init__(self, status: int, message: str, errors: list[Any] | None = None, doc: str = DOCS) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"message": message, "documentation_url": doc, "status": str(status)}
        if errors is not None:
            self.body["errors"] = errors


def too_long(resource: str) -> Problem:
    return Problem(
        422,
        "Validation Failed",
        [
            {
                "resource": resource,
                "code": "custom",
                "field": "body",
                "message": f"body is too long (maximum is {BODY_LIMIT} characters)",
            }
        ],
    )


class HandlerBase:
    """Endpoint logic over one World; `urls` builds payloads, `options` holds fake-wide switches."""

    def __init__(self, world: World, urls: Any, options: Any) -> None:
        self.world = world
        self.urls = urls
        self.options = options

    # --- lookups --------------------------------------------------------------------------
    def _repo(self, req: Request) -> str:
        full = f"{req.params['owner']}/{req.params['repo']}"
        if full not in self.world.repos:
            raise Problem(404, "Not Found")
        if req.token is not None and not self.world.repo_of_installation(req.token, full):
            raise Problem(404, "Not Found")
        return full

    def _pull(self, req: Request) -> Any:
        full = self._repo(req)
        pr = self.world.pulls.get((full, int(req.params["number"])))
        if pr is None:
            raise Problem(404, "Not Found")
        return pr

    def _files(self, pr: Any) -> list[gitdiff.FileDiff]:
        bare = self.world.repos[pr.repo].bare_path
        if bare is None:
            return []
        return gitdiff.pr_files(bare, pr.base_sha, pr.head_sha, self.options.patch_limit)

    def _in_history(self, pr: Any, commit: str) -> bool:
        """`commit` is in the PR's head history (a force-push takes the old head out of it)."""
        bare = self.world.repos[pr.repo].bare_path
        return bare is None or gitdiff.is_ancestor(bare, commit, pr.head_sha)

    def _actor(self, req: Request) -> str:
        if req.token is None:
            raise Problem(401, "Requires authentication")
        return req.token.login

    def _association(self, repo: str, login: str) -> str:
        return "OWNER" if repo.split("/")[0] == login else "NONE"

    def _body(self, req: Request) -> dict[str, Any]:
        if not isinstance(req.body, dict):
            raise Problem(400, "Problems parsing JSON")
        return req.body

    def _app_of(self, req: Request) -> int | None:
        tok = req.token
        if tok is None or tok.installation_id is None:
            return None
        inst = self.world.installations.get(tok.installation_id)
        return inst.app_id if inst else None
