"""Review threads follow findings: reviewbot's inline comments, found again through GitHub's GraphQL API.

Each inline comment reviewbot posts ends with `<!-- reviewbot:finding <fingerprint> -->`. The PR's
review threads (`pullRequest.reviewThreads`; REST has no threads and cannot resolve them) are read
back and matched to findings by that marker, on threads whose first comment the bot wrote:

- a finding fixed this round gets its open thread resolved (`resolveReviewThread`);
- a finding that already has an open thread gets no second inline comment, wherever it now is: while
  GitHub can map the commented line onto the new head the thread moves with the code, and when it
  cannot, GitHub shows the thread as outdated next to the code it was about.

The fingerprint does not depend on the line, which is what lets a thread follow a finding that moved.
Only fields of GitHub's published schema are asked for (tests/fakegithub/github-graphql-excerpt.graphql
holds them with their source); `databaseId` is deprecated there, so the comment id is `fullDatabaseId`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from reviewbot.github.client import ApiError, GitHubClient, Headers
from reviewbot.github.payloads import (
    ActorJson,
    ResolveVariables,
    ThreadJson,
    ThreadsPageJson,
    ThreadsVariables,
    answer,
    walk,
)
from reviewbot.model.jsonvalue import JSONValue
from reviewbot.model.review import Review

__all__ = [
    "THREADS_QUERY",
    "RESOLVE_MUTATION",
    "ReviewThread",
    "finding_marker",
    "parse_threads_page",
    "list_bot_threads",
    "resolve_thread",
    "threads_for_round",
]

log = logging.getLogger(__name__)

THREADS_QUERY = """\
query ReviewbotThreads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          isOutdated
          path
          line
          comments(first: 1) {
            nodes { fullDatabaseId author { __typename login } body }
          }
        }
      }
    }
  }
}
"""

RESOLVE_MUTATION = """\
mutation ReviewbotResolveThread($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}
"""

_MARKER = re.compile(r"<!-- reviewbot:finding ([0-9a-f]{6,64}) -->")
_MAX_PAGES = 50  # 5,000 threads: far beyond any PR GitHub renders; a loop guard, not a limit in practice


def finding_marker(fingerprint: str) -> str:
    """The hidden line that ties an inline comment (and its thread) to a finding."""
    return f"<!-- reviewbot:finding {fingerprint} -->"


@dataclass(frozen=True)
class ReviewThread:
    id: str  # GraphQL node id, what resolveReviewThread takes
    fingerprint: str  # of the finding its first comment is about
    resolved: bool
    outdated: bool  # GitHub could not map the commented line onto the current head
    path: str
    line: int | None  # on the current head; None when outdated
    comment_id: int | None  # the REST id of the first comment


def _by_bot(author: ActorJson | None, bot_login: str) -> bool:
    """Whether a GraphQL comment author is the bot reviewbot posts as (`bot_login`, as REST spells it)."""
    if not isinstance(author, dict):
        return False  # a deleted account
    login, kind = str(author.get("login") or "").lower(), author.get("__typename")
    if bot_login.lower().endswith("[bot]"):
        # GraphQL names an App's bot by its slug, without the "[bot]" REST adds; anyone may register a
        # user account under that slug, so the author must be a Bot too.
        return kind == "Bot" and login == bot_login.lower().removesuffix("[bot]")
    return login == bot_login.lower()  # a token's user


def _thread(node: ThreadJson | None, bot_login: str) -> ReviewThread | None:
    if not isinstance(node, dict):
        return None
    connection = node.get("comments")
    comments = (connection.get("nodes") if connection else None) or []
    first = comments[0] if comments and isinstance(comments[0], dict) else None
    if first is None:
        return None
    found = _MARKER.findall(str(first.get("body") or ""))
    if not found or not _by_bot(first.get("author"), bot_login):
        return None  # someone else's thread, or a pasted marker: never touched
    raw_id = first.get("fullDatabaseId")
    line = node.get("line")
    return ReviewThread(
        id=str(node["id"]),
        fingerprint=found[-1],
        resolved=bool(node.get("isResolved")),
        outdated=bool(node.get("isOutdated")),
        path=str(node.get("path") or ""),
        line=line if isinstance(line, int) else None,
        comment_id=int(raw_id) if isinstance(raw_id, (int, str)) and str(raw_id).isdigit() else None,
    )


def parse_threads_page(data: JSONValue, bot_login: str) -> tuple[list[ReviewThread], str | None]:
    """The bot's threads on one page of THREADS_QUERY's answer, and the cursor of the next page."""
    found = walk(data, "data", "repository", "pullRequest", "reviewThreads")
    if not isinstance(found, dict):
        raise ApiError("GitHub answered the review-thread query without the pull request's threads", None)
    connection = answer(found, ThreadsPageJson, "the review-thread query")
    threads = [t for t in (_thread(n, bot_login) for n in connection.get("nodes") or []) if t is not None]
    info = connection.get("pageInfo")
    after = info.get("endCursor") if info and info.get("hasNextPage") else None
    return threads, str(after) if after else None


def list_bot_threads(client: GitHubClient, repo: str, pr: int, bot_login: str) -> list[ReviewThread]:
    """Every review thread of PR `pr` that the bot started for a finding, oldest first."""
    owner, name = repo.split("/", 1)
    out: list[ReviewThread] = []
    after: str | None = None
    for _ in range(_MAX_PAGES):
        variables = ThreadsVariables(owner=owner, name=name, number=pr, after=after)

        def send(v: ThreadsVariables = variables) -> tuple[Headers, JSONValue]:
            out: tuple[Headers, JSONValue] = client.requester.graphql_query(THREADS_QUERY, dict(v))
            return out

        _, data = client.call("POST", "POST graphql reviewThreads", send, read=True)
        threads, after = parse_threads_page(data, bot_login)
        out.extend(threads)
        if after is None:
            break
    return out


def resolve_thread(client: GitHubClient, thread_id: str) -> bool:
    """Resolve one thread; True when GitHub says it is resolved. Resolving twice is harmless, so a
    failed attempt is simply sent again."""

    def send() -> tuple[Headers, JSONValue]:
        variables = ResolveVariables(threadId=thread_id)
        out: tuple[Headers, JSONValue] = client.requester.graphql_query(RESOLVE_MUTATION, dict(variables))
        return out

    _, data = client.call("POST", "POST graphql resolveReviewThread", send, read=False)
    thread = walk(data, "data", "resolveReviewThread", "thread")
    return isinstance(thread, dict) and bool(thread.get("isResolved"))


def threads_for_round(
    client: GitHubClient, review: Review, repo: str, pr: int, bot_login: str
) -> tuple[list[ReviewThread], str]:
    """The bot's threads when this round may act on one, and a note when they could not be read.

    A round with nothing fixed (no thread to resolve) and nothing new (no comment to hold back)
    does not ask. A round 1 with new findings does: "round 1" may only mean that the summary comment
    holding the state was deleted while the bot's threads are still there.
    """
    fixed = bool(review.round.fixed)
    new = any(f.state == "new" for f in review.findings)
    if not (fixed or new):
        return [], ""
    try:
        return list_bot_threads(client, repo, pr, bot_login), ""
    except ApiError as exc:
        # Threads are a courtesy: a round whose report and check run can be published is published.
        log.warning("%s #%d: review threads not read: %s", repo, pr, exc)
        return [], f"review threads could not be read ({exc}); fixed findings' threads stay open"
