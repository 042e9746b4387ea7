"""The one error hierarchy of reviewbot.

ReviewbotError
 +-- UsageError          bad arguments or configuration (exit 2)
 +-- EnvironmentProblem  git missing, not a repository, unknown revision (exit 2)
 +-- GitError            a git command failed while reviewing (exit 3)
 +-- StoreError          the rounds database could not be used (exit 3)
 +-- GitHubError         the GitHub API failed after retries (exit 3)
      +-- RateLimited    the primary rate limit is exhausted and the reset is far away
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails  # pydantic's own dependency, for the type only

__all__ = [
    "ReviewbotError",
    "UsageError",
    "EnvironmentProblem",
    "GitError",
    "StoreError",
    "GitHubError",
    "RateLimited",
    "validation_problem",
]


class ReviewbotError(Exception):
    """Root of every error reviewbot raises on purpose; the message tells the user what to do."""

    exit_code = 3


class UsageError(ReviewbotError):
    exit_code = 2


class EnvironmentProblem(ReviewbotError):
    exit_code = 2


class GitError(ReviewbotError):
    exit_code = 3


class StoreError(ReviewbotError):
    exit_code = 3


class GitHubError(ReviewbotError):
    exit_code = 3


class RateLimited(GitHubError):
    def __init__(self, message: str, reset_at: float | None = None) -> None:
        super().__init__(message)
        self.reset_at = reset_at


def validation_problem(error: ErrorDetails) -> str:
    """What is wrong with a value, in words that do not repeat the value."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "must be a whole number"
    if kind in ("bool_parsing", "bool_type"):
        return "must be true or false"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return "must be a number of seconds"
    if kind == "greater_than_equal":
        return "must not be negative" if ctx.get("ge") == 0 else f"must be at least {ctx.get('ge')}"
    if kind == "value_error":
        return str(ctx.get("error", "is not valid"))
    if kind in ("string_type", "path_type"):
        return "must be text" if kind == "string_type" else "must be a path"
    return "is not valid"
