"""GitHub's JSON as reviewbot sends and reads it: the request bodies, and the fields of the answers it uses.

Shapes and field names follow GitHub's published REST description (components/schemas and the
operations' request bodies) and its GraphQL schema (tests/fakegithub holds the excerpts); only the
fields reviewbot uses are listed. `NotRequired` marks a field GitHub leaves out, `| None` one it
sends as null.

An answer arrives as a `JSONValue`; `answer` checks that it is an object and gives it its shape.
The records built from it (github.api) still read every field defensively (`.get`, `or ""`), as a
deleted account, a deleted fork or an older GitHub Enterprise may leave one out.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict, TypeVar, cast

from reviewbot.github.client import ApiError
from reviewbot.model.jsonvalue import JSONObject, JSONValue

__all__ = [
    "ActorJson",
    "AnnotationBody",
    "BranchJson",
    "CheckRunCreateBody",
    "CheckRunJson",
    "CheckRunListJson",
    "CheckRunOutputBody",
    "CheckRunOutputJson",
    "CheckRunUpdateBody",
    "CommentBody",
    "DiffEntryJson",
    "IssueCommentJson",
    "PermissionJson",
    "PullRequestJson",
    "RepositoryJson",
    "ResolveVariables",
    "walk",
    "ReviewBody",
    "ReviewCommentBody",
    "ReviewJson",
    "ThreadCommentJson",
    "ThreadJson",
    "ThreadsPageJson",
    "ThreadsVariables",
    "UserJson",
    "answer",
]

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# REST answers


class UserJson(TypedDict):  # simple-user
    login: str
    type: str


class RepositoryJson(TypedDict):  # repository
    full_name: str
    clone_url: str


class BranchJson(TypedDict):  # pull-request.head, pull-request.base
    sha: str
    ref: str
    repo: RepositoryJson | None  # null when the head's fork was deleted


class PullRequestJson(TypedDict):  # pull-request
    number: int
    title: str
    state: str
    draft: NotRequired[bool]
    user: UserJson
    author_association: str
    head: BranchJson
    base: BranchJson
    html_url: str
    changed_files: int


class IssueCommentJson(TypedDict):  # issue-comment
    id: int
    user: UserJson | None  # nullable-simple-user: a deleted account
    body: NotRequired[str]
    html_url: str
    created_at: str


class ReviewJson(TypedDict):  # pull-request-review
    id: int
    user: UserJson | None
    body: str
    commit_id: str | None
    state: str


class DiffEntryJson(TypedDict):  # diff-entry (pulls/list-files)
    filename: str
    previous_filename: NotRequired[str]
    status: str
    additions: int
    deletions: int
    patch: NotRequired[str]  # left out for a binary file, or one over GitHub's diff limit


class CheckRunOutputJson(TypedDict):  # check-run.output
    title: str | None
    summary: str | None
    text: str | None
    annotations_count: int


class CheckRunJson(TypedDict):  # check-run
    id: int
    name: str
    head_sha: str
    external_id: str | None
    output: CheckRunOutputJson


class CheckRunListJson(TypedDict):  # checks/list-for-ref
    total_count: int
    check_runs: list[CheckRunJson]


class PermissionJson(TypedDict):  # repos/get-collaborator-permission-level
    permission: str  # the legacy level: admin | write | read | none
    role_name: str  # the role, a custom one included


# ---------------------------------------------------------------------------------------------
# REST request bodies (keys in the order they are sent)


class CommentBody(TypedDict):  # issues/create-comment, issues/update-comment
    body: str


class ReviewCommentBody(TypedDict):  # pulls/create-review: comments[]
    path: str
    line: int
    side: str
    body: str


class ReviewBody(TypedDict):  # pulls/create-review
    commit_id: str
    body: str
    event: str
    comments: list[ReviewCommentBody]


class AnnotationBody(TypedDict):  # checks/create: output.annotations[]
    path: str
    start_line: int
    end_line: int
    annotation_level: str  # notice | warning | failure
    title: str
    message: str
    raw_details: NotRequired[str]


class CheckRunOutputBody(TypedDict):  # checks/create, checks/update: output
    title: str
    summary: str
    text: NotRequired[str]
    annotations: NotRequired[list[AnnotationBody]]  # at most 50 a request; GitHub appends them


class CheckRunCreateBody(TypedDict):  # checks/create
    name: str
    head_sha: str
    status: str
    conclusion: str
    external_id: str
    output: CheckRunOutputBody
    details_url: NotRequired[str]


class CheckRunUpdateBody(TypedDict, total=False):  # checks/update: every field optional
    name: str
    status: str
    conclusion: str
    output: CheckRunOutputBody
    details_url: str


# ---------------------------------------------------------------------------------------------
# GraphQL variables (github.threads) and answers


class ThreadsVariables(TypedDict):
    owner: str
    name: str
    number: int
    after: str | None


class ResolveVariables(TypedDict):
    threadId: str


# Actor of a review comment: `__typename` tells a Bot from a User of the same login.
ActorJson = TypedDict("ActorJson", {"__typename": str, "login": str})


class ThreadCommentJson(TypedDict):  # PullRequestReviewComment
    fullDatabaseId: str | None  # a BigInt, sent as a string
    author: ActorJson | None  # null: a deleted account
    body: str


class ThreadCommentsJson(TypedDict):  # PullRequestReviewCommentConnection
    nodes: list[ThreadCommentJson | None] | None


class ThreadJson(TypedDict):  # PullRequestReviewThread
    id: str
    isResolved: bool
    isOutdated: bool
    path: str
    line: int | None
    comments: ThreadCommentsJson


class PageInfoJson(TypedDict):
    hasNextPage: bool
    endCursor: str | None


class ThreadsPageJson(TypedDict):  # PullRequestReviewThreadConnection
    pageInfo: PageInfoJson
    nodes: list[ThreadJson | None] | None


def walk(data: JSONValue, *keys: str) -> JSONValue:
    """The value at `keys` inside `data`; None when a level is missing or not an object."""
    node = data
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def answer(data: JSONValue, shape: type[T], what: str) -> T:
    """`data` (GitHub's answer to `what`) as the object `shape` describes; ApiError when it is not an
    object at all (as `GitHubClient.paginate` refuses an answer that is not a list)."""
    if not isinstance(data, dict):
        raise ApiError(f"GitHub answered {what} with something that is not an object", None, data)
    found: JSONObject = data
    return cast(T, found)
