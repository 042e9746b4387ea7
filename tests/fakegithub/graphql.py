"""`POST /api/graphql`: the part of GitHub's GraphQL API reviewbot uses, checked against GitHub's schema.

Every request is parsed, validated and executed by graphql-core against
`github-graphql-excerpt.graphql` (an excerpt of GitHub's published schema, source cited there), so a
field, argument or type GitHub does not have is refused with GraphQL's own error, as GitHub refuses
it. What the resolvers model:

- `repository(owner, name).pullRequest(number).reviewThreads(first|last ≤ 100, after)`: one thread
  per review comment (the fake has no replies), oldest first; `first` or `last` is required, as on
  GitHub. `line` is the comment's line mapped onto the PR's current head with git (None and
  `isOutdated` when a later commit changed that line or removed the file).
- `resolveReviewThread(input: {threadId})`: marks the thread resolved by the caller; resolving a
  resolved thread answers it unchanged.
- Authors: a bot's GraphQL login is its App's slug, without the `[bot]` the REST API shows.
- Errors: HTTP 200 with `errors` (and `type: NOT_FOUND` for unknown repositories, pull requests
  and node ids), like GitHub.
"""

from __future__ import annotations

import base64
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from graphql import GraphQLError, GraphQLSchema, build_schema, graphql_sync

from tests.fakegithub import gitdiff
from tests.fakegithub.handlers_base import HandlerBase, Problem, Reply, Request
from tests.fakegithub.state import Pull, ReviewComment

__all__ = ["GraphQLHandlers", "SCHEMA_PATH", "schema", "is_mutation"]

SCHEMA_PATH = Path(__file__).with_name("github-graphql-excerpt.graphql")
_MUTATION = re.compile(r"^\s*(#[^\n]*\n\s*)*mutation\b")
_PAGE_LIMIT = 100


@lru_cache(maxsize=1)
def schema() -> GraphQLSchema:
    return build_schema(SCHEMA_PATH.read_text())


def is_mutation(body: Any) -> bool:
    """Whether a GraphQL request body changes anything (for the request log's reads and writes)."""
    return isinstance(body, dict) and bool(_MUTATION.match(str(body.get("query") or "")))


class _NotFound(GraphQLError):
    """GitHub's NOT_FOUND error (its `type` is added to the answer)."""


def _thread_id(comment_id: int) -> str:
    return "PRRT_" + base64.b64encode(f"thread:{comment_id}".encode()).decode().rstrip("=")


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:{index}".encode()).decode()


def _page(
    items: list[Any], field: str, first: int | None, last: int | None, after: str | None
) -> dict[str, Any]:
    """A GraphQL connection over `items`, with GitHub's rules for `first` / `last`."""
    if first is None and last is None:
        raise GraphQLError(
            f"You must provide a `first` or `last` value to properly paginate the `{field}` connection."
        )
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= _PAGE_LIMIT:
            raise GraphQLError(
                f"Requesting {value} records on the `{field}` connection exceeds the `{name}` limit of "
                f"{_PAGE_LIMIT} records."
            )
    start = 0
    if after is not None:
        try:
            start = int(base64.b64decode(after).decode().split(":", 1)[1]) + 1
        except (ValueError, IndexError) as exc:
            raise GraphQLError(f"`{after}` does not appear to be a valid cursor.") from exc
    end = len(items) if first is None else min(start + first, len(items))
    if last is not None:
        start = max(end - last, start)
    chosen = items[start:end]
    return {
        "nodes": chosen,
        "totalCount": len(items),
        "pageInfo": {
            "hasNextPage": end < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": _cursor(start) if chosen else None,
            "endCursor": _cursor(end - 1) if chosen else None,
        },
    }


class _Thread:
    """A PullRequestReviewThread: the thread one review comment started."""

    def __init__(self, handlers: GraphQLHandlers, comment: ReviewComment, pr: Pull) -> None:
        self._h, self._c, self._pr = handlers, comment, pr
        self.id = _thread_id(comment.id)
        self.path = comment.path
        self.originalLine = comment.line
        resolved_by = handlers.resolved_by.get(comment.id)
        self.isResolved = resolved_by is not None
        self.resolvedBy = (
            None if resolved_by is None else {"__typename": "User", "id": "U", "login": resolved_by}
        )

    def line(self, info: Any) -> int | None:
        bare = self._h.world.repos[self._pr.repo].bare_path
        if self._c.line is None or bare is None:
            return self._c.line
        return gitdiff.map_line(bare, self._c.commit_id, self._pr.head_sha, self._c.path, self._c.line)

    def isOutdated(self, info: Any) -> bool:  # noqa: N802 - GraphQL field name
        return self.line(info) is None

    def comments(
        self,
        info: Any,
        first: int | None = None,
        last: int | None = None,
        after: str | None = None,
        before: str | None = None,
        skip: int | None = None,
    ) -> dict[str, Any]:
        return _page([self._h.comment_node(self._c)], "comments", first, last, after)


class _Root:
    """Query and Mutation fields for one request."""

    def __init__(self, handlers: GraphQLHandlers, req: Request) -> None:
        self._h, self._req = handlers, req

    def repository(self, info: Any, owner: str, name: str, followRenames: bool = True) -> dict[str, Any]:  # noqa: N803
        full = f"{owner}/{name}"
        if full not in self._h.world.repos or not self._h.can_see(self._req, full):
            raise _NotFound(f"Could not resolve to a Repository with the name '{full}'.")

        def pull_request(info: Any, number: int) -> dict[str, Any]:
            pr = self._h.world.pulls.get((full, number))
            if pr is None:
                raise _NotFound(f"Could not resolve to a PullRequest with the number of {number}.")
            return self._h.pull_node(pr)

        return {"id": f"R_{full}", "pullRequest": pull_request}

    def resolveReviewThread(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: N802, A002
        thread_id = str(input["threadId"])
        comment = next(
            (c for c in self._h.world.review_comments.values() if _thread_id(c.id) == thread_id), None
        )
        if comment is None or not self._h.can_see(self._req, comment.repo):
            raise _NotFound(f"Could not resolve to a node with the global id of '{thread_id}'")
        self._h.resolved_by.setdefault(comment.id, self._h.actor_login(self._req))
        pr = self._h.world.pulls[(comment.repo, comment.number)]
        return {"clientMutationId": input.get("clientMutationId"), "thread": _Thread(self._h, comment, pr)}


class GraphQLHandlers(HandlerBase):
    def __init__(self, world: Any, urls: Any, options: Any) -> None:
        super().__init__(world, urls, options)
        # Review comment id -> who resolved the thread it starts (kept here: REST has no threads).
        self.resolved_by: dict[int, str] = {}

    def graphql(self, req: Request) -> Reply:
        body = self._body(req)
        query, variables = body.get("query"), body.get("variables") or {}
        if not isinstance(query, str) or not isinstance(variables, dict):
            raise Problem(400, "A query attribute must be specified and must be a string.")
        result = graphql_sync(schema(), query, root_value=_Root(self, req), variable_values=variables)
        answer: dict[str, Any] = {}
        if result.data is not None:
            answer["data"] = result.data
        if result.errors:
            answer["errors"] = [
                {**e.formatted, **({"type": "NOT_FOUND"} if isinstance(e.original_error, _NotFound) else {})}
                for e in result.errors
            ]
        return Reply(200, answer)

    # --- what the resolvers share -------------------------------------------------------------
    def can_see(self, req: Request, full: str) -> bool:
        return req.token is None or self.world.repo_of_installation(req.token, full)

    def actor_login(self, req: Request) -> str:
        return self._actor(req).removesuffix("[bot]")

    def pull_node(self, pr: Pull) -> dict[str, Any]:
        comments = self.world.pull_review_comments(pr.repo, pr.number)

        def review_threads(
            info: Any,
            first: int | None = None,
            last: int | None = None,
            after: str | None = None,
            before: str | None = None,
        ) -> dict[str, Any]:
            return _page([_Thread(self, c, pr) for c in comments], "reviewThreads", first, last, after)

        return {"id": f"PR_{pr.id}", "number": pr.number, "reviewThreads": review_threads}

    def comment_node(self, c: ReviewComment) -> dict[str, Any]:
        user = self.world.user(c.user)
        bot = user.type == "Bot"
        author = {
            "__typename": "Bot" if bot else "User",
            "id": f"{'BOT' if bot else 'U'}_{user.id}",
            "login": c.user.removesuffix("[bot]") if bot else c.user,
        }
        return {
            "id": f"PRRC_{c.id}",
            "fullDatabaseId": str(c.id),
            "databaseId": c.id,
            "author": author,
            "body": c.body,
            "path": c.path,
            "line": c.line,
            "originalLine": c.line,
        }
